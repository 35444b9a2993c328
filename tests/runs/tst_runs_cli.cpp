// Tests of `mkb run` and `mkb submit` as processes: full runs, reuse, skips, staleness, budgets, wall clock, kill -9
// and Ctrl+C, checked against the store the runs wrote.
#include "core/protocol/planner.h"
#include "core/store/store.h"
#include "core/util/sha256.h"
#include "support/cli_files.h"
#include "support/process_signals.h"
#include "support/testpaths.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <map>
#include <set>

using namespace mkb;

namespace {

using mkbtest::events;
using mkbtest::readText;
using mkbtest::writeText;
QString path(const std::filesystem::path& p) {
    return mkbtest::qpath(p);
}

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
    double seconds = 0;
};

std::vector<TrialRecord> liveTrials(const QString& store, bool includeArchived = false) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return {};
    }
    TrialFilter filter;
    filter.includeArchived = includeArchived;
    auto trials = (*opened)->loadTrials(filter);
    return trials ? *trials : std::vector<TrialRecord>{};
}

/// The store's re-timings: live ones, or all (archived included).
std::vector<RetimingRecord> retimingsIn(const QString& store, bool all = false) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        qWarning("%s", opened.error().message.c_str());
        return {};
    }
    auto records = all ? (*opened)->allRetimings() : (*opened)->liveRetimings();
    return records ? *records : std::vector<RetimingRecord>{};
}

const TrialRecord* byCoordinate(const std::vector<TrialRecord>& trials, const std::string& coordinate) {
    for (const TrialRecord& trial : trials) {
        if (trial.coordinate == coordinate && !trial.archived) {
            return &trial;
        }
    }
    return nullptr;
}

} // namespace

class RunsCliTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int storeCounter_ = 0;

    QString fixtures() const { return path(mkbtest::sourceDir() / "tests" / "fixtures"); }
    QString dslDir() const { return dir_.filePath("dsls"); }
    QString solutions() const { return dir_.filePath("solutions"); }
    QString suite() const { return fixtures() + "/problems"; }
    QString newStore() { return dir_.filePath(QString("store%1.sqlite").arg(++storeCounter_)); }

    QString config(const QString& name, const QJsonObject& settings) {
        const QString file = dir_.filePath(name + ".json");
        writeText(file, QJsonDocument(settings).toJson());
        return file;
    }

    QStringList runArgs(const QString& store, const QString& driver, const QString& driverConfig,
                        const QString& problems, const QString& suiteRoot = {}, int concurrency = 2) const {
        return {"run",
                "--model",
                "testmodel",
                "--driver",
                driver,
                "--driver-config",
                driverConfig,
                "--problems",
                problems,
                "--dsls",
                "cpusim,cpusimb",
                "--suite",
                suiteRoot.isEmpty() ? suite() : suiteRoot,
                "--dsl-dir",
                dslDir(),
                "--device",
                "cpu",
                "--python",
                QString::fromStdString(mkbtest::testPython()),
                "--store",
                store,
                "--timing-draws",
                "5",
                "--concurrency",
                QString::number(concurrency),
                "--progress",
                "json"};
    }

    void startMkb(QProcess& process, const QStringList& args) {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("MKB_DATA_DIR", path(mkbtest::sourceDir()));
        environment.insert("MKB_STORE", dir_.filePath("never-used.sqlite"));
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
    }

    CliRun runMkb(const QStringList& args, int timeoutMs = 120000) {
        QProcess process;
        QElapsedTimer timer;
        timer.start();
        startMkb(process, args);
        if (!process.waitForFinished(timeoutMs)) {
            process.kill();
            process.waitForFinished();
            return {};
        }
        CliRun run;
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        run.seconds = timer.elapsed() / 1000.0;
        return run;
    }

    static int planCount(const CliRun& run, const char* status) {
        const QList<QJsonObject> plans = events(run.out, "plan");
        return plans.isEmpty() ? -1 : plans.front()["plan_counts"].toObject()[status].toInt(-1);
    }

    static void verifyIntegrity(const QString& store) {
        auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
        QVERIFY2(opened.ok(), opened ? "" : opened.error().message.c_str());
        auto problems = (*opened)->integrityCheck();
        QVERIFY(problems.ok());
        QVERIFY2(problems->empty(), problems->empty() ? "" : problems->front().c_str());
    }

    /// Every coordinate of the selection is live exactly once and holds a final result.
    static void verifyComplete(const QString& store, int expectedTrials) {
        const std::vector<TrialRecord> trials = liveTrials(store);
        QCOMPARE(int(trials.size()), expectedTrials);
        std::set<std::string> coordinates;
        for (const TrialRecord& trial : trials) {
            QVERIFY2(coordinates.insert(trial.coordinate).second, trial.coordinate.c_str());
            QVERIFY2(trial.status == TrialStatus::Finished || trial.status == TrialStatus::Skipped,
                     (trial.coordinate + " is " + toString(trial.status)).c_str());
        }
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        // A second CPU DSL: the cpusim descriptor under another id, so both transfer directions exist on CPU.
        const QString written =
            mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax", "03_argmax_rows"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
        // p04 has a solution in cpusim only: the cpusimb attempts find none.
        QVERIFY(writeText(solutions() + "/04_quantize_rows.cpusim.py",
                          readText(fixtures() + "/solutions/04_quantize_rows.cpusim.py")));
    }

    void referenceRunBothDirectionsThenReuse() {
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const CliRun first = runMkb(runArgs(store, "reference", settings, "p0[12]"));
        QVERIFY2(first.exitCode == 0, qPrintable(first.err + first.out));
        QCOMPARE(planCount(first, "run"), 8);
        QCOMPARE(events(first.out, "trial_finished").size(), 8);
        QCOMPARE(events(first.out, "run_finished").front()["status"].toString(), QString("complete"));
        verifyComplete(store, 8);
        verifyIntegrity(store);

        const std::vector<TrialRecord> trials = liveTrials(store);
        for (const TrialRecord& trial : trials) {
            QVERIFY2(trial.finalVerdict && trial.finalVerdict->passed, trial.coordinate.c_str());
            QVERIFY2(trial.skillText && trial.skillText->find("speedup") != std::string::npos,
                     trial.coordinate.c_str());
            if (trial.arm.find("_skill") == std::string::npos) {
                continue;
            }
            // The skill arm was given its source solo's skill, with the transfer header.
            const std::string sourceDsl = trial.arm.substr(0, trial.arm.find('2'));
            const TrialRecord* source = byCoordinate(trials, trial.coordinate.substr(0, 7) + "solo_" + sourceDsl);
            QVERIFY(source);
            QCOMPARE(trial.sourceTrialId.value_or(-1), source->id);
            QCOMPARE(trial.sourceSkillSha256, sha256Hex(*source->skillText));
            const QString transferred =
                readText(dir_.filePath(QString("store%1.attempts/testmodel/%2-t%3/workspace/TRANSFERRED_SKILL.md")
                                           .arg(storeCounter_)
                                           .arg(QString::fromStdString(trial.coordinate))
                                           .arg(trial.id)));
            const QString sourceName = sourceDsl == "cpusim" ? "cpusim (CPU test DSL)" : "cpusim B";
            QVERIFY2(transferred.startsWith("# Skill from " + sourceName +
                                            "\nThis skill was distilled while working on this same problem in a "
                                            "different kernel DSL (" +
                                            sourceName + ").\n\n" + QString::fromStdString(*source->skillText)),
                     qPrintable(transferred));
        }

        const CliRun second = runMkb(runArgs(store, "reference", settings, "p0[12]"));
        QVERIFY2(second.exitCode == 0, qPrintable(second.err));
        QCOMPARE(planCount(second, "reuse"), 8);
        QCOMPARE(events(second.out, "trial_started").size(), 0);
        QCOMPARE(int(liveTrials(store, true).size()), 8);
    }

    void sourceWithoutSkillSkipsItsSkillArm() {
        const QString store = newStore();
        const QString settings =
            config("noskill", {{"solutions_dir", solutions()}, {"no_skill_for", QJsonArray{"cpusimb"}}});
        const CliRun run = runMkb(runArgs(store, "reference", settings, "p01"));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyComplete(store, 4);
        const std::vector<TrialRecord> trials = liveTrials(store);
        const TrialRecord* skipped = byCoordinate(trials, "p01_r1_cpusimb2cpusim_skill");
        QVERIFY(skipped);
        QCOMPARE(skipped->status, TrialStatus::Skipped);
        QVERIFY(skipped->skipped);
        QVERIFY(!skipped->finalVerdict);
        const TrialRecord* ran = byCoordinate(trials, "p01_r1_cpusim2cpusimb_skill");
        QVERIFY(ran && ran->status == TrialStatus::Finished && ran->finalVerdict && ran->finalVerdict->passed);
    }

    void missingSolutionEndsWithNoKernelNotAnInfrastructureError() {
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const CliRun run = runMkb(runArgs(store, "reference", settings, "p04", {}, 1));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyComplete(store, 4);
        const std::vector<TrialRecord> trials = liveTrials(store);
        const TrialRecord* solo = byCoordinate(trials, "p04_r1_solo_cpusim");
        QVERIFY(solo && solo->finalVerdict && solo->finalVerdict->stage != "no_kernel");
        for (const char* coordinate : {"p04_r1_solo_cpusimb", "p04_r1_cpusim2cpusimb_skill"}) {
            const TrialRecord* missing = byCoordinate(trials, coordinate);
            QVERIFY2(missing && missing->status == TrialStatus::Finished, coordinate);
            QVERIFY(missing->finalVerdict && !missing->finalVerdict->passed);
            QVERIFY(!missing->finalVerdict->infrastructureError);
            QCOMPARE(missing->finalVerdict->stage, std::string("no_kernel"));
            QVERIFY2(missing->error.find("no shipped solution") != std::string::npos, missing->error.c_str());
        }
        // The solo without a kernel wrote no skill either: its skill arm is skipped.
        const TrialRecord* skipped = byCoordinate(trials, "p04_r1_cpusimb2cpusim_skill");
        QVERIFY(skipped && skipped->status == TrialStatus::Skipped);
    }

    void editedProblemIsStaleUntilRerunStale() {
        const QString suiteCopy = dir_.filePath("suite-copy");
        const QString problemFile = suiteCopy + "/basic/01_vector_add.py";
        QVERIFY(writeText(problemFile, readText(suite() + "/basic/01_vector_add.py")));
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const CliRun first = runMkb(runArgs(store, "reference", settings, "p01", suiteCopy, 1));
        QVERIFY2(first.exitCode == 0, qPrintable(first.err));

        QVERIFY(writeText(problemFile, readText(problemFile) + "\n# edited: the fingerprint changes\n"));
        const CliRun dry = runMkb(runArgs(store, "reference", settings, "p01", suiteCopy, 1) << "--dry-run");
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.err));
        QCOMPARE(planCount(dry, "stale"), 4);
        QCOMPARE(int(liveTrials(store, true).size()), 4); // a dry run writes nothing

        const CliRun kept = runMkb(runArgs(store, "reference", settings, "p01", suiteCopy, 1));
        QCOMPARE(kept.exitCode, 0);
        QCOMPARE(planCount(kept, "stale"), 4);
        QCOMPARE(events(kept.out, "trial_started").size(), 0);

        const CliRun redone = runMkb(runArgs(store, "reference", settings, "p01", suiteCopy, 1) << "--rerun-stale");
        QVERIFY2(redone.exitCode == 0, qPrintable(redone.err));
        QCOMPARE(planCount(redone, "redo"), 4);
        verifyComplete(store, 4);
        const std::vector<TrialRecord> all = liveTrials(store, true);
        QCOMPARE(int(all.size()), 8);
        QCOMPARE(int(std::count_if(all.begin(), all.end(), [](const TrialRecord& t) { return t.archived; })), 4);
        verifyIntegrity(store);
    }

    void boundaryIsGradedRecordedAndAChangeMakesTrialsStale() {
        // "run --boundary strict: verdicts carry strict; a run under mkb finds them stale, says why, and redoes them
        // under --rerun-stale, archiving the strict ones"
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const CliRun strict = runMkb(runArgs(store, "reference", settings, "p01", {}, 1) << "--boundary"
                                                                                         << "strict");
        QVERIFY2(strict.exitCode == 0, qPrintable(strict.err + strict.out));
        verifyComplete(store, 4);
        for (const TrialRecord& trial : liveTrials(store)) {
            QVERIFY2(trial.finalVerdict && trial.finalVerdict->passed, trial.coordinate.c_str());
            QCOMPARE(trial.finalVerdict->boundary, std::string("strict"));
        }
        // The attempt's workspace states the strict boundary.
        const TrialRecord* solo = byCoordinate(liveTrials(store), "p01_r1_solo_cpusim");
        QVERIFY(solo);
        const QString contract = readText(dir_.filePath(QString("store%1.attempts/testmodel/p01_r1_solo_cpusim-t%2/"
                                                                "workspace/CONTRACT.md")
                                                            .arg(storeCounter_)
                                                            .arg(solo->id)));
        QVERIFY2(contract.contains("Implementation boundary (strict)"), qPrintable(contract));

        const CliRun same = runMkb(runArgs(store, "reference", settings, "p01", {}, 1) << "--boundary"
                                                                                       << "strict");
        QVERIFY2(same.exitCode == 0, qPrintable(same.err));
        QCOMPARE(planCount(same, "reuse"), 4);

        const CliRun dry = runMkb(runArgs(store, "reference", settings, "p01", {}, 1) << "--dry-run");
        QVERIFY2(dry.exitCode == 0, qPrintable(dry.err));
        QCOMPARE(planCount(dry, "stale"), 4);
        // The plan says why: the reason names both boundaries (mkb plan prints the same reasons).
        for (const QJsonValue& entry : events(dry.out, "plan").front()["entries"].toArray()) {
            QVERIFY2(entry.toObject()["reason"].toString().startsWith("boundary strict != mkb"),
                     qPrintable(entry.toObject()["reason"].toString()));
        }

        const CliRun redone = runMkb(runArgs(store, "reference", settings, "p01", {}, 1) << "--rerun-stale");
        QVERIFY2(redone.exitCode == 0, qPrintable(redone.err + redone.out));
        QCOMPARE(planCount(redone, "redo"), 4);
        verifyComplete(store, 4);
        for (const TrialRecord& trial : liveTrials(store, true)) {
            QVERIFY(trial.finalVerdict);
            QCOMPARE(trial.finalVerdict->boundary, std::string(trial.archived ? "strict" : "mkb"));
        }
        const std::vector<TrialRecord> all = liveTrials(store, true);
        QCOMPARE(int(all.size()), 8);
        QCOMPARE(int(std::count_if(all.begin(), all.end(), [](const TrialRecord& t) { return t.archived; })), 4);
        verifyIntegrity(store);

        const CliRun bad = runMkb(runArgs(store, "reference", settings, "p01", {}, 1) << "--boundary"
                                                                                      << "legacy");
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--boundary 'legacy' is not an implementation boundary"), qPrintable(bad.err));
    }

    void commandAgentBudgetIsEnforced() {
        // The agent: one oversized kernel (not counted), then three submissions of the solution with 2 allowed.
        const QString agent = dir_.filePath("budget_agent.sh");
        QVERIFY(
            writeText(agent, "#!/bin/sh\n"
                             "head -c 5000 /dev/zero | tr '\\0' '#' > kernel.py\n"
                             "./submit; echo \"oversize $?\" >> codes.txt\n"
                             "cp '" +
                                 solutions().toUtf8() +
                                 "/01_vector_add.cpusim.py' kernel.py\n"
                                 "for i in 1 2 3; do ./submit > report$i.txt; echo \"submit $?\" >> codes.txt; done\n"
                                 "echo 'Adding vectors is memory bound; the launch overhead dominates.' > SKILL.md\n"));
        const QString store = newStore();
        const QString settings = config("budget", {{"command", "sh " + agent}});
        const CliRun run = runMkb(runArgs(store, "command", settings, "p01") << "--submissions"
                                                                             << "2"
                                                                             << "--max-kernel-bytes"
                                                                             << "3000");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        verifyComplete(store, 4);
        auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
        QVERIFY(opened.ok());
        for (const TrialRecord& trial : liveTrials(store)) {
            QVERIFY2(trial.finalVerdict && trial.finalVerdict->passed, trial.coordinate.c_str());
            QVERIFY(trial.skillText && trial.skillText->find("memory bound") != std::string::npos);
            auto submissions = (*opened)->submissions(trial.id);
            QVERIFY(submissions.ok());
            std::vector<int> indices;
            for (const SubmissionRecord& submission : *submissions) {
                indices.push_back(submission.index);
            }
            std::sort(indices.begin(), indices.end());
            QCOMPARE(indices, (std::vector<int>{0, 1, 2})); // two counted feedback submissions and the final one
            const QString workspace = dir_.filePath(QString("store%1.attempts/testmodel/%2-t%3/workspace")
                                                        .arg(storeCounter_)
                                                        .arg(QString::fromStdString(trial.coordinate))
                                                        .arg(trial.id));
            QCOMPARE(QString(readText(workspace + "/codes.txt")),
                     QString("oversize 5\nsubmit 0\nsubmit 0\nsubmit 5\n"));
            QVERIFY(readText(workspace + "/report3.txt").contains("No feedback submissions left"));
            QVERIFY(readText(workspace + "/report1.txt").contains("Submissions left: 1."));
        }
    }

    void commandAgentIsKilledAtTheWallClock() {
        const QString agent = dir_.filePath("sleepy_agent.sh");
        QVERIFY(writeText(agent, "#!/bin/sh\nsleep 97.25 &\nsleep 97.25\n"));
        const QString store = newStore();
        const QString settings = config("sleepy", {{"command", "sh " + agent}, {"kill_grace_s", 0.5}});
        const CliRun run = runMkb(runArgs(store, "command", settings, "p01") << "--wall-clock"
                                                                             << "1.5");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QVERIFY2(run.seconds < 40, qPrintable(QString::number(run.seconds)));
        for (const TrialRecord& trial : liveTrials(store)) {
            if (trial.status == TrialStatus::Skipped) {
                continue; // a timed-out source wrote no skill
            }
            QVERIFY2(trial.timedOut, trial.coordinate.c_str());
            QVERIFY(trial.finalVerdict && !trial.finalVerdict->passed);
            QCOMPARE(trial.finalVerdict->stage, std::string("no_kernel"));
        }
        QCOMPARE(int(liveTrials(store).size()), 4);
        // No sleeper survives: the whole process group was killed.
        QProcess pgrep;
        pgrep.start("pgrep", {"-f", "sleep 97.25"});
        pgrep.waitForFinished();
        QCOMPARE(QString(pgrep.readAllStandardOutput()).trimmed(), QString());
    }

    void eachCellIsRetimedOnceItsArmsAreFinalWhileLaterTrialsRun() {
        // "run: a cell is re-timed as soon as its source, base and skill arms are final, before later cells finish"
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const CliRun run = runMkb(runArgs(store, "reference", settings, "p0[12]", {}, 1), 300000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        int firstRetimed = -1;
        int lastTrialFinished = -1;
        int retimed = 0;
        std::map<QString, int> skillFinishedAt; // "p01 r1 cpusim2cpusimb" -> event position
        const QStringList lines = run.out.split('\n', Qt::SkipEmptyParts);
        for (int at = 0; at < lines.size(); ++at) {
            const QJsonObject event = QJsonDocument::fromJson(lines[at].toUtf8()).object();
            const QString kind = event["event"].toString();
            if (kind == "trial_finished") {
                lastTrialFinished = at;
                const QString coordinate = event["coordinate"].toString(); // p01_r1_cpusim2cpusimb_skill
                if (coordinate.endsWith("_skill")) {
                    const QStringList parts = coordinate.split('_');
                    skillFinishedAt[parts[0] + " " + parts[1] + " " + parts[2]] = at;
                }
            } else if (kind == "retimed") {
                ++retimed;
                firstRetimed = firstRetimed < 0 ? at : firstRetimed;
                // "testmodel p01 r1 cpusim2cpusimb": re-timed only after its own skill arm finished.
                const QString cell = event["cell"].toString().section(' ', 1);
                QVERIFY2(skillFinishedAt.count(cell) && skillFinishedAt[cell] < at, qPrintable(lines[at]));
            }
        }
        QVERIFY2(retimed == 4, qPrintable(QString("%1 retimed events, not 4:\n%2").arg(retimed).arg(run.out)));
        QVERIFY2(firstRetimed >= 0 && firstRetimed < lastTrialFinished,
                 qPrintable(QString("first retimed event at %1, last trial_finished at %2:\n%3")
                                .arg(firstRetimed)
                                .arg(lastTrialFinished)
                                .arg(run.out)));
        QVERIFY2(run.out.contains("4 cells re-timed"), qPrintable(run.out));
        QCOMPARE(int(retimingsIn(store).size()), 4);
    }

    void killedRunRetimesTheRestOnResumeWithoutDuplicates() {
        // "run: killed after its first re-timing, the next run re-times only the cells left, each cell once"
        const QString store = newStore();
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        const QStringList args = runArgs(store, "reference", settings, "p01", {}, 1);
        QProcess process;
        startMkb(process, args);
        QVERIFY(process.waitForStarted());
        QString out;
        QElapsedTimer timer;
        timer.start();
        while (events(out, "retimed").isEmpty() && timer.elapsed() < 180000) {
            process.waitForReadyRead(100);
            out += QString::fromUtf8(process.readAllStandardOutput());
        }
        QVERIFY2(!events(out, "retimed").isEmpty(), qPrintable(out));
        mkbtest::signalIfRunning(process, SIGKILL);
        process.waitForFinished();
        verifyIntegrity(store);
        const int before = int(retimingsIn(store).size());
        QVERIFY(before >= 1);
        const CliRun resumed = runMkb(args, 300000);
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err + resumed.out));
        verifyComplete(store, 4);
        QCOMPARE(int(events(resumed.out, "retimed").size()), 2 - before);
        QCOMPARE(int(retimingsIn(store).size()), 2);
        QCOMPARE(int(retimingsIn(store, true).size()), 2); // nothing re-timed twice (an archived record would be)
    }

    void killNineAtRandomPointsConverges() {
        const QString settings = config("reference", {{"solutions_dir", solutions()}});
        for (int round = 0; round < 3; ++round) {
            const QString store = newStore();
            const QStringList args = runArgs(store, "reference", settings, "p0[12]");
            // Round 0 counts from the start (startup, planning); round 1 from the first attempt; round 2 from the
            // first finished trial, so that finished trials exist when the kill lands.
            QProcess process;
            startMkb(process, args);
            QVERIFY(process.waitForStarted());
            const char* anchor = round == 0 ? nullptr : round == 1 ? "trial_started" : "trial_finished";
            QString out;
            QElapsedTimer timer;
            timer.start();
            while (anchor && events(out, anchor).isEmpty() && timer.elapsed() < 90000) {
                process.waitForReadyRead(100);
                out += QString::fromUtf8(process.readAllStandardOutput());
            }
            QVERIFY(!anchor || !events(out, anchor).isEmpty());
            const int delayMs = 200 + int(QRandomGenerator::global()->bounded(2800));
            QTest::qWait(delayMs);
            // On a fast machine the run may already be over; then there is nothing to kill (and its pid is 0).
            const bool killed = mkbtest::signalIfRunning(process, SIGKILL);
            process.waitForFinished();
            const QString context = QString("round %1, %2 %3 ms after %4")
                                        .arg(round)
                                        .arg(killed ? "killed" : "finished before the kill")
                                        .arg(delayMs)
                                        .arg(anchor ? anchor : "start");
            std::set<std::int64_t> finishedBefore;
            if (QFile::exists(store)) {
                for (const TrialRecord& trial : liveTrials(store)) {
                    if (trial.status == TrialStatus::Finished) {
                        finishedBefore.insert(trial.id);
                    }
                }
                verifyIntegrity(store);
            }
            const CliRun resumed = runMkb(args);
            QVERIFY2(resumed.exitCode == 0, qPrintable(context + ": " + resumed.err + resumed.out));
            verifyComplete(store, 8);
            verifyIntegrity(store);
            // No finished trial was lost or redone: each is still the live record of its coordinate.
            const std::vector<TrialRecord> live = liveTrials(store);
            for (std::int64_t id : finishedBefore) {
                QVERIFY2(std::any_of(live.begin(), live.end(), [&](const TrialRecord& t) { return t.id == id; }),
                         qPrintable(context + QString(": finished trial #%1 is no longer live").arg(id)));
            }
            qInfo("%s: %zu trials finished before the kill, %d reused after", qPrintable(context),
                  finishedBefore.size(), planCount(resumed, "reuse"));
        }
    }

    void ctrlCMarksInterruptedAndRerunResumes() {
        const QString agent = dir_.filePath("slow_agent.sh");
        QVERIFY(writeText(agent, "#!/bin/sh\nif [ -f '" + dir_.filePath("fast").toUtf8() + "' ]; then cp '" +
                                     solutions().toUtf8() +
                                     "/01_vector_add.cpusim.py' kernel.py; echo 'skill' > SKILL.md; exit 0; fi\n"
                                     "sleep 60\n"));
        const QString store = newStore();
        const QString settings = config("slow", {{"command", "sh " + agent}, {"kill_grace_s", 0.5}});
        const QStringList args = runArgs(store, "command", settings, "p01");
        QProcess process;
        startMkb(process, args);
        QVERIFY(process.waitForStarted());
        QString out;
        QElapsedTimer timer;
        timer.start();
        while (events(out, "trial_started").size() < 2 && timer.elapsed() < 60000) {
            process.waitForReadyRead(200);
            out += QString::fromUtf8(process.readAllStandardOutput());
        }
        QCOMPARE(events(out, "trial_started").size(), 2);
        QVERIFY(mkbtest::signalIfRunning(process, SIGINT));
        QVERIFY(process.waitForFinished(30000));
        out += QString::fromUtf8(process.readAllStandardOutput());
        QCOMPARE(process.exitCode(), 130);
        QCOMPARE(events(out, "run_finished").front()["status"].toString(), QString("interrupted"));
        int interrupted = 0;
        for (const TrialRecord& trial : liveTrials(store)) {
            interrupted += trial.status == TrialStatus::Interrupted ? 1 : 0;
        }
        QCOMPARE(interrupted, 2);
        verifyIntegrity(store);

        QVERIFY(writeText(dir_.filePath("fast"), "1"));
        const CliRun resumed = runMkb(args);
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err + resumed.out));
        QCOMPARE(planCount(resumed, "rerun"), 2);
        verifyComplete(store, 4);
        QCOMPARE(int(liveTrials(store, true).size()), 6); // the two interrupted rows are archived, not deleted
    }

    void submitOutsideAnAttemptIsOneClearLine() {
        const CliRun run = runMkb({"submit"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.startsWith("mkb: ") && run.err.count('\n') == 1, qPrintable(run.err));
        QVERIFY(run.err.contains("MKB_SUBMIT_SOCKET"));
    }
};

QTEST_GUILESS_MAIN(RunsCliTest)
#include "tst_runs_cli.moc"
