// Tests of the convergent planner: every status, dependency edges, skipped skill arms and convergence.
#include "core/protocol/planner.h"
#include "core/util/sha256.h"

#include <QtTest>

#include <functional>

using namespace mkb;

namespace {

const std::string kModel = "model-x";
const std::string kGrader = "grader-fingerprint-1";

Problem makeProblem(int number, const std::string& source) {
    Problem problem;
    problem.suite = "problems";
    problem.number = number;
    problem.family = "attention";
    problem.slug = "case_" + std::to_string(number);
    problem.title = "A test problem.";
    problem.source = source;
    problem.fingerprint = sha256Hex(source);
    return problem;
}

PlanRequest makeRequest(std::vector<Problem> problems, int replicates = 1) {
    PlanRequest request;
    request.model = kModel;
    request.problems = std::move(problems);
    request.dslA = "triton";
    request.dslB = "cuda";
    request.replicates = replicates;
    request.graderFingerprint = kGrader;
    return request;
}

/// A store in miniature: applies what a plan asks for, the way `mkb run` will.
class History {
public:
    std::vector<TrialRecord> trials;

    /// A finished, valid record at the coordinate, current with the problem, grader and the default boundary.
    TrialRecord& addFinished(const Problem& problem, const std::string& coordinateText,
                             std::optional<std::string> skillText = std::nullopt) {
        const Coordinate coordinate = parseCoordinate(coordinateText).value();
        TrialRecord record;
        record.id = nextId_++;
        record.model = kModel;
        record.suite = problem.suite;
        record.problemNumber = problem.number;
        record.problemSlug = problem.slug;
        record.family = problem.family;
        record.replicate = coordinate.replicate;
        record.arm = coordinate.arm.name();
        record.dsl = coordinate.arm.dsl;
        record.coordinate = coordinateText;
        record.status = TrialStatus::Finished;
        record.problemFingerprint = problem.fingerprint;
        record.graderFingerprint = kGrader;
        record.finalVerdict = Verdict{};
        record.finalVerdict->stage = "done";
        record.finalVerdict->boundary = "mkb"; // the default boundary of a request
        record.skillText = std::move(skillText);
        if (coordinate.arm.isSkill()) {
            const std::string source =
                formatCoordinate(Coordinate{problem.number, coordinate.replicate, soloArm(coordinate.arm.sourceDsl)});
            if (const TrialRecord* sourceRecord = live(source)) {
                record.sourceTrialId = sourceRecord->id;
                record.sourceSkillSha256 = skillSha256(sourceRecord->skillText);
            }
        }
        trials.push_back(record);
        return trials.back();
    }

    TrialRecord* live(const std::string& coordinateText) {
        for (TrialRecord& record : trials) {
            if (!record.archived && record.coordinate == coordinateText) {
                return &record;
            }
        }
        return nullptr;
    }

    /// Carries out every entry in plan order; solos write a skill unless `writesSkill` says otherwise.
    void execute(const Plan& plan, const PlanRequest& request,
                 const std::function<bool(const std::string&)>& writesSkill) {
        for (const PlanEntry& entry : plan.entries) {
            if (!startsAttempt(entry.status) && entry.status != PlanStatus::Skip) {
                continue;
            }
            if (TrialRecord* old = live(entry.coordinateText)) {
                old->archived = true; // rerun, redo and skip replace the live record; nothing is deleted
            }
            const Problem& problem =
                *std::find_if(request.problems.begin(), request.problems.end(),
                              [&](const Problem& p) { return p.number == entry.coordinate.problemNumber; });
            if (!entry.coordinate.arm.isSkill()) {
                addFinished(problem, entry.coordinateText,
                            writesSkill(entry.coordinateText)
                                ? std::optional<std::string>("skill of " + entry.coordinateText + " v" +
                                                             std::to_string(nextId_))
                                : std::nullopt);
                continue;
            }
            TrialRecord& record = addFinished(problem, entry.coordinateText);
            if (record.sourceSkillSha256.empty()) {
                record.status = TrialStatus::Skipped; // decided once the source has finished
                record.skipped = true;
                record.finalVerdict.reset();
            }
        }
    }

