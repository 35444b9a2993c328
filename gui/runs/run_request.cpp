// Turns a RunRequest into `mkb run` arguments and finds the mkb program to run them with.
#include "gui/runs/run_request.h"

#include "core/grader_client/grader_pool.h"
#include "core/vocabulary/boundary.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace mkb::gui {

QString runDevicesProblem(const QString& devices, const QString& executor) {
    if (devices.trimmed().isEmpty()) {
        return {};
    }
    if (executor.trimmed() == QLatin1String("slurm")) {
        return QCoreApplication::translate("RunRequest", "--devices applies to the local executor only: each Slurm "
                                                         "job holds one GPU; clear the Devices field");
    }
    auto listed = parseDeviceList(devices.trimmed().toStdString(), visibleCudaDeviceCount());
    return listed ? QString() : QString::fromStdString(listed.error().message);
}

QString runRequestProblem(const RunRequest& request) {
    if (request.model.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest", "the model needs a name (--model)");
    }
    if (request.driver.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest", "choose a driver: reference, command or chat");
    }
    if (request.problems.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest", "name the problems, e.g. * or p0[1-3] (--problems)");
    }
    if (request.dslA.trimmed().isEmpty() || request.dslB.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest", "choose both DSLs of the pair (--dsls A,B)");
    }
    if (request.dslA.trimmed() == request.dslB.trimmed()) {
        return QCoreApplication::translate("RunRequest", "the DSL pair needs two different DSLs");
    }
    const QString boundary = request.boundary.trimmed();
    if (!boundary.isEmpty() && !mkb::parseBoundary(boundary.toStdString()).ok()) {
        return QCoreApplication::translate("RunRequest", "the implementation boundary is mkb or strict, not '%1' "
                                                         "(--boundary)")
            .arg(boundary);
    }
    const QString executor = request.executor.trimmed();
    if (executor != QLatin1String("local") && executor != QLatin1String("slurm")) {
        return QCoreApplication::translate("RunRequest", "the executor is local or slurm, not '%1'").arg(executor);
    }
    if (executor == QLatin1String("slurm") && request.sharedFolder.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest", "a Slurm run needs a shared folder that this host and every "
                                                         "node see at the same path (--shared DIR)");
    }
    if (!request.devices.trimmed().isEmpty() && !request.device.trimmed().isEmpty()) {
        return QCoreApplication::translate("RunRequest",
                                           "give either one device (--device) or the devices (--devices), "
                                           "not both");
    }
    if (QString devices = runDevicesProblem(request.devices, executor); !devices.isEmpty()) {
        return devices;
    }
    if (!request.driverSettingsJson.trimmed().isEmpty()) {
        QJsonParseError error;
        const QJsonDocument settings = QJsonDocument::fromJson(request.driverSettingsJson.toUtf8(), &error);
        if (error.error != QJsonParseError::NoError || !settings.isObject()) {
            return QCoreApplication::translate("RunRequest", "the driver settings are not a JSON object: %1")
                .arg(error.error != QJsonParseError::NoError ? error.errorString() : QStringLiteral("expected {…}"));
        }
    }
    return {};
}

namespace {

std::string trimmedText(const QString& text) {
    return text.trimmed().toStdString();
}

std::vector<std::string> texts(const QStringList& list) {
    std::vector<std::string> out;
    for (const QString& item : list) {
        out.push_back(item.toStdString());
    }
    return out;
}

QStringList qtexts(const std::vector<std::string>& list) {
    QStringList out;
    for (const std::string& item : list) {
        out << QString::fromStdString(item);
    }
    return out;
}

} // namespace

