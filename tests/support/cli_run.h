// Running the mkb binary as a user would, from the source tree, with its data folder and a store it must not touch:
// what the CLI tests share.
#pragma once

#include "support/testpaths.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace mkbtest {

/// What one mkb process did: its exit code (-1 when it did not finish in time, -2 when it crashed) and its output.
struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

/// Runs mkb with args in the source tree, MKB_DATA_DIR there and MKB_STORE at unusedStore (so a command that falls
/// back to the default store is caught), waiting up to timeoutMs.
inline CliRun runMkbIn(const QStringList& args, const QString& unusedStore, int timeoutMs = 300000) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("MKB_DATA_DIR", QString::fromStdString(sourceDir().string()));
    environment.insert("MKB_STORE", unusedStore);
    process.setProcessEnvironment(environment);
    process.setWorkingDirectory(QString::fromStdString(sourceDir().string()));
    process.start(QString::fromStdString(cliPath()), args);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {};
    }
    CliRun run;
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace mkbtest