    Plan plan(const PlanRequest& request) const { return makePlan(request, trials, contextFromTrials(trials)); }

private:
    std::int64_t nextId_ = 1;
};

bool always(const std::string&) {
    return true;
}

// QTest would find mkb::toString(enum) by ADL and free its static string, so statuses are compared by name.
QString named(PlanStatus status) {
    return toString(status);
}
QString named(TrialStatus status) {
    return toString(status);
}

PlanStatus statusOf(const Plan& plan, const std::string& coordinateText) {
    const PlanEntry* entry = plan.find(coordinateText);
    if (!entry) {
        qFatal("no plan entry for %s", coordinateText.c_str());
    }
    return entry->status;
}

QString describe(const Plan& plan) {
    QString text;
    for (const PlanEntry& entry : plan.entries) {
        text += QString::fromStdString(entry.coordinateText + " " + toString(entry.status) + " " + entry.reason + "\n");
    }
    return text;
}

} // namespace

class PlannerTest : public QObject {
    Q_OBJECT
private slots:
    void emptyHistoryRunsEveryTrialSolosFirst() {
        const PlanRequest request = makeRequest({makeProblem(2, "b"), makeProblem(1, "a")}, 2);
        const Plan plan = makePlan(request, {}, {});
        QCOMPARE(plan.entries.size(), std::size_t(2 * 2 * 4));
        QCOMPARE(plan.count(PlanStatus::Run), 16);
        for (std::size_t i = 0; i < plan.entries.size(); ++i) {
            QCOMPARE(plan.entries[i].coordinate.arm.isSkill(), i >= 8); // all solos before any skill arm
        }
        QCOMPARE(plan.entries.front().coordinateText, std::string("p01_r1_solo_triton"));
        QCOMPARE(plan.entries[8].coordinateText, std::string("p01_r1_triton2cuda_skill"));
    }

    void skillArmWaitsForItsSourceSoloThatWillRun() {
        const PlanRequest request = makeRequest({makeProblem(1, "a")});
        const Plan plan = makePlan(request, {}, {});
        const auto edges = plan.dependencies();
        QCOMPARE(edges.size(), std::size_t(2));
        for (auto [waiting, waitedFor] : edges) {
            const PlanEntry& skill = plan.entries[waiting];
            const PlanEntry& source = plan.entries[waitedFor];
            QVERIFY(skill.coordinate.arm.isSkill());
            QCOMPARE(source.coordinate.arm, soloArm(skill.coordinate.arm.sourceDsl));
            QCOMPARE(named(skill.status), named(PlanStatus::Run));
            QVERIFY(waitedFor < waiting);
            QVERIFY(QString::fromStdString(skill.reason)
                        .contains("waits for " + QString::fromStdString(source.coordinateText)));
        }
    }

