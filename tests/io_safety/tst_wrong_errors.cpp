// io safety: inputs that used to get the wrong error. Non-finite numbers in any number option, an over-long store
// path, and mkb-workbench --help / --version on a machine without a display.
#include "io_safety_fixtures.h"

#include "core/util/option_table.h"

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace iosafety;

class WrongErrorsTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> dir_;
    fs::path at(const std::string& name) const { return fs::path(dir_->path().toStdString()) / name; }
    static QString q(const fs::path& path) { return QString::fromStdString(path.string()); }

    static CliRun runWithoutDisplay(const QString& program, const QStringList& arguments) {
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) {
            environment.remove(name);
        }
        process.setProcessEnvironment(environment);
        process.start(program, arguments);
        if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit) {
            return {};
        }
        return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
                QString::fromUtf8(process.readAllStandardError())};
    }

private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

    void everyNumberOptionRefusesNanAndInfinityNamingTheOption() {
        const mkb::OptionTable table = {mkb::numberOption("wall-clock", "S", "seconds").withDefault(1.0)};
        for (const char* text : {"nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999"}) {
            auto value = mkb::parseOptions(table, {"--wall-clock", text});
            QVERIFY2(!value, text);
            QVERIFY2(value.error().message.find("--wall-clock") != std::string::npos, value.error().message.c_str());
            QVERIFY2(value.error().message.find(text) != std::string::npos, value.error().message.c_str());
        }
        auto fine = mkb::parseOptions(table, {"--wall-clock", "2.5"});
        QCOMPARE(fine->number("wall-clock"), 2.5);
        QCOMPARE(mkb::parseOptions(table, {})->number("wall-clock"), 1.0); // the declared default

        const QList<QStringList> commands = {
            {"report", "--delta", "nan"},
            {"run", "--model", "m", "--driver", "reference", "--problems", "*", "--dsls", "triton,cuda", "--device",
             "cpu", "--wall-clock", "nan"},
            {"run", "--model", "m", "--driver", "reference", "--problems", "*", "--dsls", "triton,cuda", "--device",
             "cpu", "--grade-timeout", "inf"},
            {"suite", "check", "--device", "cpu", "--timeout", "nan"},
            {"suite", "check", "--device", "cpu", "--eager-target-ms", "inf"},
        };
        for (const QStringList& command : commands) {
            const CliRun run = runMkb(command);
            QVERIFY2(run.exitCode == 2, qPrintable(command.join(' ') + " -> " + QString::number(run.exitCode)));
            QVERIFY2(isOneLine(run.err) && run.err.contains("finite number"), qPrintable(run.err));
        }
    }

    void anOverlongStorePathIsOneLineNamingThePathAndTheLimit() {
        const fs::path deep = at(std::string(200, 'd')) / std::string(200, 'e') / std::string(200, 'f') / "s.sqlite";
        const fs::path wide = at(std::string(300, 'w') + ".sqlite");
        for (const fs::path& store : {deep, wide}) {
            for (const QStringList& verb : {QStringList{"db", "init"}, QStringList{"db", "info"}, QStringList{"report"},
                                            QStringList{"import", q(at("results"))}}) {
                const CliRun run = runMkb(verb + QStringList{"--store", q(store)});
                QVERIFY2(run.exitCode == 4 || (verb[0] == "import" && run.exitCode == 3),
                         qPrintable(verb.join(' ') + " -> " + QString::number(run.exitCode) + " " + run.err));
                QVERIFY2(isOneLine(run.err) && !run.err.contains("internal error"), qPrintable(run.err));
                if (run.exitCode == 4) {
                    QVERIFY2(run.err.contains(q(store)) && (run.err.contains("too long") || run.err.contains("255")),
                             qPrintable(run.err));
                }
            }
            QVERIFY(!fs::exists(at(std::string(200, 'd')))); // refused before any folder was made
        }
        const CliRun deepInit = runMkb({"db", "init", "--store", q(deep)});
        QVERIFY2(deepInit.err.contains("512"), qPrintable(deepInit.err));
    }

    void workbenchHelpAndVersionWorkWithoutADisplayLikeTheCli() {
        const QString workbench = QString::fromStdString((mkbtest::binaryDir() / "app" / "mkb-workbench").string());
        if (!fs::exists(workbench.toStdString())) {
            QSKIP("mkb-workbench is not built (headless build)");
        }
        const CliRun help = runWithoutDisplay(workbench, {"--help"});
        QVERIFY2(help.exitCode == 0, qPrintable(help.err));
        QVERIFY2(help.out.contains("mkb-workbench") && help.out.contains("--screenshot"), qPrintable(help.out));
        const CliRun version = runWithoutDisplay(workbench, {"--version"});
        QVERIFY2(version.exitCode == 0, qPrintable(version.err));
        const CliRun cliVersion = runMkb({"--version"});
        QCOMPARE(cliVersion.exitCode, 0);
        // The same shape and version as the CLI's (the commit stamps match too when both are built at one commit).
        const QRegularExpression shape(R"(^(mkb|mkb-workbench) (\S+) \(commit [0-9a-f]+[^)]*\)\n$)");
        const QRegularExpressionMatch cliMatch = shape.match(cliVersion.out);
        const QRegularExpressionMatch workbenchMatch = shape.match(version.out);
        QVERIFY2(cliMatch.hasMatch() && cliMatch.captured(1) == "mkb", qPrintable(cliVersion.out));
        QVERIFY2(workbenchMatch.hasMatch() && workbenchMatch.captured(1) == "mkb-workbench", qPrintable(version.out));
        QCOMPARE(workbenchMatch.captured(2), cliMatch.captured(2));
    }
};

QTEST_GUILESS_MAIN(WrongErrorsTest)
#include "tst_wrong_errors.moc"
