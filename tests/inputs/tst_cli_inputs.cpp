// Tests of mkb verbs given hostile files and folders: each ends quickly with one line naming the path and the fault.
#include "catalog/fixture_suite.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QtTest>

#include <sys/stat.h>

#include <filesystem>

using mkbtest::FixtureSuite;
using mkbtest::problemText;
namespace fs = std::filesystem;

namespace {

struct CliRun {
    int exitCode = -1; // -1: still running after the limit (a hang), -2: crashed
    QString out;
    QString err;
};

/// Runs mkb with a short limit: every verb here must answer in well under a second, so 20 s means it hung.
CliRun runMkb(const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("MKB_DATA_DIR", QString::fromStdString(mkbtest::sourceDir().string()));
    process.setProcessEnvironment(environment);
    process.start(QString::fromStdString(mkbtest::cliPath()), arguments);
    if (!process.waitForFinished(20000)) {
        process.kill();
        process.waitForFinished(5000);
        return {};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
            QString::fromUtf8(process.readAllStandardOutput()), QString::fromUtf8(process.readAllStandardError())};
}

QString q(const fs::path& path) {
    return QString::fromStdString(path.string());
}

/// A suite with one good problem and two links to "." both in the root and in the family folder: scanned naively,
/// the walk doubles at every level until the path-length limit.
void addLinksToDot(const FixtureSuite& suite) {
    for (const fs::path& folder : {suite.root(), suite.root() / "attention"}) {
        fs::create_directory_symlink(".", folder / "a");
        fs::create_directory_symlink(".", folder / "b");
    }
}

} // namespace

