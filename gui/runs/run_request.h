// What the runs view asks `mkb run` to do, as plain data, and the command line that says it.
#pragma once

#include "core/wire/grade_request.h"

#include <QString>
#include <QStringList>

namespace mkb::gui {

/// The settings of one `mkb run`, field for field as `mkb run --help` names them.
struct RunRequest {
    QString model;              // --model
    QString driver;             // --driver: reference, command or chat
    QString driverSettingsJson; // written to a file and passed as --driver-config; empty = no settings
    QString problems;           // --problems GLOB
    QString dslA;               // --dsls A,B
    QString dslB;
    int replicates = 1;
    QStringList suites;  // --suite (repeatable); empty = the shipped suite
    QStringList dslDirs; // --dsl-dir (repeatable)
    QString device;      // --device; empty = mkb's default (cuda:0)
    QString devices;     // --devices: "all" or a comma list (cuda:0,cuda:2); empty = the one device above
    QString python;      // --python; empty = $MKB_PYTHON, else python3
    double wallClockSeconds = 2400;
    int submissions = 10;
    int maxKernelBytes = mkb::GradeSettings{}.maxKernelBytes;
    int concurrency = 2;
    double gradeTimeoutSeconds = mkb::GradeSettings{}.timeoutS;
    int timingDraws = mkb::GradeSettings{}.timingDraws;
    bool rerunStale = false;
    QString boundary = QString::fromLatin1(
        mkb::kBoundaryMkb.data(), mkb::kBoundaryMkb.size()); // --boundary: mkb (MetaKernelBench's rule) or strict
    QString executor = QStringLiteral("local");              // --executor: local, or slurm (one Slurm job per trial)
    QString partition;                                       // --partition (slurm); empty = the cluster's default
    QString sharedFolder;                                    // --shared DIR (slurm): seen by this host and every node
};

/// A one-line reason the request cannot be run ("the model needs a name"), or "" when it is complete.
QString runRequestProblem(const RunRequest& request);

/// Why `devices` cannot be graded on (core's own parseDeviceList message, as `mkb run --devices` says it), or ""
/// when it names devices or is empty; a list with the Slurm executor is refused, as mkb run refuses it.
QString runDevicesProblem(const QString& devices, const QString& executor);

/// The arguments after `mkb`: run --model … --store STORE --progress json; --driver-config only when
/// driverConfigFile is not empty; --devices LIST instead of --device when devices is set; --boundary B; --executor
/// slurm --shared DIR [--partition P] for a Slurm run.
QStringList mkbRunArguments(const RunRequest& request, const QString& storePath, const QString& driverConfigFile);

/// The request that mkbRunArguments would have turned into these arguments (options it does not know are ignored);
/// the driver settings are read from the --driver-config file when it still exists.
RunRequest runRequestFromArguments(const QStringList& arguments);

/// The mkb executable: $MKB_CLI when set, else `mkb` beside the running program, else `mkb` on PATH; "" when none.
QString locateMkb();

} // namespace mkb::gui
