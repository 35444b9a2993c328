// Golden tests of the builders: trials into transfer comparisons (cells) and into attempts with trajectories.
#include "analysis_fixtures.h"

#include "core/analysis/attempt.h"
#include "core/analysis/comparison.h"

#include <QtTest>

#include <algorithm>

using namespace mkb;
using namespace mkb::analysis;
using namespace mkbtest;

class ComparisonsTest : public QObject {
    Q_OBJECT
private slots:
    // comparisons: arms parse into directions, a '2' inside a DSL id is settled by the trial's DSL
    void skillArmsParseIntoDirections() {
        QCOMPARE(parseSkillArm("triton2cuda_skill"),
                 std::make_optional(std::make_pair(std::string("triton"), std::string("cuda"))));
        QCOMPARE(parseSkillArm("cutedsl2tirx_skill", "tirx")->first, std::string("cutedsl"));
        QCOMPARE(parseSkillArm("fp8x2cuda_skill", "cuda")->first, std::string("fp8x"));
        QCOMPARE(parseSkillArm("a2b2c_skill", "c")->first, std::string("a2b"));
        QVERIFY(!parseSkillArm("solo_triton"));
        QVERIFY(!parseSkillArm("tritoncuda_skill"));
    }

    // comparisons: one per model, problem, direction and replicate; source, base and skill arms in place
    void comparisonsFromTrials() {
        const std::vector<TrialRecord> trials{
            finishedTrial(1, 7, 1, "solo_triton", "triton", true, 1.5),
            finishedTrial(2, 7, 1, "solo_cuda", "cuda", true, 1.0),
            finishedTrial(3, 7, 1, "triton2cuda_skill", "cuda", true, 2.0),
            skippedTrial(4, 7, 1, "cuda2triton_skill", "triton"),
            finishedTrial(5, 7, 2, "solo_triton", "triton", true, 1.2),
            [] {
                TrialRecord errored = finishedTrial(6, 7, 2, "solo_cuda", "cuda", false, 0);
                errored.status = TrialStatus::InfrastructureError;
                return errored;
            }(),
            finishedTrial(7, 7, 2, "triton2cuda_skill", "cuda", true, 1.1),
        };
        const std::vector<Comparison> comparisons = buildComparisons(trials);
        QCOMPARE(comparisons.size(), std::size_t(4)); // 2 directions × 2 replicates
        // sorted by direction then replicate: cuda2triton r1, r2, triton2cuda r1, r2
        const Comparison& reverseR1 = comparisons[0];
        QCOMPARE(reverseR1.direction, std::string("cuda2triton"));
        QVERIFY(reverseR1.resolved());
        QVERIFY(reverseR1.skillSkipped());
        QVERIFY(!reverseR1.sourceWroteSkill());
        QCOMPARE(reverseR1.source->arm, std::string("solo_cuda"));
        QCOMPARE(reverseR1.skillOutcome().arm, std::string("solo_triton")); // a skipped skill counts as its base
        QCOMPARE(reverseR1.skillOutcome().speedup, 1.5);
        QVERIFY(!comparisons[1].resolved()); // source solo_cuda r2 hit an infrastructure error; skill arm missing
        const Comparison& forwardR1 = comparisons[2];
        QCOMPARE(forwardR1.direction, std::string("triton2cuda"));
        QCOMPARE(forwardR1.sourceDsl, std::string("triton"));
        QCOMPARE(forwardR1.targetDsl, std::string("cuda"));
        QVERIFY(forwardR1.resolved());
        QCOMPARE(forwardR1.source->speedup, 1.5);
        QCOMPARE(forwardR1.base->speedup, 1.0);
        QCOMPARE(forwardR1.skill->speedup, 2.0);
        QCOMPARE(forwardR1.family, std::string("attention"));
        QCOMPARE(forwardR1.problemSlug, std::string("problem_7"));
        QVERIFY(!comparisons[3].resolved()); // base errored
        QVERIFY(!comparisons[3].base);
    }

