// mkb run's options are declared once (core/protocol/run_options.h): the parser, the help, the man page and the
// arguments written back all come from that table, and its grading defaults are GradeSettings'.
#include "support/cli_run.h"
#include "support/testpaths.h"

#include "core/cluster/slurm_client.h"
#include "core/protocol/run_hand_over.h"
#include "core/protocol/run_options.h"
#include "core/vocabulary/grade_settings.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace mkb;
using mkbtest::CliRun;

namespace {

/// Help text with every run of white space made one space, so a wrapped sentence reads as it was declared.
QString flattened(QString text) {
    return text.replace(QRegularExpression("\\s+"), " ");
}

/// A value of the option's kind that is not its default and that the declaration accepts.
std::string otherValue(const OptionDeclaration& option) {
    switch (option.kind) {
    case OptionKind::Flag:
        return "";
    case OptionKind::Choice:
        return option.choices.back() == option.defaultText ? option.choices.front() : option.choices.back();
    case OptionKind::Integer:
        return std::to_string(static_cast<long long>(option.defaultNumber) + 1 <= option.maximum &&
                                      static_cast<long long>(option.defaultNumber) + 1 >= option.minimum
                                  ? static_cast<long long>(option.defaultNumber) + 1
                                  : static_cast<long long>(option.minimum));
    case OptionKind::Number:
        return optionNumberText(option.defaultNumber + 1.5);
    case OptionKind::Text:
    case OptionKind::Path:
        return "value-of-" + option.name;
    }
    return "";
}

/// A value the declaration refuses, or "" when it accepts any text.
std::string refusedValue(const OptionDeclaration& option) {
    switch (option.kind) {
    case OptionKind::Integer:
        return std::to_string(static_cast<long long>(option.minimum) - 1);
    case OptionKind::Number:
        return option.aboveMinimum ? optionNumberText(option.minimum) : "nan";
    case OptionKind::Choice:
        return "neither";
    default:
        return "";
    }
}

} // namespace

class RunOptionsTest : public QObject {
    Q_OBJECT

private slots:
    void gradingDefaultsAreGradeSettings() {
        const GradeSettings grading;
        const RunOptions& defaults = runOptionDefaults();
        QCOMPARE(defaults.timingDraws, grading.timingDraws);
        QCOMPARE(defaults.gradeTimeoutSeconds, grading.timeoutS);
        QCOMPARE(defaults.maxKernelBytes, grading.maxKernelBytes);
        QCOMPARE(defaults.boundary, grading.boundary);
        QCOMPARE(findOption(runOptionDeclarations(), "timing-draws")->minimum, double(grading.recheckDraws));
        // The Slurm GPU request the help names is the one the Slurm client asks for.
        QCOMPARE(findOption(runOptionDeclarations(), "slurm-gpu")->defaultNote, cluster::SlurmSettings{}.gpuRequest);
    }

    void everyDeclaredOptionRoundTripsThroughItsArguments() {
        const RunOptions& defaults = runOptionDefaults();
        QCOMPARE(*parseRunOptions(runArguments(defaults)), defaults);
        RunOptions everything = defaults;
        for (const BoundOption<RunOptions>& option : runOptionTable()) {
            const std::string value = otherValue(option.declaration);
            ParsedOptions parsed(runOptionDeclarations());
            QVERIFY2(parsed.set(option.declaration.name, value).ok(), option.declaration.name.c_str());
            RunOptions one = defaults;
            std::visit([&](auto field) { one.*field = optionsFrom(runOptionTable(), parsed).*field; }, option.field);
            QVERIFY2(!(one == defaults), option.declaration.name.c_str()); // the value is not the default
            auto back = parseRunOptions(runArguments(one));
            QVERIFY2(back.ok(), back.ok() ? "" : back.error().message.c_str());
            QVERIFY2(*back == one, option.declaration.name.c_str());
            std::visit([&](auto field) { everything.*field = one.*field; }, option.field);
        }
        everything.suites = {"/a b/suite", "second"};
        everything.only = {"p01_r1_solo_triton", "p02_r1_solo_cuda"};
        QCOMPARE(*parseRunOptions(runArguments(everything)), everything);
    }

    void aValueOutsideItsDeclarationIsRefusedNamingTheOptionAndTheValue() {
        int checked = 0;
        for (const OptionDeclaration& option : runOptionDeclarations()) {
            const std::string bad = refusedValue(option);
            if (bad.empty()) {
                continue;
            }
            auto parsed = parseRunOptions({"--" + option.name, bad});
            QVERIFY2(!parsed, option.name.c_str());
            const std::string& message = parsed.error().message;
            QVERIFY2(message.find("--" + option.name) != std::string::npos, message.c_str());
            QVERIFY2(message.find("'" + bad + "'") != std::string::npos, message.c_str());
            ++checked;
        }
        QVERIFY(checked >= 10);
        auto twice = parseRunOptions({"--model", "a", "--model", "b"});
        QVERIFY(!twice && twice.error().message.find("--model is given twice") != std::string::npos);
        QVERIFY(parseRunOptions({"--suite", "a", "--suite", "b"}).ok()); // repeatable
    }

