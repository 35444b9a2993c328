// mkb regrade as a process, through the real grader on device cpu: the cpusim corpus fixture's rounds are listed by a
// dry run, graded and filed beside KernelBench-X's own verdicts, skipped as current when run again, and compared per
// category by mkb report --metrics kbx-agreement.
#include "core/store/store.h"
#include "support/cli_run.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace mkb;
using mkbtest::CliRun;

namespace {

std::vector<RegradingRecord> regradingsOf(const QString& store) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return {};
    }
    auto records = (*opened)->regradings();
    return records ? *records : std::vector<RegradingRecord>{};
}

} // namespace

class KbxRegradeCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString store_;

    CliRun runMkb(const QStringList& args) { return mkbtest::runMkbIn(args, dir_.filePath("never-used.sqlite")); }

    QStringList regradeArgs() const {
        return {"regrade",
                "--store",
                store_,
                "--device",
                "cpu",
                "--dsl-dir",
                "tests/fixtures/dsls",
                "--python",
                QString::fromStdString(mkbtest::testPython()),
                "--timing-draws",
                "3",
                "--warmup-draws",
                "1"};
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = dir_.filePath("kbx.sqlite");
        const CliRun suite =
            runMkb({"suite", "import", "kernelbenchx", "tests/fixtures/kbx", "--out", dir_.filePath("suite")});
        QVERIFY2(suite.exitCode == 3, qPrintable(suite.err + suite.out)); // the fixture checkout holds a broken task
        const CliRun corpus =
            runMkb({"import", "kernelbenchx-corpus", "tests/fixtures/kbx_corpus_cpusim/all_records.jsonl", "--tasks",
                    "tests/fixtures/kbx", "--suite", dir_.filePath("suite"), "--dsl", "cpusim", "--store", store_});
        QVERIFY2(corpus.exitCode == 0, qPrintable(corpus.err + corpus.out));
    }

    void aDryRunListsEveryRoundWithTheirVerdictAndWritesNothing() {
        const CliRun dry = runMkb(regradeArgs() << "--dry-run");
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.err + dry.out));
        QVERIFY2(dry.out.contains("8 rounds (mkb): 8 to grade, 0 current, 0 without a problem file, 0 not adapted; "
                                  "dry run: nothing graded or written"),
                 qPrintable(dry.out));
        QVERIFY2(dry.out.contains("Math/scaled_add round_0  to grade  theirs (kbx): passed 1.1x"), qPrintable(dry.out));
        QVERIFY(regradingsOf(store_).empty());
    }

    // Math/scaled_add: round 0 is right (both pass), round 1 is wrong (both fail): they agree on both.
    void roundsAreGradedFiledBesideTheirsAndCurrentWhenRunAgain() {
        const CliRun first = runMkb(regradeArgs() << "--problems"
                                                  << "103");
        QVERIFY2(first.exitCode == 0, qPrintable(first.err + first.out));
        QVERIFY2(first.out.contains("2 rounds (mkb): 2 graded, 0 current"), qPrintable(first.out));
        QVERIFY2(first.out.contains("Math/scaled_add round_1  graded  ours (mkb): failed (correctness): incorrect"),
                 qPrintable(first.out));
        const std::vector<RegradingRecord> filed = regradingsOf(store_);
        QCOMPARE(filed.size(), std::size_t(2));
        for (const RegradingRecord& record : filed) {
            QCOMPARE(record.verdict.boundary, std::string("mkb"));
            QVERIFY(!record.graderFingerprint.empty() && !record.problemFingerprint.empty());
            QCOMPARE(record.kernelSha256.size(), std::size_t(64));
        }
        QVERIFY(filed[0].verdict.passed);
        QVERIFY(!filed[1].verdict.correct);

        const CliRun again = runMkb(regradeArgs() << "--problems"
                                                  << "103");
        QVERIFY2(again.exitCode == 0, qPrintable(again.err + again.out));
        QVERIFY2(again.out.contains("2 rounds (mkb): 0 graded, 2 current"), qPrintable(again.out));
        QCOMPARE(regradingsOf(store_).size(), std::size_t(2));

        // Activation/gelu_fp16: round 0 fails for both; round 1 passed theirs, but its half-precision GELU does not
        // run on the CPU: the one disagreement, listed with both reasons.
        const CliRun gelu = runMkb(regradeArgs() << "--problems"
                                                 << "100");
        QVERIFY2(gelu.exitCode == 0, qPrintable(gelu.err + gelu.out));
        QVERIFY2(gelu.out.contains("2 rounds (mkb): 2 graded"), qPrintable(gelu.out));

        const CliRun report = runMkb({"report", "--store", store_, "--metrics", "kbx-agreement", "--format", "csv"});
        QVERIFY2(report.exitCode == 0, qPrintable(report.err + report.out));
        // all: 4 rounds, theirs 2 correct (50%), ours 1 (25%); Math: 2 rounds, theirs 50%, ours 50%, both 1, only
        // theirs 0, only ours 0, neither 1, agreement 100%
        QVERIFY2(report.out.contains("mkb,all,4,0.500,") && report.out.contains("mkb,Math,2,0.500,"),
                 qPrintable(report.out));
        QVERIFY2(report.out.contains(",1,0,0,1,1.000,"), qPrintable(report.out));
        QVERIFY2(report.out.contains("mkb,activation/100_gelu_fp16,Activation,round_1,correct,not correct,,") &&
                     report.out.contains("GeluKernelImpl"),
                 qPrintable(report.out));
        // The rule behind it: the round raises on our draws or device, which KernelBench-X's run did not; the one
        // disagreement is all of the mkb boundary's.
        QVERIFY2(report.out.contains("inputs: the round raises on our draws"), qPrintable(report.out));
        QVERIFY2(report.out.contains("mkb,inputs,1,1.000,"), qPrintable(report.out));
    }

    // The paper's findings from the same corpus (its own verdicts): every finding with n and the paper's number.
    // Fixture rounds: gelu fails round 0 and passes round 1; scaled_add passes round 0 and fails round 1; the pool
    // passes rounds 0 to 3. Round 0: 3 attempts, 2 compiled, 2 correct.
    void thePaperFindingsComeWithTheirNAndThePapersNumber() {
        const CliRun paper = runMkb({"report", "--store", store_, "--metrics", "kbx-paper", "--format", "csv"});
        QVERIFY2(paper.exitCode == 0, qPrintable(paper.err + paper.out));
        QVERIFY2(paper.out.contains("all,\"compile rate, round 0\",0.667,3,attempts with a round 0,"),
                 qPrintable(paper.out));
        QVERIFY2(paper.out.contains("52.3% (first round)"), qPrintable(paper.out));
        QVERIFY2(paper.out.contains("all,η² of correctness by method,,3,") &&
                     paper.out.contains("needs attempts of two or more methods (models); the data holds 1"),
                 qPrintable(paper.out));
        QVERIFY2(paper.out.contains("all,Quantization tasks correct,,0,graded Quantization attempts,,,0 of 30,the "
                                    "data holds none"),
                 qPrintable(paper.out));
        // Under our grader, over the rounds regraded above (scaled_add and gelu_fp16, two rounds each): gelu's round 0
        // imports and fails at its call under ours, where theirs failed to compile; scaled_add's round 0 passes.
        QVERIFY2(paper.out.contains("KernelBench-X's findings under our grader (mkb regrade, boundary mkb)"),
                 qPrintable(paper.out));
        const QString ours = paper.out.mid(paper.out.indexOf("under our grader"));
        QVERIFY2(ours.contains("all,\"compile rate, round 0\",1.000,2,") &&
                     ours.contains("all,\"correct rate, round 0\",0.500,2,"),
                 qPrintable(ours));
        QVERIFY2(ours.contains("4 regraded rounds of 2 trials; 0 rounds of those trials not regraded under mkb"),
                 qPrintable(ours));
    }

    void badCommandLinesAreNamed() {
        const CliRun boundary = runMkb(regradeArgs() << "--boundary"
                                                     << "kbx");
        QCOMPARE(boundary.exitCode, 2);
        QVERIFY2(boundary.err.contains("--boundary"), qPrintable(boundary.err));
        const CliRun missing = runMkb({"regrade", "--store", dir_.filePath("absent.sqlite"), "--device", "cpu"});
        QCOMPARE(missing.exitCode, 4);
        QVERIFY2(missing.err.contains("absent.sqlite"), qPrintable(missing.err));
    }
};

QTEST_GUILESS_MAIN(KbxRegradeCliTest)
#include "tst_kbx_regrade_cli.moc"
