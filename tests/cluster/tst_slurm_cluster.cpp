// `mkb run --executor slurm` against a real single-node Slurm cluster the test starts: a two-direction run over CPU
// problems (each trial's job id and Slurm states in the JSON progress stream), coordinator kill -9 and scancel
// convergence, and every shard merged exactly once.
#include "core/store/store.h"
#include "core/util/sha256.h"
#include "slurm_cluster.h"
#include "support/cli_files.h"
#include "support/process_signals.h"
#include "support/testpaths.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <set>

using namespace mkb;

namespace {

using mkbtest::events;
using mkbtest::readText;
using mkbtest::writeText;
QString path(const std::filesystem::path& p) {
    return mkbtest::qpath(p);
}

/// The job_state events of the stream, as "job_id state" in order, by coordinate.
QMap<QString, QStringList> jobStatesByCoordinate(const QString& out) {
    QMap<QString, QStringList> states;
    for (const QJsonObject& event : events(out, "job_state")) {
        states[event["coordinate"].toString()].push_back(event["job_id"].toString() + " " +
                                                         event["job_state"].toString());
    }
    return states;
}

/// Every trial event of a Slurm run names its job as "<array>_<task>" and the state Slurm last reported.
bool trialEventsNameTheirJobs(const QString& out, QString& why) {
    static const QRegularExpression arrayTask("^[0-9]+_[0-9]+$");
    for (const char* kind : {"trial_started", "trial_finished", "job_state"}) {
        for (const QJsonObject& event : events(out, kind)) {
            if (!arrayTask.match(event["job_id"].toString()).hasMatch() || event["job_state"].toString().isEmpty()) {
                why = QString("%1 without its job: %2").arg(kind, QString(QJsonDocument(event).toJson()));
                return false;
            }
        }
    }
    return true;
}

std::vector<TrialRecord> trialsOf(const QString& store, bool includeArchived) {
    auto opened = Store::open(store.toStdString(), OpenMode::MustExist);
    if (!opened) {
        return {};
    }
    TrialFilter filter;
    filter.includeArchived = includeArchived;
    auto trials = (*opened)->loadTrials(filter);
    return trials ? *trials : std::vector<TrialRecord>{};
}

/// Files under dir whose name ends with suffix (recursively).
QStringList filesUnder(const QString& dir, const QString& suffix) {
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        if (file.endsWith(suffix)) {
            found.push_back(file);
        }
    }
    return found;
}

struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

} // namespace

class SlurmClusterTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    mkbtest::SlurmCluster cluster_;
    int counter_ = 0;

    QString fixtures() const { return path(mkbtest::sourceDir() / "tests" / "fixtures"); }

    QStringList runArgs(const QString& store, const QString& shared, const QString& problems) const {
        return {"run",
                "--model",
                "testmodel",
                "--driver",
                "reference",
                "--driver-config",
                dir_.filePath("reference.json"),
                "--problems",
                problems,
                "--dsls",
                "cpusim,cpusimb",
                "--suite",
                fixtures() + "/problems",
                "--dsl-dir",
                dir_.filePath("dsls"),
                "--device",
                "cpu",
                "--python",
                QString::fromStdString(mkbtest::testPython()),
                "--store",
                store,
                "--timing-draws",
                "5",
                "--progress",
                "json",
                "--executor",
                "slurm",
                "--shared",
                shared,
                "--slurm-gpu",
                "none",
                "--slurm-poll",
                "0.5"};
    }

    void startMkb(QProcess& process, const QStringList& args) {
        QProcessEnvironment environment = cluster_.environment();
        environment.insert("MKB_DATA_DIR", path(mkbtest::sourceDir()));
        environment.insert("MKB_STORE", dir_.filePath("never-used.sqlite"));
        process.setProcessEnvironment(environment);
        process.start(QString::fromStdString(mkbtest::cliPath()), args);
    }

    CliRun runMkb(const QStringList& args, int timeoutMs = 150000) {
        QProcess process;
        startMkb(process, args);
        CliRun run;
        if (!process.waitForFinished(timeoutMs)) {
            mkbtest::signalIfRunning(process, SIGKILL);
            process.waitForFinished();
            run.err = "timed out; " + QString::fromUtf8(process.readAllStandardError());
            return run;
        }
        run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2;
        run.out = QString::fromUtf8(process.readAllStandardOutput());
        run.err = QString::fromUtf8(process.readAllStandardError());
        return run;
    }

    /// Reads a running coordinator's stdout until an event of kind arrives (or the time is up).
    static bool waitForEvent(QProcess& process, QString& out, const QString& kind, int timeoutMs) {
        QElapsedTimer timer;
        timer.start();
        while (events(out, kind).isEmpty() && timer.elapsed() < timeoutMs && process.state() == QProcess::Running) {
            process.waitForReadyRead(200);
            out += QString::fromUtf8(process.readAllStandardOutput());
        }
        return !events(out, kind).isEmpty();
    }

    QString newName(const char* what) { return dir_.filePath(QString("%1%2").arg(what).arg(++counter_)); }

    /// Every coordinate of p01 is live once and final, skill arms link to their solos, nothing was archived, and
    /// each trial came from exactly one merged shard.
    void verifyConverged(const QString& store, const QString& shared, int expected) {
        const std::vector<TrialRecord> live = trialsOf(store, false);
        QCOMPARE(int(live.size()), expected);
        QCOMPARE(int(trialsOf(store, true).size()), expected); // nothing duplicated: no archived copies
        std::set<std::string> coordinates;
        std::set<std::string> origins;
        for (const TrialRecord& trial : live) {
            QVERIFY2(coordinates.insert(trial.coordinate).second, trial.coordinate.c_str());
            QVERIFY2(trial.status == TrialStatus::Finished, (trial.coordinate + " " + toString(trial.status)).c_str());
            QVERIFY2(trial.finalVerdict && trial.finalVerdict->passed, trial.coordinate.c_str());
            QVERIFY2(trial.origin.rfind("mkb-shard:", 0) == 0, trial.origin.c_str());
            QVERIFY(origins.insert(trial.origin).second);
            if (trial.arm.find("_skill") != std::string::npos) {
                const std::string sourceDsl = trial.arm.substr(0, trial.arm.find('2'));
                const std::string sourceCoordinate = trial.coordinate.substr(0, 7) + "solo_" + sourceDsl;
                const auto source = std::find_if(
                    live.begin(), live.end(), [&](const TrialRecord& t) { return t.coordinate == sourceCoordinate; });
                QVERIFY(source != live.end());
                QCOMPARE(trial.sourceTrialId.value_or(-1), source->id);
                QVERIFY(source->skillText);
                QCOMPARE(trial.sourceSkillSha256, sha256Hex(*source->skillText));
            }
        }
        QCOMPARE(int(filesUnder(shared + "/merged", ".json").size()), expected);
        QCOMPARE(int(filesUnder(shared + "/shards", ".json").size()), 0);
    }

    /// Trials submitted to Slurm, over every batch of the shared folder.
    static int submittedTasks(const QString& shared) {
        int tasks = 0;
        for (const QString& batch : filesUnder(shared + "/batches", "/batch.json")) {
            tasks += QJsonDocument::fromJson(readText(batch)).object()["tasks"].toArray().size();
        }
        return tasks;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        if (const QString missing = mkbtest::SlurmCluster::missingPrerequisite(); !missing.isEmpty()) {
            QSKIP(qPrintable(missing));
        }
        QString why;
        QVERIFY2(cluster_.start(why), qPrintable(why));
        const QString written = mkbtest::writeCpusimPair(dir_.path(), {"01_vector_add", "02_row_softmax"});
        QVERIFY2(written.isEmpty(), qPrintable(written));
        QVERIFY(writeText(dir_.filePath("reference.json"),
                          QJsonDocument(QJsonObject{{"solutions_dir", dir_.filePath("solutions")}}).toJson()));
    }

    void cleanupTestCase() { cluster_.stop(); }

    void twoDirectionRunThroughSlurmThenReuse() {
        const QString store = newName("store") + ".sqlite";
        const QString shared = newName("shared");
        const CliRun first = runMkb(runArgs(store, shared, "p01"));
        QVERIFY2(first.exitCode == 0, qPrintable(first.err + first.out + cluster_.logs()));
        QCOMPARE(events(first.out, "plan").front()["plan_counts"].toObject()["run"].toInt(), 4);
        QCOMPARE(events(first.out, "trial_finished").size(), 4);
        QCOMPARE(events(first.out, "run_finished").front()["status"].toString(), QString("complete"));
        // Each trial's job: queued as PENDING when sbatch took it, COMPLETED once its shard was merged, and the same
        // job id on its trial_finished.
        QString why;
        QVERIFY2(trialEventsNameTheirJobs(first.out, why), qPrintable(why));
        const QMap<QString, QStringList> jobStates = jobStatesByCoordinate(first.out);
        QCOMPARE(jobStates.size(), 4);
        for (const QJsonObject& finished : events(first.out, "trial_finished")) {
            const QStringList states = jobStates.value(finished["coordinate"].toString());
            const QString job = finished["job_id"].toString();
            QVERIFY2(states.size() >= 2 && states.front() == job + " PENDING" && states.back() == job + " COMPLETED",
                     qPrintable(finished["coordinate"].toString() + ": " + states.join(", ")));
        }
        // Solos first (one array), then each skill arm once its source was merged (one or two more arrays).
        const int arrays = int(filesUnder(shared + "/batches", "/job_id").size());
        QVERIFY2(arrays == 2 || arrays == 3, qPrintable(QString::number(arrays)));
        QCOMPARE(submittedTasks(shared), 4);
        verifyConverged(store, shared, 4);

        const CliRun second = runMkb(runArgs(store, shared, "p01"));
        QVERIFY2(second.exitCode == 0, qPrintable(second.err));
        QCOMPARE(events(second.out, "plan").front()["plan_counts"].toObject()["reuse"].toInt(), 4);
        QCOMPARE(submittedTasks(shared), 4); // nothing submitted again
        verifyConverged(store, shared, 4);
    }

    void coordinatorKilledNineConvergesOnTheNextRun() {
        const QString store = newName("store") + ".sqlite";
        const QString shared = newName("shared");
        const QStringList args = runArgs(store, shared, "p01");
        QProcess coordinator;
        startMkb(coordinator, args);
        QVERIFY(coordinator.waitForStarted());
        QString out;
        QVERIFY2(waitForEvent(coordinator, out, "trial_started", 90000), qPrintable(out));
        QVERIFY(mkbtest::signalIfRunning(coordinator, SIGKILL));
        coordinator.waitForFinished();
        // The jobs it submitted run on without it; the next run follows them instead of submitting them again.
        const CliRun resumed = runMkb(args);
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err + resumed.out));
        verifyConverged(store, shared, 4);
        QCOMPARE(submittedTasks(shared), 4);
    }

    void scancelledJobsAreResubmittedByTheNextRun() {
        const QString store = newName("store") + ".sqlite";
        const QString shared = newName("shared");
        const QStringList args = runArgs(store, shared, "p01");
        // A drained node keeps the jobs pending, so the cancel lands before any of them ran.
        cluster_.slurm({"scontrol", "update", "nodename=mkbnode", "state=drain", "reason=mkb-test"});
        QProcess coordinator;
        startMkb(coordinator, args);
        QVERIFY(coordinator.waitForStarted());
        QElapsedTimer timer;
        timer.start();
        QStringList jobIds;
        while (jobIds.isEmpty() && timer.elapsed() < 60000) {
            QTest::qWait(200);
            jobIds = filesUnder(shared + "/batches", "/job_id");
        }
        QVERIFY(!jobIds.isEmpty());
        const QString arrayId = QString::fromUtf8(readText(jobIds.front())).trimmed();
        cluster_.slurm({"scancel", arrayId});
        QVERIFY(coordinator.waitForFinished(60000));
        const QString out = QString::fromUtf8(coordinator.readAllStandardOutput());
        QCOMPARE(coordinator.exitCode(), 5);
        QCOMPARE(events(out, "run_finished").front()["status"].toString(), QString("incomplete"));
        const QList<QJsonObject> lost = events(out, "trial_finished");
        QCOMPARE(lost.size(), 2);
        QVERIFY2(lost.front()["message"].toString().contains("CANCELLED"), qPrintable(out));
        QString why;
        QVERIFY2(trialEventsNameTheirJobs(out, why), qPrintable(why));
        for (const QJsonObject& trial : lost) {
            QCOMPARE(trial["job_state"].toString(), QString("CANCELLED"));
            QVERIFY2(jobStatesByCoordinate(out)
                         .value(trial["coordinate"].toString())
                         .endsWith(trial["job_id"].toString() + " CANCELLED"),
                     qPrintable(out));
        }
        QCOMPARE(int(trialsOf(store, true).size()), 0);

        cluster_.slurm({"scontrol", "update", "nodename=mkbnode", "state=resume"});
        const CliRun resumed = runMkb(args);
        QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err + resumed.out + cluster_.logs()));
        verifyConverged(store, shared, 4);
    }
};

QTEST_GUILESS_MAIN(SlurmClusterTest)
#include "tst_slurm_cluster.moc"