class CliInputsTest : public QObject {
    Q_OBJECT
private slots:
    void validateOfSuiteWithTwoLinksToDotFinishesAndNamesEachCycle() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        addLinksToDot(suite);
        CliRun run = runMkb({"problems", "validate", q(suite.root())});
        QVERIFY2(run.exitCode != -1, "problems validate hung on links to '.'");
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.out.count("(a cycle); not followed"), 4);
        QVERIFY(run.out.contains("1 valid problem(s), 4 issue(s)"));
    }

    void listAndPlanOfSuiteWithLinksToDotFinish() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        addLinksToDot(suite);
        CliRun list = runMkb({"problems", "list", "--suite", q(suite.root())});
        QVERIFY2(list.exitCode != -1, "problems list hung on links to '.'");
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.contains("1 problem(s)"));
        CliRun plan = runMkb({"plan", "--suite", q(suite.root()), "--problems", "*", "--dsls", "triton,cuda",
                              "--grader-fingerprint", "f", "--store", q(suite.root() / "no_store.db")});
        QVERIFY2(plan.exitCode != -1, "plan hung on links to '.'");
        QCOMPARE(plan.exitCode, 0);
        QVERIFY(plan.out.contains("1 problem x"));
    }

    void importWithProblemsFolderHoldingLinksToDotFinishes() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        addLinksToDot(suite);
        // The catalog is read before the results folder is looked at, so a missing results folder still walks it.
        CliRun run = runMkb({"import", q(suite.root() / "no_results"), "--problems", q(suite.root()), "--store",
                             q(suite.root() / "store.db")});
        QVERIFY2(run.exitCode != -1, "import --problems hung on links to '.'");
        QCOMPARE(run.exitCode, 3);
        QVERIFY(run.err.contains("no_results"));
    }

    void fifoAndDevZeroProblemFilesAreRefusedWithoutBlocking() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        const fs::path fifo = suite.root() / "attention/02_fifo.py";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        fs::create_symlink("/dev/zero", suite.root() / "attention/03_zero.py");
        CliRun run = runMkb({"problems", "validate", q(suite.root())});
        QVERIFY2(run.exitCode != -1, "problems validate blocked on a FIFO or /dev/zero");
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.contains("02_fifo.py: cannot read " + q(fifo) +
                                 ": it is a FIFO (named pipe), not a regular "
                                 "file"));
        QVERIFY(run.out.contains("03_zero.py: cannot read"));
        QVERIFY(run.out.contains("it is a character device, not a regular file"));
        QVERIFY(run.out.contains("1 valid problem(s), 2 issue(s)"));
    }

    void anOversizedProblemFileNamesTheLimit() {
        FixtureSuite suite;
        suite.write("attention/01_huge.py", problemText("Huge.", "# " + std::string(2 << 20, 'x') + "\n"));
        CliRun run = runMkb({"problems", "validate", q(suite.root())});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.contains("over the limit of 1048576 bytes (1 MiB)"));
    }

    void driverConfigThatIsAFifoOrDevZeroIsOneLine() {
        FixtureSuite suite;
        const fs::path fifo = suite.root() / "driver.json";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        fs::create_symlink("/dev/zero", suite.root() / "zero.json");
        for (const fs::path& config : {fifo, suite.root() / "zero.json"}) {
            CliRun run = runMkb({"run", "--driver", "chat", "--driver-config", q(config), "--model", "m", "--problems",
                                 "01", "--dsls", "triton,cuda", "--store", q(suite.root() / "store.db")});
            QVERIFY2(run.exitCode != -1, "mkb run blocked reading --driver-config");
            QCOMPARE(run.exitCode, 3);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY(run.err.contains("--driver-config: cannot read " + q(config)));
            QVERIFY(run.err.contains("not a regular file"));
        }
    }

    void selfLinkedProblemFileIsOneClearLine() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        fs::create_symlink("02_loop.py", suite.root() / "attention/02_loop.py");
        CliRun validate = runMkb({"problems", "validate", q(suite.root())});
        QCOMPARE(validate.exitCode, 1);
        QVERIFY(validate.out.contains("02_loop.py: it is a symbolic link that never resolves"));
        QVERIFY(validate.out.contains("1 valid problem(s), 1 issue(s)"));
        CliRun show = runMkb({"problems", "show", "2", "--suite", q(suite.root())});
        QCOMPARE(show.exitCode, 3);
        QCOMPARE(show.err.count('\n'), 1);
        QVERIFY(show.err.contains("'2' is not a valid problem"));
        QVERIFY(show.err.contains("never resolves"));
    }

    void selfLinkedFamilyFolderAndSuiteRootAreOneClearLine() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        fs::create_symlink("moe", suite.root() / "moe");
        CliRun validate = runMkb({"problems", "validate", q(suite.root())});
        QCOMPARE(validate.exitCode, 1);
        QVERIFY(validate.out.contains(q(suite.root() / "moe") + ": it is a symbolic link that never resolves"));
        QVERIFY(validate.out.contains("1 valid problem(s), 1 issue(s)"));
        const fs::path loop = suite.root() / "loop";
        fs::create_symlink("loop", loop);
        for (const QStringList& arguments :
             {QStringList{"problems", "validate", q(loop)}, QStringList{"problems", "list", "--suite", q(loop)},
              QStringList{"plan", "--suite", q(loop), "--problems", "*", "--dsls", "triton,cuda",
                          "--grader-fingerprint", "f", "--store", q(suite.root() / "no_store.db")}}) {
            CliRun run = runMkb(arguments);
            QCOMPARE(run.exitCode, 3);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(run.err.contains("never resolves"), qPrintable(run.err));
        }
    }

    void showOfMalformedProblemSaysWhyNotUnknown() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        suite.write("attention/07_broken.py", "\"\"\"Broken.\"\"\"\ndef make_inputs(device='cuda'):\n    return []\n");
        for (const QString& name : {QString("7"), QString("p07"), QString("07_broken"), QString("attention/07_broken"),
                                    QString("broken"), q(suite.root() / "attention/07_broken.py")}) {
            CliRun run = runMkb({"problems", "show", name, "--suite", q(suite.root())});
            QCOMPARE(run.exitCode, 3);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(run.err.contains("'" + name + "' is not a valid problem"), qPrintable(run.err));
            QVERIFY(run.err.contains("07_broken.py: missing `def reference(`"));
            QVERIFY(!run.err.contains("unknown problem"));
        }
        CliRun unknown = runMkb({"problems", "show", "9", "--suite", q(suite.root())});
        QCOMPARE(unknown.exitCode, 3);
        QVERIFY(unknown.err.contains("unknown problem '9': nothing in"));
        CliRun plan = runMkb({"plan", "--suite", q(suite.root()), "--problems", "07", "--dsls", "triton,cuda",
                              "--grader-fingerprint", "f", "--store", q(suite.root() / "no_store.db")});
        QCOMPARE(plan.exitCode, 3);
        QVERIFY(plan.err.contains("names a file that is not a valid problem"));
        QVERIFY(plan.err.contains("missing `def reference(`"));
    }

    void aNumberTwoFilesClaimIsRefusedNamingBothNeverMerged() {
        FixtureSuite suite;
        const fs::path first = suite.write("attention/03_a.py", problemText());
        const fs::path second = suite.write("moe/03_b.py", problemText());
        suite.write("moe/04_c.py", problemText());
        for (const QString& glob : {QString("*"), QString("p03"), QString("moe/*")}) {
            CliRun plan = runMkb({"plan", "--suite", q(suite.root()), "--problems", glob, "--dsls", "triton,cuda",
                                  "--grader-fingerprint", "f", "--store", q(suite.root() / "no_store.db")});
            QCOMPARE(plan.exitCode, 3);
            QCOMPARE(plan.err.count('\n'), 1);
            QVERIFY2(plan.err.contains("duplicate number 03"), qPrintable(plan.err));
            QVERIFY(plan.err.contains(q(first)) && plan.err.contains(q(second)));
            QVERIFY(plan.out.isEmpty());
        }
        CliRun other = runMkb({"plan", "--suite", q(suite.root()), "--problems", "p04", "--dsls", "triton,cuda",
                               "--grader-fingerprint", "f", "--store", q(suite.root() / "no_store.db")});
        QCOMPARE(other.exitCode, 0);
        CliRun show = runMkb({"problems", "show", "3", "--suite", q(suite.root())});
        QCOMPARE(show.exitCode, 3);
        QVERIFY(show.err.contains("'3' is not a valid problem"));
        QVERIFY(show.err.contains("duplicate number 03"));
        QVERIFY(show.err.contains(q(first)) && show.err.contains(q(second)));
    }

    void newlinesInNamesStayOnOneLine() {
        FixtureSuite suite;
        suite.write("attention/01_good.py", problemText());
        suite.write("attention/02_bad\nname.py", problemText());
        suite.write("evil\nfamily/03_x.py", problemText());
        CliRun validate = runMkb({"problems", "validate", q(suite.root())});
        QCOMPARE(validate.exitCode, 1);
        QCOMPARE(validate.out.count('\n'), 3); // two issues and the summary
        QVERIFY(validate.out.contains("bad file name '02_bad\\nname.py'"));
        QVERIFY(validate.out.contains("bad family name 'evil\\nfamily'"));
        CliRun show = runMkb({"problems", "show", "nope\nnope\x1b[2J", "--suite", q(suite.root())});
        QCOMPARE(show.exitCode, 3);
        QCOMPARE(show.err.count('\n'), 1);
        QVERIFY(show.err.contains("'nope\\nnope\\x1b[2J'"));
        // Every verb's error goes through one line: a missing kernel file's name with a newline stays quoted.
        CliRun grade = runMkb({"grade", "no\nsuch\tkernel.py", "--problem", "1", "--dsl", "triton"});
        QCOMPARE(grade.exitCode, 3);
        QCOMPARE(grade.err.count('\n'), 1);
        QVERIFY2(grade.err.contains("no\\nsuch\\tkernel.py"), qPrintable(grade.err));
        CliRun plan = runMkb({"plan", "--suite", q(suite.root()), "--problems", "*", "--dsls", "triton,cu\nda",
                              "--grader-fingerprint", "f"});
        QCOMPARE(plan.exitCode, 2);
        QCOMPARE(plan.err.count('\n'), 1);
        QVERIFY(plan.err.contains("cu\\nda"));
    }
};

QTEST_GUILESS_MAIN(CliInputsTest)
#include "tst_cli_inputs.moc"
