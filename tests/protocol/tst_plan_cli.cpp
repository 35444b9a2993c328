// Tests of `mkb plan` run as a process: counts on the shipped problems, statuses read from a real store, exit codes.
#include "core/catalog/catalog.h"
#include "core/protocol/planner.h"
#include "core/store/store.h"
#include "core/util/sha256.h"
#include "support/testpaths.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace mkb;

namespace {

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

} // namespace

class PlanCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString shippedSuite() const { return QString::fromStdString((mkbtest::sourceDir() / "problems").string()); }
    QString emptyStore() const { return dir_.filePath("absent.sqlite"); }

    CliRun runMkb(const QStringList& args) {
        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("MKB_STORE", emptyStore()); // never the user's own store
        environment.insert("MKB_DATA_DIR", QString::fromStdString(mkbtest::sourceDir().string()));
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
        if (!process.waitForFinished(60000)) {
            process.kill();
            return {};
        }
        CliRun run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        return run;
    }

    QJsonObject runJson(const QStringList& args) {
        const CliRun run = runMkb(args + QStringList{"--json"});
        if (run.exitCode != 0) {
            qWarning("mkb %s failed (%d): %s", qPrintable(args.join(' ')), run.exitCode, qPrintable(run.err));
            return {};
        }
        return QJsonDocument::fromJson(run.out.toUtf8()).object();
    }

    static QMap<QString, QString> statusByCoordinate(const QJsonObject& plan) {
        QMap<QString, QString> statuses;
        for (const QJsonValue& entry : plan["entries"].toArray()) {
            statuses[entry["coordinate"].toString()] = entry["status"].toString();
        }
        return statuses;
    }

    static void verifyOneLine(const CliRun& run, const QString& mentions) {
        QVERIFY2(run.err.startsWith("mkb: "), qPrintable(run.err));
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains(mentions), qPrintable(run.err));
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void dryRunOnShippedProblemsPrintsEveryTrialWithCounts() {
        const CliRun run = runMkb({"plan", "--problems", "*", "--suite", shippedSuite(), "--dsls", "triton,cuda",
                                   "--replicates", "2", "--store", emptyStore(), "--dry-run"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const Catalog catalog = loadCatalog({mkbtest::sourceDir() / "problems"});
        QVERIFY(catalog.problems.size() >= 6);
        const int trials = int(catalog.problems.size()) * 2 * 4;
        QVERIFY2(run.out.contains(
                     QString("counts: run %1, rerun 0, reuse 0, stale 0, redo 0, skip 0 (total %1)").arg(trials)),
                 qPrintable(run.out));
        QVERIFY(run.out.contains(
            QRegularExpression("^p01_r1_solo_triton +run +no record$", QRegularExpression::MultilineOption)));
        QVERIFY(run.out.contains(QRegularExpression("^p01_r2_triton2cuda_skill +run +no record; waits for "
                                                    "p01_r2_solo_triton$",
                                                    QRegularExpression::MultilineOption)));
        QCOMPARE(run.out.count(QRegularExpression("^p\\d\\d_r\\d_", QRegularExpression::MultilineOption)), trials);
        QVERIFY(!QFileInfo::exists(emptyStore())); // planning never creates a store
    }

    void selectionNarrowsThePlan() {
        const QJsonObject plan = runJson({"plan", "--problems", "p0[12]", "--suite", shippedSuite(), "--dsls",
                                          "cutedsl,tirx", "--store", emptyStore(), "--dry-run"});
        QCOMPARE(plan["total"].toInt(), 8);
        QCOMPARE(plan["counts"].toObject()["run"].toInt(), 8);
        QVERIFY(statusByCoordinate(plan).contains("p02_r1_tirx2cutedsl_skill"));
    }

    void fourDslsPlanEveryOrderedPairSharingOneSoloPerDsl() {
        const QJsonObject plan = runJson({"plan", "--problems", "p0[12]", "--suite", shippedSuite(), "--dsls",
                                          "triton,cuda,numba,pallas", "--store", emptyStore(), "--dry-run"});
        QCOMPARE(plan["dsls"].toArray().size(), 4);
        QCOMPARE(plan["total"].toInt(), 2 * (4 + 12)); // per problem: 4 solos and 12 directed skill arms
        const QMap<QString, QString> statuses = statusByCoordinate(plan);
        for (const char* coordinate : {"p01_r1_solo_numba", "p01_r1_pallas2numba_skill", "p02_r1_numba2cuda_skill",
                                       "p02_r1_triton2pallas_skill"}) {
            QVERIFY2(statuses.contains(coordinate), coordinate);
        }
        // Solos first, then skill arms; each skill arm waits for its own source solo.
        const QJsonArray entries = plan["entries"].toArray();
        for (int i = 0; i < entries.size(); ++i) {
            const QJsonObject entry = entries[i].toObject();
            const QString arm = entry["arm"].toString();
            QCOMPARE(arm.startsWith("solo_"), i < 8);
            if (!arm.startsWith("solo_")) {
                const QString source = arm.section('2', 0, 0);
                QCOMPARE(entry["waits_for"].toString(),
                         entry["coordinate"].toString().section('_', 0, 1) + "_solo_" + source);
            }
        }
    }

    void unknownDslIsABadCommandLine() {
        const CliRun run =
            runMkb({"plan", "--problems", "*", "--suite", shippedSuite(), "--dsls", "triton,fortran", "--dry-run"});
        QCOMPARE(run.exitCode, 2);
        verifyOneLine(run, "unknown DSL 'fortran'");
    }

    void noMatchingProblemIsBadInputNamingTheGlob() {
        const CliRun run =
            runMkb({"plan", "--problems", "nothing_like_this*", "--suite", shippedSuite(), "--dsls", "triton,cuda"});
        QCOMPARE(run.exitCode, 3);
        verifyOneLine(run, "'nothing_like_this*'");
    }

    void badCommandLinesAreRefused_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no --problems") << QStringList{"--dsls", "triton,cuda"} << 2 << "--problems";
        QTest::newRow("one dsl") << QStringList{"--problems", "*", "--dsls", "triton"} << 2 << "two or more DSL ids";
        QTest::newRow("same dsl twice") << QStringList{"--problems", "*", "--dsls", "cuda,cuda"} << 2 << "twice";
        QTest::newRow("same dsl twice of three")
            << QStringList{"--problems", "*", "--dsls", "triton,cuda,triton"} << 2 << "'triton' twice";
        QTest::newRow("zero replicates") << QStringList{"--problems", "*", "--dsls", "triton,cuda", "--replicates", "0"}
                                         << 2 << "--replicates";
        QTest::newRow("unknown option") << QStringList{"--problems", "*", "--dsls", "triton,cuda", "--fast"} << 2
                                        << "--fast";
        QTest::newRow("missing suite") << QStringList{"--problems",  "*",       "--dsls",
                                                      "triton,cuda", "--suite", "/no/such/suite"}
                                       << 3 << "/no/such/suite";
    }
    void badCommandLinesAreRefused() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, mentions);
        const CliRun run = runMkb(QStringList{"plan"} + args);
        QCOMPARE(run.exitCode, exitCode);
        verifyOneLine(run, mentions);
    }

    void helpSaysPlanOnlyPrints() {
        const CliRun run = runMkb({"plan", "--help"});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.contains("only prints the plan"));
        QVERIFY(run.out.contains("--rerun-stale"));
    }

    void statusesComeFromTheStoreHistory() {
        const Catalog catalog = loadCatalog({mkbtest::sourceDir() / "problems"});
        const Problem* problem = catalog.findByNumber(1);
        QVERIFY(problem);
        const std::filesystem::path storePath = dir_.filePath("history.sqlite").toStdString();
        {
            auto store = Store::open(storePath);
            QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
            auto add = [&](const std::string& coordinateText, TrialStatus status, std::optional<std::string> skill,
                           const std::string& fingerprint, const std::string& sourceSkill) {
                const Coordinate coordinate = parseCoordinate(coordinateText).value();
                TrialRecord trial;
                trial.model = "model-under-test";
                trial.suite = problem->suite;
                trial.problemNumber = problem->number;
                trial.problemSlug = problem->slug;
                trial.family = problem->family;
                trial.replicate = coordinate.replicate;
                trial.arm = coordinate.arm.name();
                trial.dsl = coordinate.arm.dsl;
                trial.coordinate = coordinateText;
                trial.problemFingerprint = fingerprint;
                trial.sourceSkillSha256 = sourceSkill;
                auto id = (*store)->insertTrial(trial);
                QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
                TrialOutcome outcome;
                outcome.status = status;
                outcome.verdict = Verdict{};
                outcome.verdict->stage = "done";
                outcome.verdict->boundary = "mkb"; // the default boundary of mkb plan
                outcome.skillText = std::move(skill);
                outcome.skipped = status == TrialStatus::Skipped;
                if (status == TrialStatus::InfrastructureError) {
                    outcome.verdict.reset();
                    outcome.error = "grader died";
                }
                if (status == TrialStatus::Skipped) {
                    outcome.verdict.reset();
                }
                QVERIFY(status == TrialStatus::Running || (*store)->finishTrial(*id, outcome).ok());
            };
            const std::string current = problem->fingerprint;
            add("p01_r1_solo_triton", TrialStatus::Finished, "triton skill", current, "");
            add("p01_r1_solo_cuda", TrialStatus::InfrastructureError, std::nullopt, current, "");
            add("p01_r1_triton2cuda_skill", TrialStatus::Finished, std::nullopt, current, sha256Hex("triton skill"));
            add("p01_r2_solo_triton", TrialStatus::Finished, std::nullopt, current, "");
            add("p01_r2_solo_cuda", TrialStatus::Finished, "cuda skill", "an older fingerprint", "");
            add("p01_r2_cuda2triton_skill", TrialStatus::Finished, std::nullopt, current, sha256Hex("edited away"));
            add("p01_r3_solo_triton", TrialStatus::Running, std::nullopt, current, "");
        }
        const QStringList args{"plan",
                               "--problems",
                               "p01",
                               "--suite",
                               shippedSuite(),
                               "--dsls",
                               "triton,cuda",
                               "--replicates",
                               "3",
                               "--model",
                               "model-under-test",
                               "--store",
                               QString::fromStdString(storePath.string())};
        const QJsonObject plan = runJson(args);
        const QMap<QString, QString> status = statusByCoordinate(plan);
        QCOMPARE(status["p01_r1_solo_triton"], QString("reuse"));
        QCOMPARE(status["p01_r1_solo_cuda"], QString("rerun"));
        QCOMPARE(status["p01_r1_triton2cuda_skill"], QString("reuse"));
        QCOMPARE(status["p01_r1_cuda2triton_skill"], QString("run"));
        QCOMPARE(status["p01_r2_solo_triton"], QString("reuse"));
        QCOMPARE(status["p01_r2_solo_cuda"], QString("stale"));
        QCOMPARE(status["p01_r2_triton2cuda_skill"], QString("skip"));
        QCOMPARE(status["p01_r2_cuda2triton_skill"], QString("stale"));
        QCOMPARE(status["p01_r3_solo_triton"], QString("rerun"));
        const QJsonObject counts = plan["counts"].toObject();
        QCOMPARE(counts["reuse"].toInt(), 3);
        QCOMPARE(counts["rerun"].toInt(), 2);
        QCOMPARE(counts["stale"].toInt(), 2);
        QCOMPARE(counts["skip"].toInt(), 1);
        QCOMPARE(counts["run"].toInt(), 4);

        const QJsonObject redo = runJson(args + QStringList{"--rerun-stale"});
        QCOMPARE(redo["counts"].toObject()["redo"].toInt(), 2);
        QCOMPARE(redo["counts"].toObject()["stale"].toInt(), 0);

        // another model's history is not this model's
        const QJsonObject other =
            runJson({"plan", "--problems", "p01", "--suite", shippedSuite(), "--dsls", "triton,cuda", "--model",
                     "someone-else", "--store", QString::fromStdString(storePath.string())});
        QCOMPARE(other["counts"].toObject()["run"].toInt(), 4);
    }

    void verdictsOfAnotherBoundaryAreStaleAndThePlanSaysWhy() {
        const Catalog catalog = loadCatalog({mkbtest::sourceDir() / "problems"});
        const Problem* problem = catalog.findByNumber(1);
        QVERIFY(problem);
        const std::filesystem::path storePath = dir_.filePath("boundaries.sqlite").toStdString();
        {
            auto store = Store::open(storePath);
            QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
            for (const auto& [coordinateText, boundary] :
                 {std::pair{"p01_r1_solo_triton", "mkb"}, std::pair{"p01_r1_solo_cuda", "strict"}}) {
                const Coordinate coordinate = parseCoordinate(coordinateText).value();
                TrialRecord trial;
                trial.model = "model-under-test";
                trial.suite = problem->suite;
                trial.problemNumber = problem->number;
                trial.problemSlug = problem->slug;
                trial.family = problem->family;
                trial.replicate = 1;
                trial.arm = coordinate.arm.name();
                trial.dsl = coordinate.arm.dsl;
                trial.coordinate = coordinateText;
                trial.problemFingerprint = problem->fingerprint;
                auto id = (*store)->insertTrial(trial);
                QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
                TrialOutcome outcome;
                outcome.status = TrialStatus::Finished;
                outcome.verdict = Verdict{};
                outcome.verdict->stage = "done";
                outcome.verdict->boundary = boundary;
                QVERIFY((*store)->finishTrial(*id, outcome).ok());
            }
        }
        const QStringList args{"plan",
                               "--problems",
                               "p01",
                               "--suite",
                               shippedSuite(),
                               "--dsls",
                               "triton,cuda",
                               "--model",
                               "model-under-test",
                               "--store",
                               QString::fromStdString(storePath.string())};
        for (const QString& boundary : {QString("mkb"), QString("strict")}) {
            const QJsonObject plan = runJson(args + QStringList{"--boundary", boundary});
            QCOMPARE(plan["boundary"].toString(), boundary);
            const QString other = boundary == "mkb" ? "strict" : "mkb";
            const QString staleOne = boundary == "mkb" ? "p01_r1_solo_cuda" : "p01_r1_solo_triton";
            const QString keptOne = boundary == "mkb" ? "p01_r1_solo_triton" : "p01_r1_solo_cuda";
            for (const QJsonValue& value : plan["entries"].toArray()) {
                const QJsonObject entry = value.toObject();
                if (entry["coordinate"].toString() == staleOne) {
                    QCOMPARE(entry["status"].toString(), QString("stale"));
                    QVERIFY2(entry["reason"].toString().startsWith("boundary " + other + " != " + boundary),
                             qPrintable(entry["reason"].toString()));
                } else if (entry["coordinate"].toString() == keptOne) {
                    QCOMPARE(entry["status"].toString(), QString("reuse"));
                }
            }
        }
        // The default is mkb, and the text plan names the boundary it judged against.
        const CliRun text = runMkb(args);
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("boundary: mkb"), qPrintable(text.out));
        QVERIFY2(text.out.contains("boundary strict != mkb"), qPrintable(text.out));
        const CliRun bad = runMkb(args + QStringList{"--boundary", "legacy"});
        QCOMPARE(bad.exitCode, 2);
        verifyOneLine(bad, "--boundary 'legacy' is not an implementation boundary");
    }

    void corruptStoreIsAStoreError() {
        const QString path = dir_.filePath("corrupt.sqlite");
        {
            std::ofstream file(path.toStdString(), std::ios::binary);
            file << std::string(8192, '\x5a');
        }
        const CliRun run =
            runMkb({"plan", "--problems", "*", "--suite", shippedSuite(), "--dsls", "triton,cuda", "--store", path});
        QCOMPARE(run.exitCode, 4);
        verifyOneLine(run, "corrupt.sqlite");
    }
};

QTEST_GUILESS_MAIN(PlanCliTest)
#include "tst_plan_cli.moc"