    // comparisons: archived trials never fill an arm, and the newest live trial of a coordinate wins
    void archivedTrialsAreIgnoredAndNewestWins() {
        TrialRecord archived = finishedTrial(9, 1, 1, "solo_cuda", "cuda", false, 0);
        archived.archived = true;
        const std::vector<TrialRecord> trials{
            finishedTrial(1, 1, 1, "solo_triton", "triton", true, 1.0),
            finishedTrial(2, 1, 1, "solo_cuda", "cuda", true, 0.5), // superseded by id 4
            finishedTrial(3, 1, 1, "triton2cuda_skill", "cuda", true, 3.0),
            finishedTrial(4, 1, 1, "solo_cuda", "cuda", true, 0.9),
            archived,
        };
        const std::vector<Comparison> comparisons = buildComparisons(trials);
        QCOMPARE(comparisons.size(), std::size_t(1));
        QCOMPARE(comparisons[0].base->trialId, std::int64_t(4));
        QCOMPARE(comparisons[0].base->speedup, 0.9);
        QCOMPARE(resolvedComparisons(comparisons).size(), std::size_t(1));
    }

    // comparisons: no trials, or solos without skill arms, give no comparisons
    // comparisons: a built comparison notes whether its arms share a boundary; an arm set afterwards is checked afresh
    void builtComparisonsKnowTheirBoundaryAndAReplacedArmIsCheckedAfresh() {
        std::vector<TrialRecord> trials{
            finishedTrial(1, 3, 1, "solo_triton", "triton", true, 1.5),
            finishedTrial(2, 3, 1, "solo_cuda", "cuda", true, 1.0),
            finishedTrial(3, 3, 1, "triton2cuda_skill", "cuda", true, 2.0),
        };
        trials[2].finalVerdict->boundary = "strict"; // the other two are legacy
        const std::vector<Comparison> comparisons = buildComparisons(trials);
        const auto forward = std::find_if(comparisons.begin(), comparisons.end(),
                                          [](const Comparison& c) { return c.direction == "triton2cuda"; });
        QVERIFY(forward != comparisons.end());
        QVERIFY(forward->boundaryCheck.skill == forward->skill.get()); // noted when built
        QVERIFY(forward->notComparable() && !forward->resolved());
        QCOMPARE(forward->boundary(), std::string());

        Attempt legacySkill = *forward->skill;
        legacySkill.boundary = "legacy";
        Comparison replaced = *forward; // the note travels with the copy, for the arms it was taken on
        QVERIFY(replaced.notComparable());
        replaced.skill = std::make_shared<const Attempt>(legacySkill);
        QVERIFY(replaced.resolved());
        QCOMPARE(replaced.boundary(), std::string("legacy"));
        replaced.noteBoundaryCheck();
        QVERIFY(replaced.resolved());
    }

    void noSkillArmsNoComparisons() {
        QVERIFY(buildComparisons({}).empty());
        QVERIFY(buildComparisons({finishedTrial(1, 1, 1, "solo_triton", "triton", true, 1.0),
                                  finishedTrial(2, 1, 1, "solo_cuda", "cuda", true, 1.0)})
                    .empty());
    }

    // comparisons: built over attempts made once, they equal those built from the trials and share those attempts
    void comparisonsOverSharedAttemptsEqualThoseFromTrials() {
        TrialRecord archived = finishedTrial(20, 7, 1, "solo_cuda", "cuda", false, 0);
        archived.archived = true;
        TrialRecord running = finishedTrial(21, 7, 3, "cuda2triton_skill", "triton", false, 0);
        running.status = TrialStatus::Running;
        const std::vector<TrialRecord> trials{
            finishedTrial(1, 7, 1, "solo_triton", "triton", true, 1.5),
            finishedTrial(2, 7, 1, "solo_cuda", "cuda", true, 1.0),
            finishedTrial(3, 7, 1, "triton2cuda_skill", "cuda", true, 2.0),
            skippedTrial(4, 7, 1, "cuda2triton_skill", "triton"),
            finishedTrial(5, 7, 2, "solo_triton", "triton", true, 1.2),
            finishedTrial(6, 8, 1, "solo_cuda", "cuda", false, 0),
            finishedTrial(7, 7, 2, "triton2cuda_skill", "cuda", true, 1.1),
            archived,
            running,                                                // replicate 3 is known from a running trial only
            finishedTrial(8, 7, 1, "solo_cuda", "cuda", true, 0.8), // newer than trial 2 at the same coordinate
        };
        const auto attempts = std::make_shared<const std::vector<Attempt>>(attemptsFromTrials(trials));
        const std::vector<Comparison> fromTrials = buildComparisons(trials);
        const std::vector<Comparison> fromAttempts = buildComparisons(trials, attempts);
        QCOMPARE(fromAttempts.size(), fromTrials.size());
        QCOMPARE(fromTrials.size(), std::size_t(6)); // 2 directions × replicates 1, 2, 3 of problem 7
        auto sameArm = [](const std::shared_ptr<const Attempt>& a, const std::shared_ptr<const Attempt>& b) {
            return (!a && !b) || (a && b && a->trialId == b->trialId && a->speedup == b->speedup &&
                                  a->skipped == b->skipped && a->arm == b->arm);
        };
        for (std::size_t i = 0; i < fromTrials.size(); ++i) {
            const Comparison& a = fromTrials[i];
            const Comparison& b = fromAttempts[i];
            QCOMPARE(b.direction, a.direction);
            QCOMPARE(b.replicate, a.replicate);
            QCOMPARE(b.problemNumber, a.problemNumber);
            QVERIFY(sameArm(a.source, b.source));
            QVERIFY(sameArm(a.base, b.base));
            QVERIFY(sameArm(a.skill, b.skill));
        }
        QCOMPARE(fromAttempts[3].direction, std::string("triton2cuda"));
        QCOMPARE(fromAttempts[3].base->trialId, std::int64_t(8)); // the newest live trial wins
        // The arms point into the shared vector: nothing was built twice.
        const Attempt* first = attempts->data();
        const Attempt* last = first + attempts->size();
        for (const Comparison& comparison : fromAttempts) {
            for (const auto* arm : {&comparison.source, &comparison.base, &comparison.skill}) {
                QVERIFY(!*arm || (arm->get() >= first && arm->get() < last));
            }
        }
        QVERIFY(attempts.use_count() > 1); // and they keep it alive
    }

