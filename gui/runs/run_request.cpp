// Turns a RunRequest into `mkb run` arguments and finds the mkb program to run them with.
#include "gui/runs/run_request.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

namespace mkb::gui {

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

QStringList mkbRunArguments(const RunRequest& request, const QString& storePath, const QString& driverConfigFile) {
    QStringList args = {QStringLiteral("run"), QStringLiteral("--model"), request.model.trimmed(),
                        QStringLiteral("--driver"), request.driver.trimmed()};
    if (!driverConfigFile.isEmpty()) {
        args << QStringLiteral("--driver-config") << driverConfigFile;
    }
    args << QStringLiteral("--problems") << request.problems.trimmed() << QStringLiteral("--dsls")
         << request.dslA.trimmed() + QLatin1Char(',') + request.dslB.trimmed() << QStringLiteral("--replicates")
         << QString::number(request.replicates);
    for (const QString& suite : request.suites) {
        args << QStringLiteral("--suite") << suite;
    }
    for (const QString& dir : request.dslDirs) {
        args << QStringLiteral("--dsl-dir") << dir;
    }
    if (!request.device.trimmed().isEmpty()) {
        args << QStringLiteral("--device") << request.device.trimmed();
    }
    if (!request.python.trimmed().isEmpty()) {
        args << QStringLiteral("--python") << request.python.trimmed();
    }
    args << QStringLiteral("--wall-clock") << QString::number(request.wallClockSeconds)
         << QStringLiteral("--submissions") << QString::number(request.submissions)
         << QStringLiteral("--max-kernel-bytes") << QString::number(request.maxKernelBytes)
         << QStringLiteral("--concurrency") << QString::number(request.concurrency) << QStringLiteral("--grade-timeout")
         << QString::number(request.gradeTimeoutSeconds) << QStringLiteral("--timing-draws")
         << QString::number(request.timingDraws);
    if (request.rerunStale) {
        args << QStringLiteral("--rerun-stale");
    }
    args << QStringLiteral("--store") << storePath << QStringLiteral("--progress") << QStringLiteral("json");
    return args;
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
