// Turns a RunRequest into `mkb run` arguments and finds the mkb program to run them with.
#include "gui/runs/run_request.h"

#include "core/grader_client/grader_pool.h"

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
    if (!request.devices.trimmed().isEmpty()) {
        args << QStringLiteral("--devices") << request.devices.trimmed(); // mkb run parses it, as for the CLI
    } else if (!request.device.trimmed().isEmpty()) {
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
    args << QStringLiteral("--boundary")
         << (request.boundary.trimmed().isEmpty() ? QStringLiteral("mkb") : request.boundary.trimmed());
    if (request.executor.trimmed() == QLatin1String("slurm")) {
        args << QStringLiteral("--executor") << QStringLiteral("slurm") << QStringLiteral("--shared")
             << request.sharedFolder.trimmed();
        if (!request.partition.trimmed().isEmpty()) {
            args << QStringLiteral("--partition") << request.partition.trimmed();
        }
    }
    args << QStringLiteral("--store") << storePath << QStringLiteral("--progress") << QStringLiteral("json");
    return args;
}

RunRequest runRequestFromArguments(const QStringList& arguments) {
    RunRequest request;
    request.driverSettingsJson.clear();
    for (int i = 0; i < arguments.size(); ++i) {
        const QString& option = arguments[i];
        if (option == QLatin1String("--rerun-stale")) {
            request.rerunStale = true;
            continue;
        }
        if (!option.startsWith(QLatin1String("--")) || i + 1 >= arguments.size()) {
            continue;
        }
        const QString value = arguments[++i];
        if (option == QLatin1String("--model")) {
            request.model = value;
        } else if (option == QLatin1String("--driver")) {
            request.driver = value;
        } else if (option == QLatin1String("--driver-config")) {
            QFile file(value);
            if (file.open(QIODevice::ReadOnly)) {
                request.driverSettingsJson = QString::fromUtf8(file.readAll());
            }
        } else if (option == QLatin1String("--problems")) {
            request.problems = value;
        } else if (option == QLatin1String("--dsls")) {
            request.dslA = value.section(QLatin1Char(','), 0, 0);
            request.dslB = value.section(QLatin1Char(','), 1);
        } else if (option == QLatin1String("--replicates")) {
            request.replicates = value.toInt();
        } else if (option == QLatin1String("--suite")) {
            request.suites << value;
        } else if (option == QLatin1String("--dsl-dir")) {
            request.dslDirs << value;
        } else if (option == QLatin1String("--device")) {
            request.device = value;
        } else if (option == QLatin1String("--devices")) {
            request.devices = value;
        } else if (option == QLatin1String("--python")) {
            request.python = value;
        } else if (option == QLatin1String("--wall-clock")) {
            request.wallClockSeconds = value.toDouble();
        } else if (option == QLatin1String("--submissions")) {
            request.submissions = value.toInt();
        } else if (option == QLatin1String("--max-kernel-bytes")) {
            request.maxKernelBytes = value.toInt();
        } else if (option == QLatin1String("--concurrency")) {
            request.concurrency = value.toInt();
        } else if (option == QLatin1String("--grade-timeout")) {
            request.gradeTimeoutSeconds = value.toDouble();
        } else if (option == QLatin1String("--timing-draws")) {
            request.timingDraws = value.toInt();
        } else if (option == QLatin1String("--boundary")) {
            request.boundary = value;
        } else if (option == QLatin1String("--executor")) {
            request.executor = value;
        } else if (option == QLatin1String("--partition")) {
            request.partition = value;
        } else if (option == QLatin1String("--shared")) {
            request.sharedFolder = value;
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