    // comparisons: from the attempts plus the trials that fill no arm, they equal those built from the trials
    void comparisonsFromAttemptsAndArmlessTrialsEqualThoseFromTrials() {
        TrialRecord archived = finishedTrial(9, 7, 1, "solo_cuda", "cuda", true, 3.0);
        archived.archived = true;
        TrialRecord running = finishedTrial(10, 7, 3, "cuda2triton_skill", "triton", false, 0);
        running.status = TrialStatus::Running;
        TrialRecord errored = finishedTrial(11, 9, 1, "triton2cuda_skill", "cuda", false, 0);
        errored.status = TrialStatus::InfrastructureError; // problem 9 is known from this trial only
        const std::vector<TrialRecord> trials{
            finishedTrial(1, 7, 1, "solo_triton", "triton", true, 1.5),
            finishedTrial(2, 7, 1, "solo_cuda", "cuda", true, 1.0),
            finishedTrial(3, 7, 1, "triton2cuda_skill", "cuda", true, 2.0),
            skippedTrial(4, 7, 1, "cuda2triton_skill", "triton"),
            finishedTrial(5, 7, 2, "solo_triton", "triton", true, 1.2),
            finishedTrial(6, 8, 1, "solo_cuda", "cuda", false, 0),
            finishedTrial(7, 7, 2, "triton2cuda_skill", "cuda", true, 1.1),
            finishedTrial(8, 7, 1, "solo_cuda", "cuda", true, 0.8), // newer than trial 2 at the same coordinate
            archived,                                               // newest at that coordinate, but archived
            running,                                                // replicate 3 is known from a running trial only
            errored,
        };
        std::vector<TrialRecord> armless;
        for (const TrialRecord& trial : trials) {
            if (!fillsArm(trial)) {
                armless.push_back(trial);
            }
        }
        QCOMPARE(armless.size(), std::size_t(3));
        const auto attempts = std::make_shared<const std::vector<Attempt>>(attemptsFromTrials(trials));
        const std::vector<Comparison> fromTrials = buildComparisons(trials);
        const std::vector<Comparison> fromParts = buildComparisons(attempts, armless);
        QCOMPARE(fromTrials.size(), std::size_t(7)); // problem 7: 2 directions × replicates 1-3; problem 9: one
        QCOMPARE(fromParts.size(), fromTrials.size());
        auto sameArm = [](const std::shared_ptr<const Attempt>& a, const std::shared_ptr<const Attempt>& b) {
            return (!a && !b) || (a && b && a->trialId == b->trialId && a->speedup == b->speedup &&
                                  a->skipped == b->skipped && a->arm == b->arm);
        };
        for (std::size_t i = 0; i < fromTrials.size(); ++i) {
            const Comparison& a = fromTrials[i];
            const Comparison& b = fromParts[i];
            QCOMPARE(b.model, a.model);
            QCOMPARE(b.problemNumber, a.problemNumber);
            QCOMPARE(b.problemSlug, a.problemSlug);
            QCOMPARE(b.family, a.family);
            QCOMPARE(b.direction, a.direction);
            QCOMPARE(b.replicate, a.replicate);
            QVERIFY(sameArm(a.source, b.source));
            QVERIFY(sameArm(a.base, b.base));
            QVERIFY(sameArm(a.skill, b.skill));
        }
        QCOMPARE(fromParts[2].replicate, 3);                   // from the running trial
        QVERIFY(!fromParts[2].skill);                          // which fills no arm
        QCOMPARE(fromParts[3].base->trialId, std::int64_t(8)); // the newest live trial wins, the archived one not
        QCOMPARE(fromParts[6].problemNumber, 9);               // from the errored trial
        QVERIFY(!fromParts[6].resolved());
    }