mkb::RunOptions runOptionsOf(const RunRequest& request) {
    mkb::RunOptions options = mkb::runOptionDefaults();
    options.model = trimmedText(request.model);
    options.driver = trimmedText(request.driver);
    options.problems = trimmedText(request.problems);
    options.dsls = trimmedText(request.dslA) + "," + trimmedText(request.dslB);
    options.replicates = request.replicates;
    options.suites = texts(request.suites);
    options.dslDirs = texts(request.dslDirs);
    options.devices = trimmedText(request.devices); // mkb run parses it, as for the CLI
    options.device = options.devices.empty() ? trimmedText(request.device) : std::string();
    options.python = trimmedText(request.python);
    options.wallClockSeconds = request.wallClockSeconds;
    options.submissions = request.submissions;
    options.maxKernelBytes = request.maxKernelBytes;
    options.concurrency = request.concurrency;
    options.gradeTimeoutSeconds = request.gradeTimeoutSeconds;
    options.timingDraws = request.timingDraws;
    options.rerunStale = request.rerunStale;
    if (!request.boundary.trimmed().isEmpty()) {
        options.boundary = trimmedText(request.boundary);
    }
    if (request.executor.trimmed() == QLatin1String("slurm")) {
        options.executor = "slurm";
        options.shared = trimmedText(request.sharedFolder);
        options.partition = trimmedText(request.partition);
    }
    return options;
}

RunRequest runRequestOf(const mkb::RunOptions& options) {
    RunRequest request;
    request.model = QString::fromStdString(options.model);
    request.driver = QString::fromStdString(options.driver);
    request.problems = QString::fromStdString(options.problems);
    const QString dsls = QString::fromStdString(options.dsls);
    request.dslA = dsls.section(QLatin1Char(','), 0, 0);
    request.dslB = dsls.section(QLatin1Char(','), 1);
    request.replicates = options.replicates;
    request.suites = qtexts(options.suites);
    request.dslDirs = qtexts(options.dslDirs);
    request.device = QString::fromStdString(options.device);
    request.devices = QString::fromStdString(options.devices);
    request.python = QString::fromStdString(options.python);
    request.wallClockSeconds = options.wallClockSeconds;
    request.submissions = options.submissions;
    request.maxKernelBytes = options.maxKernelBytes;
    request.concurrency = options.concurrency;
    request.gradeTimeoutSeconds = options.gradeTimeoutSeconds;
    request.timingDraws = options.timingDraws;
    request.rerunStale = options.rerunStale;
    request.boundary = QString::fromStdString(options.boundary);
    request.executor = QString::fromStdString(options.executor);
    request.partition = QString::fromStdString(options.partition);
    request.sharedFolder = QString::fromStdString(options.shared);
    return request;
}

QStringList mkbRunArguments(const RunRequest& request, const QString& storePath, const QString& driverConfigFile) {
    mkb::RunOptions options = runOptionsOf(request);
    options.driverConfig = driverConfigFile.toStdString();
    options.store = storePath.toStdString();
    options.progress = "json";
    return QStringList{QStringLiteral("run")} + qtexts(mkb::runArguments(options));
}

RunRequest runRequestFromArguments(const QStringList& arguments) {
    const mkb::ParsedOptions parsed = mkb::parseOptionsLeniently(mkb::runOptionDeclarations(), texts(arguments));
    const mkb::RunOptions options = mkb::optionsFrom(mkb::runOptionTable(), parsed);
    RunRequest request = runRequestOf(options);
    if (!options.driverConfig.empty()) {
        QFile file(QString::fromStdString(options.driverConfig));
        if (file.open(QIODevice::ReadOnly)) {
            request.driverSettingsJson = QString::fromUtf8(file.readAll());
        }
    }
    return request;
}

QString locateMkb() {
    const QString fromEnvironment = qEnvironmentVariable("MKB_CLI");
    if (!fromEnvironment.isEmpty() && QFileInfo(fromEnvironment).isExecutable()) {
        return QFileInfo(fromEnvironment).absoluteFilePath();
    }
    const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("mkb"));
    if (QFileInfo(beside).isExecutable() && QFileInfo(beside).isFile()) {
        return beside;
    }
    return QStandardPaths::findExecutable(QStringLiteral("mkb"));
}

} // namespace mkb::gui