    void mkbRunRefusesAnOutOfRangeValueNamingIt() {
        const QStringList required = {"--model", "m",      "--driver",    "reference", "--problems",
                                      "*",       "--dsls", "triton,cuda", "--device",  "cpu"};
        for (const char* option : {"replicates", "concurrency", "timing-draws", "wall-clock", "slurm-poll"}) {
            const std::string bad = refusedValue(*findOption(runOptionDeclarations(), option));
            const CliRun run = mkbtest::runMkbIn(QStringList{"run"} + required +
                                                     QStringList{QString("--") + option, QString::fromStdString(bad)},
                                                 "/nonexistent/never.sqlite");
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.contains(QString("--") + option) && run.err.contains(QString::fromStdString(bad)),
                     qPrintable(run.err));
        }
        const CliRun missing = mkbtest::runMkbIn({"run", "--model", "m"}, "/nonexistent/never.sqlite");
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("--driver is required"), qPrintable(missing.err));
    }

    void mkbRunHelpAndTheManPageSayEveryDeclaredOption() {
        const CliRun help = mkbtest::runMkbIn({"run", "--help"}, "/nonexistent/never.sqlite");
        QCOMPARE(help.exitCode, 0);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcess manpage;
        manpage.start(QString::fromStdString(mkbtest::testPython()),
                      {QString::fromStdString((mkbtest::sourceDir() / "packaging" / "manpage.py").string()), "--binary",
                       QString::fromStdString(mkbtest::cliPath()), "--program", "mkb", "--output",
                       dir.filePath("mkb.1")});
        QVERIFY(manpage.waitForFinished(120000));
        QVERIFY2(manpage.exitCode() == 0, manpage.readAllStandardError().constData());
        QFile pageFile(dir.filePath("mkb.1"));
        QVERIFY(pageFile.open(QIODevice::ReadOnly));
        QString page = QString::fromUtf8(pageFile.readAll());
        page = page.mid(page.indexOf(".SS \"mkb run\""));
        page = page.left(page.indexOf(".SS ", 5)).replace("\\-", "-").replace("\\e", "\\");

        const QString helpText = flattened(help.out);
        const QString pageText = flattened(page);
        for (const OptionDeclaration& option : runOptionDeclarations()) {
            const QString term =
                QString::fromStdString("--" + option.name + (option.valueName.empty() ? "" : " " + option.valueName));
            const QString said = flattened(QString::fromStdString(option.help));
            QVERIFY2(helpText.contains(term) && helpText.contains(said), qPrintable(term));
            QVERIFY2(pageText.contains(term) && pageText.contains(said), qPrintable(term + " in the man page"));
            for (const std::string& choice : option.choices) {
                QVERIFY2(helpText.contains(QString::fromStdString(choice)), choice.c_str());
            }
            if (option.kind == OptionKind::Integer && option.defaultNote.empty()) {
                const QString shown = QString("default %1").arg(static_cast<long long>(option.defaultNumber));
                QVERIFY2(helpText.contains(shown), qPrintable(term + ": " + shown));
            }
        }
        QVERIFY(helpText.contains(QString("default %1").arg(GradeSettings{}.timingDraws)));
        QVERIFY(helpText.contains("exit codes:") && helpText.contains("drivers:"));
    }

    void theHandOverChecksDevicesAndExecutor() {
        RunOptions options = runOptionDefaults();
        options.device = "cpu";
        options.devices = "cpu:0,cpu:1";
        auto both = runSettingsFrom(options);
        QVERIFY(!both &&
                both.error().message.find("--devices and --device cannot be given together") != std::string::npos);
        options = runOptionDefaults();
        options.partition = "h200";
        auto local = runSettingsFrom(options);
        QVERIFY(!local &&
                local.error().message.find("--partition applies to --executor slurm only") != std::string::npos);
        options = runOptionDefaults();
        options.device = "cpu";
        options.timingDraws = 7;
        options.only = {"p01_r1_solo_triton"};
        auto settings = runSettingsFrom(options);
        QVERIFY2(settings.ok(), settings.ok() ? "" : settings.error().message.c_str());
        QCOMPARE(settings->grade.timingDraws, 7);
        QCOMPARE(settings->device, std::string("cpu"));
        QVERIFY(settings->onlyCoordinates.count("p01_r1_solo_triton"));
        QVERIFY(settings->retime);
    }
};

QTEST_GUILESS_MAIN(RunOptionsTest)
#include "tst_run_options.moc"