    // comparisons: built from attempts and armless trials, each notes the boundary check its arms give, mixed
    // boundaries and a skipped skill arm (which has none) included
    void comparisonsFromAttemptsNoteTheBoundaryCheckTheirArmsGive() {
        std::vector<TrialRecord> trials{
            finishedTrial(1, 3, 1, "solo_triton", "triton", true, 1.5),
            finishedTrial(2, 3, 1, "solo_cuda", "cuda", true, 1.0),
            finishedTrial(3, 3, 1, "triton2cuda_skill", "cuda", true, 2.0),
            finishedTrial(4, 3, 2, "solo_triton", "triton", true, 1.2),
            finishedTrial(5, 3, 2, "solo_cuda", "cuda", true, 1.1),
            skippedTrial(6, 3, 2, "triton2cuda_skill", "cuda"),
            finishedTrial(7, 3, 1, "cuda2triton_skill", "triton", true, 1.3),
        };
        trials[1].finalVerdict->boundary = "strict"; // replicate 1: the cuda solo alone is strict
        trials[3].finalVerdict->boundary = "mkb";    // replicate 2: both solos mkb
        trials[4].finalVerdict->boundary = "mkb";
        const auto attempts = std::make_shared<const std::vector<Attempt>>(attemptsFromTrials(trials));
        const std::vector<Comparison> comparisons = buildComparisons(attempts, {});
        QCOMPARE(comparisons.size(), std::size_t(4)); // 2 directions × 2 replicates
        int shared = 0;
        for (const Comparison& comparison : comparisons) {
            QVERIFY(comparison.boundaryCheck.source == comparison.source.get());
            QVERIFY(comparison.boundaryCheck.base == comparison.base.get());
            QVERIFY(comparison.boundaryCheck.skill == comparison.skill.get());
            QCOMPARE(comparison.boundaryCheck.same, comparison.armsShareBoundary());
            shared += comparison.boundaryCheck.same ? 1 : 0;
        }
        QCOMPARE(shared, 2);                     // replicate 2 in both directions
        QVERIFY(comparisons[0].notComparable()); // cuda2triton, replicate 1: legacy, strict, legacy
        QVERIFY(comparisons[3].resolved());      // triton2cuda, replicate 2: mkb, mkb, skipped
        QCOMPARE(comparisons[3].boundary(), std::string("mkb"));
    }

    // comparisons: attempts that are not the trials' own are ignored, and the arms built from the trials
    void comparisonsOverForeignAttemptsFallBackToTheTrials() {
        const std::vector<TrialRecord> trials{finishedTrial(1, 1, 1, "solo_triton", "triton", true, 1.0),
                                              finishedTrial(2, 1, 1, "solo_cuda", "cuda", true, 0.5),
                                              finishedTrial(3, 1, 1, "triton2cuda_skill", "cuda", true, 3.0)};
        const auto foreign = std::make_shared<const std::vector<Attempt>>(
            attemptsFromTrials({finishedTrial(9, 1, 1, "solo_triton", "triton", false, 0)}));
        const std::vector<Comparison> comparisons = buildComparisons(trials, foreign);
        QCOMPARE(comparisons.size(), std::size_t(1));
        QVERIFY(comparisons[0].resolved());
        QCOMPARE(comparisons[0].source->trialId, std::int64_t(1));
        QCOMPARE(comparisons[0].skill->speedup, 3.0);
        QCOMPARE(buildComparisons(trials, nullptr).size(), std::size_t(1));
    }

