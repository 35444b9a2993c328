// What the runs view asks `mkb run` to do, as plain data, and the command line that says it.
#pragma once

#include "core/protocol/run_options.h"

#include <QString>
#include <QStringList>

namespace mkb::gui {

/// The form's view of one `mkb run`: the options the runs view offers, as Qt values. Names, defaults and the
/// arguments come from mkb run's one declaration (core/protocol/run_options.h): see runOptionsOf and
/// runRequestOf.
struct RunRequest {
    QString model;              // --model
    QString driver;             // --driver: reference, command or chat
    QString driverSettingsJson; // written to a file and passed as --driver-config; empty = no settings
    QString problems;           // --problems GLOB
    QString dslA;               // --dsls A,B
    QString dslB;
    int replicates = mkb::runOptionDefaults().replicates;
    QStringList suites;  // --suite (repeatable); empty = the shipped suite
    QStringList dslDirs; // --dsl-dir (repeatable)
    QString device;      // --device; empty = mkb's default (cuda:0)
    QString devices;     // --devices: "all" or a comma list (cuda:0,cuda:2); empty = the one device above
    QString python;      // --python; empty = $MKB_PYTHON, else python3
    double wallClockSeconds = mkb::runOptionDefaults().wallClockSeconds;
    int submissions = mkb::runOptionDefaults().submissions;
    int maxKernelBytes = mkb::runOptionDefaults().maxKernelBytes;
    int concurrency = mkb::runOptionDefaults().concurrency;
    double gradeTimeoutSeconds = mkb::runOptionDefaults().gradeTimeoutSeconds;
    int timingDraws = mkb::runOptionDefaults().timingDraws;
    bool rerunStale = false;
    QString boundary = QString::fromStdString(mkb::runOptionDefaults().boundary); // mkb or strict
    QString executor = QString::fromStdString(mkb::runOptionDefaults().executor); // local, or slurm
    QString partition;    // --partition (slurm); empty = the cluster's default
    QString sharedFolder; // --shared DIR (slurm): seen by this host and every node

    bool operator==(const RunRequest&) const = default;
};

/// The `mkb run` options the request stands for (trimmed; no --device beside --devices, no Slurm options for a local
/// run, an empty boundary the default one). Store, progress and the driver-config file are the caller's.
mkb::RunOptions runOptionsOf(const RunRequest& request);

/// The request showing these options (the driver settings are not among them: see runRequestFromArguments).
RunRequest runRequestOf(const mkb::RunOptions& options);

/// A one-line reason the request cannot be run ("the model needs a name"), or "" when it is complete.
QString runRequestProblem(const RunRequest& request);

/// Why `devices` cannot be graded on (core's own parseDeviceList message, as `mkb run --devices` says it), or ""
/// when it names devices or is empty; a list with the Slurm executor is refused, as mkb run refuses it.
QString runDevicesProblem(const QString& devices, const QString& executor);

/// The arguments after `mkb`: "run", then runOptionsOf(request) written by the declaration (core's runArguments)
/// with --store STORE --progress json, and --driver-config only when driverConfigFile is not empty.
QStringList mkbRunArguments(const RunRequest& request, const QString& storePath, const QString& driverConfigFile);

/// The request that mkbRunArguments would have turned into these arguments, read leniently by the declaration
/// (options it does not know, and values that do not fit, are ignored); the driver settings are read from the
/// --driver-config file when it still exists.
RunRequest runRequestFromArguments(const QStringList& arguments);

/// The mkb executable: $MKB_CLI when set, else `mkb` beside the running program, else `mkb` on PATH; "" when none.
QString locateMkb();

} // namespace mkb::gui