    void validRecordIsReused() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton", "skill");
        const Plan plan = history.plan(makeRequest({problem}));
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Reuse));
        QCOMPARE(plan.find("p01_r1_solo_triton")->liveTrialId, std::optional<std::int64_t>(1));
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_cuda")), named(PlanStatus::Run));
        // its skill arm has a finished source with a skill: it runs now, waiting for nobody
        const PlanEntry* skill = plan.find("p01_r1_triton2cuda_skill");
        QCOMPARE(named(skill->status), named(PlanStatus::Run));
        QVERIFY(!skill->waitsForSource);
        QCOMPARE(skill->sourceSkillSha256, sha256Hex("skill"));
        QCOMPARE(skillSha256(std::string(" \n\t")), std::string()); // a blank SKILL.md is no skill
        QCOMPARE(skillSha256(std::nullopt), std::string());
        QCOMPARE(plan.count(PlanStatus::Reuse), 1);
        QCOMPARE(plan.count(PlanStatus::Run), 3);
    }

    void brokenRecordIsRerun_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<bool>("verdictInfraError");
        QTest::addColumn<QString>("reason");
        QTest::newRow("infrastructure error")
            << int(TrialStatus::InfrastructureError) << false << "infrastructure error";
        QTest::newRow("interrupted") << int(TrialStatus::Interrupted) << false << "interrupted";
        QTest::newRow("running from a crashed invocation") << int(TrialStatus::Running) << false << "running";
        QTest::newRow("finished with an infrastructure verdict")
            << int(TrialStatus::Finished) << true << "infrastructure error";
    }
    void brokenRecordIsRerun() {
        QFETCH(int, status);
        QFETCH(bool, verdictInfraError);
        QFETCH(QString, reason);
        const Problem problem = makeProblem(1, "a");
        History history;
        TrialRecord& record = history.addFinished(problem, "p01_r1_solo_cuda");
        record.status = TrialStatus(status);
        record.finalVerdict->infrastructureError = verdictInfraError;
        const Plan plan = history.plan(makeRequest({problem}));
        const PlanEntry* entry = plan.find("p01_r1_solo_cuda");
        QCOMPARE(named(entry->status), named(PlanStatus::Rerun));
        QCOMPARE(entry->liveTrialId, std::optional<std::int64_t>(record.id));
        QVERIFY2(QString::fromStdString(entry->reason).contains(reason), entry->reason.c_str());
        QCOMPARE(plan.count(PlanStatus::Rerun), 1);
    }

    void changedProblemMakesRecordStale() {
        History history;
        history.addFinished(makeProblem(1, "old text"), "p01_r1_solo_cuda");
        const Plan plan = history.plan(makeRequest({makeProblem(1, "new text")}));
        const PlanEntry* entry = plan.find("p01_r1_solo_cuda");
        QCOMPARE(named(entry->status), named(PlanStatus::Stale));
        QVERIFY2(QString::fromStdString(entry->reason).contains("problem changed"), entry->reason.c_str());
        QCOMPARE(plan.count(PlanStatus::Stale), 1);
    }

    void changedGraderMakesRecordStale() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_cuda");
        PlanRequest request = makeRequest({problem});
        request.graderFingerprint = "grader-fingerprint-2";
        const Plan plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_cuda")), named(PlanStatus::Stale));
        QVERIFY(QString::fromStdString(plan.find("p01_r1_solo_cuda")->reason).contains("grader changed"));

        request.graderFingerprint.clear(); // unknown grader: no judgement on it
        QCOMPARE(named(statusOf(history.plan(request), "p01_r1_solo_cuda")), named(PlanStatus::Reuse));
    }

    void verdictOfAnotherBoundaryIsStaleNamingBoth() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_cuda").finalVerdict->boundary = "strict";
        history.addFinished(problem, "p01_r1_solo_triton");
        PlanRequest request = makeRequest({problem});
        request.boundary = "mkb";
        Plan plan = history.plan(request);
        const PlanEntry* strictOne = plan.find("p01_r1_solo_cuda");
        QCOMPARE(named(strictOne->status), named(PlanStatus::Stale));
        QVERIFY2(strictOne->reason.find("boundary strict != mkb") == 0, strictOne->reason.c_str());
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Reuse));

        request.boundary = "strict";
        plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_cuda")), named(PlanStatus::Reuse));
        QVERIFY2(plan.find("p01_r1_solo_triton")->reason.find("boundary mkb != strict") == 0,
                 plan.find("p01_r1_solo_triton")->reason.c_str());

        request.rerunStale = true; // the existing rule for stale records: archive, then run
        plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Redo));
        QVERIFY(plan.find("p01_r1_solo_triton")->reason.find("archive, then run") != std::string::npos);

        request.boundary.clear(); // no boundary given: records are not judged by it
        request.rerunStale = false;
        plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_cuda")), named(PlanStatus::Reuse));
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Reuse));
    }

    void legacyVerdictIsStaleUnderEitherBoundary_data() {
        QTest::addColumn<QString>("boundary");
        QTest::newRow("mkb") << "mkb";
        QTest::newRow("strict") << "strict";
    }
    void legacyVerdictIsStaleUnderEitherBoundary() {
        QFETCH(QString, boundary);
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_cuda").finalVerdict->boundary = "legacy";
        PlanRequest request = makeRequest({problem});
        request.boundary = boundary.toStdString();
        const Plan plan = history.plan(request);
        const PlanEntry* entry = plan.find("p01_r1_solo_cuda");
        QCOMPARE(named(entry->status), named(PlanStatus::Stale));
        QVERIFY2(entry->reason.find("boundary legacy != " + request.boundary) == 0, entry->reason.c_str());
    }

    void fingerprintMarkedWithItsBoundaryIsJudgedByTheGraderPart() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_cuda").graderFingerprint = kGrader + "+mkb";
        PlanRequest request = makeRequest({problem});
        QCOMPARE(named(statusOf(history.plan(request), "p01_r1_solo_cuda")), named(PlanStatus::Reuse));
        request.graderFingerprint = "grader-fingerprint-2";
        const Plan plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_cuda")), named(PlanStatus::Stale));
        QVERIFY(plan.find("p01_r1_solo_cuda")->reason.find("grader changed") == 0);
    }

    void skillArmGoesStaleWhenSourceSkillChanges() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton", "first skill");
        history.addFinished(problem, "p01_r1_solo_cuda", "other skill");
        history.addFinished(problem, "p01_r1_triton2cuda_skill");
        history.addFinished(problem, "p01_r1_cuda2triton_skill");
        QVERIFY(history.plan(makeRequest({problem})).converged());

        history.live("p01_r1_solo_triton")->skillText = "edited skill";
        const Plan plan = history.plan(makeRequest({problem}));
        const PlanEntry* skill = plan.find("p01_r1_triton2cuda_skill");
        QCOMPARE(named(skill->status), named(PlanStatus::Stale));
        QVERIFY2(QString::fromStdString(skill->reason).contains("source skill changed"), skill->reason.c_str());
        QCOMPARE(named(statusOf(plan, "p01_r1_cuda2triton_skill")), named(PlanStatus::Reuse));
        QCOMPARE(plan.count(PlanStatus::Reuse), 3);
        QCOMPARE(plan.count(PlanStatus::Stale), 1);
    }

    void skillArmGoesStaleWhenItsSourceWillRunAgain() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton", "skill");
        history.addFinished(problem, "p01_r1_solo_cuda", "skill");
        history.addFinished(problem, "p01_r1_triton2cuda_skill");
        history.addFinished(problem, "p01_r1_cuda2triton_skill");
        history.live("p01_r1_solo_triton")->status = TrialStatus::Interrupted;
        const Plan plan = history.plan(makeRequest({problem}));
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Rerun));
        const PlanEntry* skill = plan.find("p01_r1_triton2cuda_skill");
        QCOMPARE(named(skill->status), named(PlanStatus::Stale));
        QVERIFY2(QString::fromStdString(skill->reason).contains("will rerun"), skill->reason.c_str());
        QCOMPARE(named(statusOf(plan, "p01_r1_cuda2triton_skill")), named(PlanStatus::Reuse));
    }

    void skillArmIsSkippedWhenFinishedSourceWroteNoSkill() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton");        // no SKILL.md
        history.addFinished(problem, "p01_r1_solo_cuda", "   \n"); // blank counts as none
        const PlanRequest request = makeRequest({problem});
        const Plan plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_triton2cuda_skill")), named(PlanStatus::Skip));
        QCOMPARE(named(statusOf(plan, "p01_r1_cuda2triton_skill")), named(PlanStatus::Skip));
        QVERIFY(QString::fromStdString(plan.find("p01_r1_triton2cuda_skill")->reason).contains("wrote no skill"));
        QCOMPARE(plan.count(PlanStatus::Skip), 2);

        history.execute(plan, request, always);
        QCOMPARE(named(history.live("p01_r1_triton2cuda_skill")->status), named(TrialStatus::Skipped));
        const Plan again = history.plan(request);
        QVERIFY2(again.converged(), qPrintable(describe(again)));
        QVERIFY(QString::fromStdString(again.find("p01_r1_triton2cuda_skill")->reason).contains("skipped"));
    }

    void skippedSkillArmGoesStaleWhenSourceGainsASkill() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton");
        history.addFinished(problem, "p01_r1_solo_cuda", "skill");
        TrialRecord& skipped = history.addFinished(problem, "p01_r1_triton2cuda_skill");
        skipped.status = TrialStatus::Skipped;
        history.addFinished(problem, "p01_r1_cuda2triton_skill");
        QVERIFY(history.plan(makeRequest({problem})).converged());
        history.live("p01_r1_solo_triton")->skillText = "a skill after all";
        QCOMPARE(named(statusOf(history.plan(makeRequest({problem})), "p01_r1_triton2cuda_skill")),
                 named(PlanStatus::Stale));
    }

    void rerunStaleTurnsStaleIntoRedo() {
        History history;
        const Problem oldProblem = makeProblem(1, "old");
        for (const char* coordinate : {"p01_r1_solo_triton", "p01_r1_solo_cuda"}) {
            history.addFinished(oldProblem, coordinate, "skill");
        }
        for (const char* coordinate : {"p01_r1_triton2cuda_skill", "p01_r1_cuda2triton_skill"}) {
            history.addFinished(oldProblem, coordinate);
        }
        PlanRequest request = makeRequest({makeProblem(1, "new")});
        const Plan stalePlan = history.plan(request);
        QCOMPARE(stalePlan.count(PlanStatus::Stale), 4);
        QVERIFY(stalePlan.dependencies().empty());

        request.rerunStale = true;
        const Plan plan = history.plan(request);
        QCOMPARE(plan.count(PlanStatus::Redo), 4);
        QCOMPARE(plan.count(PlanStatus::Stale), 0);
        QCOMPARE(plan.dependencies().size(), std::size_t(2)); // each redone skill arm waits for its redone source
        for (const PlanEntry& entry : plan.entries) {
            QVERIFY(entry.liveTrialId.has_value()); // the record to archive
            QVERIFY2(QString::fromStdString(entry.reason).contains("archive"), entry.reason.c_str());
        }
    }

    void redoOfASourceMakesItsSkillArmsStale() {
        History history;
        const Problem problem = makeProblem(1, "a");
        history.addFinished(makeProblem(1, "older"), "p01_r1_solo_triton", "skill");
        history.addFinished(problem, "p01_r1_solo_cuda", "skill");
        history.addFinished(problem, "p01_r1_triton2cuda_skill");
        history.addFinished(problem, "p01_r1_cuda2triton_skill");
        PlanRequest request = makeRequest({problem});
        Plan plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Stale));
        QCOMPARE(named(statusOf(plan, "p01_r1_triton2cuda_skill")),
                 named(PlanStatus::Reuse)); // stale source kept as is

        request.rerunStale = true;
        plan = history.plan(request);
        QCOMPARE(named(statusOf(plan, "p01_r1_solo_triton")), named(PlanStatus::Redo));
        QCOMPARE(named(statusOf(plan, "p01_r1_triton2cuda_skill")), named(PlanStatus::Redo));
        QVERIFY(plan.find("p01_r1_triton2cuda_skill")->waitsForSource);
        QCOMPARE(named(statusOf(plan, "p01_r1_cuda2triton_skill")), named(PlanStatus::Reuse));
    }

    void otherModelsAndArchivedRecordsAreIgnored() {
        const Problem problem = makeProblem(1, "a");
        History history;
        history.addFinished(problem, "p01_r1_solo_triton").model = "another-model";
        history.addFinished(problem, "p01_r1_solo_cuda").archived = true;
        const Plan plan = history.plan(makeRequest({problem}));
        QCOMPARE(plan.count(PlanStatus::Run), 4);
    }

    void applyingAPlanThenPlanningAgainConverges() {
        const PlanRequest request = makeRequest({makeProblem(1, "a"), makeProblem(2, "b"), makeProblem(3, "c")}, 2);
        History history;
        // p02's triton solos write no skill, so its triton2cuda skill arms are skipped at run time
        auto writesSkill = [](const std::string& coordinate) {
            return coordinate.rfind("p02_", 0) != 0 || coordinate.find("triton") == std::string::npos;
        };
        const Plan first = history.plan(request);
        QCOMPARE(first.count(PlanStatus::Run), 24);
        history.execute(first, request, writesSkill);

        const Plan second = history.plan(request);
        QVERIFY2(second.converged(), qPrintable(describe(second)));
        QCOMPARE(second.count(PlanStatus::Reuse), 24);
        QCOMPARE(named(history.live("p02_r1_triton2cuda_skill")->status), named(TrialStatus::Skipped));

        // break some records, change a problem, and converge again with --rerun-stale
        history.live("p01_r2_solo_cuda")->status = TrialStatus::InfrastructureError;
        history.live("p03_r1_cuda2triton_skill")->status = TrialStatus::Running;
        PlanRequest changed = request;
        changed.problems[1] = makeProblem(2, "b, edited");
        changed.rerunStale = true;
        const Plan third = history.plan(changed);
        QCOMPARE(third.count(PlanStatus::Rerun), 2);
        QCOMPARE(third.count(PlanStatus::Redo), 9); // p02's 8 trials, and p01_r2_cuda2triton whose source reruns
        QCOMPARE(named(statusOf(third, "p01_r2_cuda2triton_skill")), named(PlanStatus::Redo));
        history.execute(third, changed, writesSkill);
        const Plan fourth = history.plan(changed);
        QVERIFY2(fourth.converged(), qPrintable(describe(fourth)));
        const auto archived = std::count_if(history.trials.begin(), history.trials.end(),
                                            [](const TrialRecord& record) { return record.archived; });
        QCOMPARE(int(archived), third.count(PlanStatus::Rerun) + third.count(PlanStatus::Redo));
    }

    void invalidRequestsAreRefusedNamingTheField_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no model") << "model"
                                  << "--model";
        QTest::newRow("bad dsl") << "dsl"
                                 << "not a DSL id";
        QTest::newRow("same dsl twice") << "same"
                                        << "two different DSLs";
        QTest::newRow("zero replicates") << "replicates"
                                         << "at least 1";
        QTest::newRow("no problems") << "problems"
                                     << "no problems";
        QTest::newRow("unknown boundary") << "boundary"
                                          << "not an implementation boundary";
    }
    void invalidRequestsAreRefusedNamingTheField() {
        QFETCH(QString, field);
        QFETCH(QString, mentions);
        PlanRequest request = makeRequest({makeProblem(1, "a")});
        QVERIFY(validatePlanRequest(request).ok());
        if (field == "model")
            request.model = " ";
        if (field == "dsl")
            request.dslB = "Cuda!";
        if (field == "same")
            request.dslB = request.dslA;
        if (field == "replicates")
            request.replicates = 0;
        if (field == "problems")
            request.problems.clear();
        if (field == "boundary")
            request.boundary = "legacy"; // a verdict's boundary, never one to grade under
        const Status status = validatePlanRequest(request);
        QVERIFY(!status.ok());
        QVERIFY2(QString::fromStdString(status.error().message).contains(mentions), status.error().message.c_str());
    }
};

QTEST_GUILESS_MAIN(PlannerTest)
#include "tst_planner.moc"