    // attempts: a lean trial carries whether it wrote a skill without the text
    void leanTrialWroteSkillFromTheStoreFlag() {
        TrialRecord lean = finishedTrial(1, 1, 1, "solo_triton", "triton", true, 1.0);
        lean.skillText.reset();
        lean.lean = true;
        lean.skillWritten = true;
        TrialRecord leanWithout = lean;
        leanWithout.skillWritten = false;
        TrialRecord full = finishedTrial(2, 1, 1, "solo_cuda", "cuda", true, 1.0);
        full.skillWritten = false; // a full record is judged by its text
        const std::vector<Attempt> attempts = attemptsFromTrials({lean, leanWithout, full});
        QVERIFY(attempts[0].wroteSkill);
        QVERIFY(!attempts[1].wroteSkill);
        QVERIFY(attempts[2].wroteSkill);
    }

    // attempts: verdict fields, KernelBench-X extensions, trajectory order and the final kernel
    void attemptsFromTrialsWithSubmissions() {
        TrialRecord graded = finishedTrial(11, 4, 1, "solo_triton", "triton", true, 1.7);
        graded.finalVerdict->outliersCorrect = false;
        graded.finalVerdict->quant = QuantMetrics{0.99, 0.01, 0.02, true};
        Roofline roofline;
        roofline.iou = 0.6;
        roofline.mfu = 0.2;
        graded.finalVerdict->roofline = roofline;
        graded.finalVerdict->deviceName = "NVIDIA H200";
        graded.usage.costUsd = 0.75;
        TrialRecord blankSkill = finishedTrial(12, 4, 1, "solo_cuda", "cuda", false, 0);
        blankSkill.skillText = "  \n";
        TrialRecord running = finishedTrial(13, 4, 2, "solo_cuda", "cuda", false, 0);
        running.status = TrialStatus::Running;
        TrialRecord archived = finishedTrial(14, 4, 2, "solo_triton", "triton", true, 1.0);
        archived.archived = true;

        auto submissionOf = [](std::int64_t trial, int index, bool correct, const std::string& source) {
            SubmissionRecord submission;
            submission.trialId = trial;
            submission.index = index;
            submission.kernelSource = source;
            submission.verdict.imported = true;
            submission.verdict.correct = correct;
            submission.verdict.passed = correct;
            submission.verdict.speedupVsEager = correct ? 1.7 : 0;
            return submission;
        };
        const std::vector<SubmissionRecord> submissions{submissionOf(11, 2, true, "second"),
                                                        submissionOf(11, 0, true, "final"),
                                                        submissionOf(11, 1, false, "first")};
        const std::vector<Attempt> attempts = attemptsFromTrials({graded, blankSkill, running, archived}, submissions);
        QCOMPARE(attempts.size(), std::size_t(2)); // running and archived trials are left out
        const Attempt& first = attempts[0];
        QVERIFY(first.graded && first.passed && first.correct && first.imported && first.compliant);
        QCOMPARE(first.speedup, 1.7);
        QVERIFY(first.wroteSkill);
        QCOMPARE(first.outliersCorrect, std::optional<bool>(false));
        QCOMPARE(first.quantPassed, std::optional<bool>(true));
        QCOMPARE(first.iou, std::optional<double>(0.6));
        QCOMPARE(first.mfu, std::optional<double>(0.2));
        QCOMPARE(first.deviceName, std::string("NVIDIA H200"));
        QCOMPARE(first.usage.costUsd, std::optional<double>(0.75));
        QCOMPARE(first.submissions.size(), std::size_t(2)); // index 0 is the final evaluation, not a submission
        QCOMPARE(first.submissions[0].index, 1);
        QCOMPARE(first.submissions[0].kernelSource, std::string("first"));
        QCOMPARE(first.submissions[1].speedup, 1.7);
        QCOMPARE(first.finalKernelSource, std::string("final"));
        QVERIFY(!attempts[1].wroteSkill); // whitespace is no skill
        QVERIFY(!attempts[1].passed);
        QCOMPARE(attempts[1].speedup, 0.0);
    }

    // attempts: a skipped skill arm is kept as skipped and not graded
    void skippedTrialIsNotGraded() {
        const std::vector<Attempt> attempts = attemptsFromTrials({skippedTrial(1, 1, 1, "triton2cuda_skill", "cuda")});
        QCOMPARE(attempts.size(), std::size_t(1));
        QVERIFY(attempts[0].skipped);
        QVERIFY(!attempts[0].graded);
    }
};

QTEST_APPLESS_MAIN(ComparisonsTest)
#include "tst_comparisons.moc"
