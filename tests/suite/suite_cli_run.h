// Running `mkb suite check` from the suite tests: the CLI with the test's Python and no store, its output, the CPU
// fixture suite's arguments.
#pragma once

#include "support/testpaths.h"

#include <QByteArray>
#include <QMap>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace suitetest {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

inline CliRun runMkb(const QStringList& args, const QString& python = QString::fromStdString(mkbtest::testPython()),
                     const QMap<QString, QString>& extraEnv = {}) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MKB_PYTHON", python);
    for (auto it = extraEnv.begin(); it != extraEnv.end(); ++it) {
        env.insert(it.key(), it.value());
    }
    env.insert("MKB_STORE", "/nonexistent/mkb-suite-test/store.sqlite");
    process.setProcessEnvironment(env);
    process.start(QString::fromStdString(mkbtest::cliPath()), args);
    process.waitForFinished(600000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

inline QString src(const char* relative) {
    return QString::fromStdString((mkbtest::sourceDir() / relative).string());
}

/// Starts mkb with `args` (the test's Python, no store) and reads its output until `marker` shows or it ends.
inline QByteArray startUntil(QProcess& process, const QStringList& args, const QByteArray& marker) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("MKB_PYTHON", QString::fromStdString(mkbtest::testPython()));
    env.insert("MKB_STORE", "/nonexistent/mkb-suite-test/store.sqlite");
    process.setProcessEnvironment(env);
    process.start(QString::fromStdString(mkbtest::cliPath()), args);
    QByteArray out;
    while (!out.contains(marker) && process.waitForReadyRead(120000)) {
        out += process.readAllStandardOutput();
    }
    return out;
}

inline QStringList issueLines(const QString& out) {
    QStringList lines;
    for (const QString& line : out.split('\n')) {
        if (line.startsWith("  ! ")) {
            lines << line.mid(4);
        }
    }
    return lines;
}

/// The arguments of a check of the CPU fixture suite (tests/suite/fixtures/suite) with the cpusim DSL on the CPU.
inline QStringList cpuArgs(const QString& problems, const QString& gradings) {
    return {"suite",      "check",  "--suite",           src("tests/suite/fixtures/suite"),
            "--dsls",     "cpusim", "--dsl-dir",         src("tests/fixtures/dsls"),
            "--device",   "cpu",    "--eager-target-ms", "0",
            "--gradings", gradings, "--problems",        problems};
}

} // namespace suitetest
