// Golden tests of the MetaKernelBench ladder: R@t, S, lift, the splits, coverage and usage per arm.
#include "analysis_fixtures.h"

#include "core/analysis/ladder.h"
#include "core/analysis/usage.h"

#include <QtTest>

#include <cmath>

using namespace mkb::analysis;
using namespace mkbtest;

namespace {

CellPlace inFamily(const std::string& family, int problem) {
    CellPlace place;
    place.family = family;
    place.problem = problem;
    return place;
}

/// Four resolved triton→cuda comparisons and one unresolved one:
///   C1 attention: source 1.5,  base 0.8,  skill 2.0 (tie at 2)
///   C2 attention: source fail, base fail, skill 1.0 (tie at 1; a failed source with a skill)
///   C3 moe:       source 3.0,  base 4.0 (tie at 4), skill skipped (counts as base 4.0)
///   C4 moe:       source 0.5,  base 1.0,  skill fail
///   C5 moe:       source 2.0,  base 2.0,  skill missing (unresolved: ignored by every rate)
std::vector<Comparison> ladderFixture() {
    return {cell(passing(1.5), passing(0.8), passing(2.0), inFamily("attention", 1)),
            cell(failing(), failing(), passing(1.0), inFamily("attention", 2)),
            cell(passing(3.0), passing(4.0), skippedSkill(), inFamily("moe", 3)),
            cell(passing(0.5), passing(1.0), failing(), inFamily("moe", 4)),
            unresolvedCell(passing(2.0), passing(2.0), inFamily("moe", 5))};
}

void expectRates(const std::optional<LadderRates>& ladder, const std::vector<double>& rates, double score) {
    QVERIFY(ladder.has_value());
    QCOMPARE(ladder->rates.size(), rates.size());
    for (std::size_t i = 0; i < rates.size(); ++i) {
        MKB_NEAR(ladder->rates[i], rates[i]);
    }
    MKB_NEAR(ladder->score, score);
}

mkb::Usage usage(std::optional<std::int64_t> input, std::optional<std::int64_t> cache,
                 std::optional<std::int64_t> output, std::optional<double> cost, std::optional<double> seconds) {
    return mkb::Usage{input, cache, output, cost, seconds};
}

Attempt withUsage(const std::string& arm, int problem, mkb::Usage usage) {
    Attempt attempt = passing(1.0);
    attempt.model = "m";
    attempt.arm = arm;
    attempt.problemNumber = problem;
    attempt.usage = usage;
    return attempt;
}

} // namespace

class LadderTest : public QObject {
    Q_OBJECT
private slots:
    // settings: defaults are the documented ones
    void settingsDefaultsAreTheDocumentedOnes() {
        const AnalysisSettings settings;
        QCOMPARE(settings.thresholds, (std::vector<double>{0, 0.5, 1, 2, 4}));
        QCOMPARE(settings.delta, 0.05);
        QVERIFY(settings.clipEffectiveSpeedup);
        QCOMPARE(settings.fastPThresholds, (std::vector<double>{0, 0.5, 0.8, 1, 1.5, 2}));
        QCOMPARE(settings.structuralRewriteShare, 0.5);
    }

    // ladder: R@t counts ties at a threshold as attained
    void ladderCountsTiesAsAttained() {
        const AnalysisSettings settings;
        Attempt exactlyOne = passing(1.0);
        Attempt exactlyTwo = passing(2.0);
        Attempt justBelowTwo = passing(1.999);
        // R@0..R@4 of {1.0, 2.0, 1.999}: 3/3, 3/3, 3/3, 1/3 (only 2.0), 0/3; S = 100·(1+1+1+1/3+0)/5 = 66.67
        expectRates(ladder({&exactlyOne, &exactlyTwo, &justBelowTwo}, settings), {1, 1, 1, 1.0 / 3, 0},
                    100.0 * (10.0 / 3) / 5);
    }

    // ladder: base and skill rates, S and lift over resolved comparisons; a skipped skill counts as its base
    void ladderBaseSkillAndLift() {
        const Contrast result = contrast(ladderFixture());
        QCOMPARE(result.resolved, std::size_t(4));
        // base {0.8, fail, 4.0, 1.0}: R@0 3/4, R@0.5 3/4, R@1 2/4 (4.0, 1.0), R@2 1/4, R@4 1/4 (tie);
        // S = 100·(0.75+0.75+0.5+0.25+0.25)/5 = 50
        expectRates(result.base, {0.75, 0.75, 0.5, 0.25, 0.25}, 50);
        // skill {2.0, 1.0, 4.0 (skipped → base), fail}: R@0 3/4, R@0.5 3/4, R@1 3/4, R@2 2/4, R@4 1/4;
        // S = 100·(0.75+0.75+0.75+0.5+0.25)/5 = 60
        expectRates(result.skill, {0.75, 0.75, 0.75, 0.5, 0.25}, 60);
        // lift = skill − base
        expectRates(result.lift, {0, 0, 0.25, 0.25, 0}, 10);
    }

    // ladder: skipped skill counts as its base
    void ladderSkippedSkillCountsAsItsBase() {
        // Only C3: base 4.0, skill skipped → both ladders are the base's, lift 0 everywhere.
        const Contrast result = contrast({cell(passing(3.0), passing(4.0), skippedSkill())});
        expectRates(result.base, {1, 1, 1, 1, 1}, 100);
        expectRates(result.skill, {1, 1, 1, 1, 1}, 100);
        expectRates(result.lift, {0, 0, 0, 0, 0}, 0);
    }

    // ladder: no resolved cells give empty results, never NaN
    void ladderWithNoResolvedCellsIsEmpty() {
        for (const std::vector<Comparison>& comparisons :
             {std::vector<Comparison>{}, std::vector<Comparison>{unresolvedCell(passing(2), passing(1))}}) {
            const GroupMetrics metrics = groupMetrics(comparisons);
            QCOMPARE(metrics.comparisons, comparisons.size());
            QCOMPARE(metrics.all.resolved, std::size_t(0));
            QVERIFY(!metrics.all.base && !metrics.all.skill && !metrics.all.lift);
            QVERIFY(!metrics.withSkill.base && !metrics.sourcePassed.base && !metrics.sourceFailed.base);
            QCOMPARE(metrics.coverage.resolved, std::size_t(0));
            QVERIFY(!metrics.coverage.sourcePassed && !metrics.coverage.sourceWroteSkill);
        }
    }

    // splits: with_skill keeps the comparisons whose source handed over a skill
    void splitWithSkill() {
        const GroupMetrics metrics = groupMetrics(ladderFixture());
        QCOMPARE(metrics.withSkill.resolved, std::size_t(3)); // C1, C2, C4
        // base {0.8, fail, 1.0}: 2/3, 2/3, 1/3, 0, 0 → S = 100·(5/3)/5 = 33.33
        expectRates(metrics.withSkill.base, {2.0 / 3, 2.0 / 3, 1.0 / 3, 0, 0}, 100.0 / 3);
        // skill {2.0, 1.0, fail}: 2/3, 2/3, 2/3, 1/3, 0 → S = 100·(7/3)/5 = 46.67
        expectRates(metrics.withSkill.skill, {2.0 / 3, 2.0 / 3, 2.0 / 3, 1.0 / 3, 0}, 140.0 / 3);
        MKB_NEAR(metrics.withSkill.lift->score, 40.0 / 3);
    }

    // splits: by_source_verdict separates passed and failed sources (a failed source with a skill is counted)
    void splitBySourceVerdict() {
        const GroupMetrics metrics = groupMetrics(ladderFixture());
        QCOMPARE(metrics.sourceFailed.resolved, std::size_t(1)); // C2
        expectRates(metrics.sourceFailed.base, {0, 0, 0, 0, 0}, 0);
        // skill 1.0: 1, 1, 1, 0, 0 → S = 60
        expectRates(metrics.sourceFailed.skill, {1, 1, 1, 0, 0}, 60);
        QCOMPARE(metrics.sourcePassed.resolved, std::size_t(3)); // C1, C3, C4
        // base {0.8, 4.0, 1.0}: 1, 1, 2/3, 1/3, 1/3 → S = 100·(10/3)/5 = 66.67
        expectRates(metrics.sourcePassed.base, {1, 1, 2.0 / 3, 1.0 / 3, 1.0 / 3}, 200.0 / 3);
        // skill {2.0, 4.0, fail}: 2/3, 2/3, 2/3, 2/3, 1/3 → S = 100·3/5 = 60
        expectRates(metrics.sourcePassed.skill, {2.0 / 3, 2.0 / 3, 2.0 / 3, 2.0 / 3, 1.0 / 3}, 60);
        MKB_NEAR(metrics.sourcePassed.lift->score, 60 - 200.0 / 3);
    }

    // splits: by family
    void splitByFamily() {
        const auto byFamily = groupMetricsByFamily(ladderFixture());
        QCOMPARE(byFamily.size(), std::size_t(2));
        const GroupMetrics& attention = byFamily.at("attention");
        // base {0.8, fail}: .5, .5, 0, 0, 0 → S = 20; skill {2.0, 1.0}: 1, 1, 1, .5, 0 → S = 70
        expectRates(attention.all.base, {0.5, 0.5, 0, 0, 0}, 20);
        expectRates(attention.all.skill, {1, 1, 1, 0.5, 0}, 70);
        const GroupMetrics& moe = byFamily.at("moe");
        QCOMPARE(moe.comparisons, std::size_t(3)); // C3, C4 and the unresolved C5
        QCOMPARE(moe.all.resolved, std::size_t(2));
        // base {4.0, 1.0}: 1, 1, 1, .5, .5 → S = 80; skill {4.0 (skipped), fail}: .5 everywhere → S = 50
        expectRates(moe.all.base, {1, 1, 1, 0.5, 0.5}, 80);
        expectRates(moe.all.skill, {0.5, 0.5, 0.5, 0.5, 0.5}, 50);
    }

    // splits: a single family gives one group equal to overall
    void splitSingleFamilyEqualsOverall() {
        std::vector<Comparison> comparisons = ladderFixture();
        for (Comparison& comparison : comparisons) {
            comparison.family = "attention";
        }
        const auto byFamily = groupMetricsByFamily(comparisons);
        QCOMPARE(byFamily.size(), std::size_t(1));
        const GroupMetrics overall = groupMetrics(comparisons);
        QCOMPARE(byFamily.at("attention").all.resolved, overall.all.resolved);
        MKB_NEAR(byFamily.at("attention").all.base->score, 50);
        MKB_NEAR(byFamily.at("attention").all.skill->score, 60);
    }

    // splits: by direction
    void splitByDirection() {
        std::vector<Comparison> comparisons = ladderFixture();
        CellPlace reverse;
        reverse.sourceDsl = "cuda";
        reverse.targetDsl = "triton";
        comparisons.push_back(cell(passing(1.0), failing(), passing(1.5), reverse));
        const auto byDirection = groupMetricsByDirection(comparisons);
        QCOMPARE(byDirection.size(), std::size_t(2));
        // cuda2triton: base fail → S 0; skill 1.5: 1, 1, 1, 0, 0 → S 60
        expectRates(byDirection.at("cuda2triton").all.base, {0, 0, 0, 0, 0}, 0);
        expectRates(byDirection.at("cuda2triton").all.skill, {1, 1, 1, 0, 0}, 60);
        MKB_NEAR(byDirection.at("triton2cuda").all.base->score, 50);
        MKB_NEAR(byDirection.at("triton2cuda").all.skill->score, 60);
    }

    // coverage: shares of resolved comparisons whose source passed and handed over a skill
    void coverageOfSourcesAndSkills() {
        const Coverage result = coverage(ladderFixture());
        QCOMPARE(result.resolved, std::size_t(4));
        MKB_NEAR_OPT(result.sourcePassed, 0.75);     // C1, C3, C4 of 4
        MKB_NEAR_OPT(result.sourceWroteSkill, 0.75); // C1, C2, C4 of 4 (C3 skipped)
    }

    // usage: sums per arm, null when any counted record lacks the number
    void usageSumsPerArm() {
        const std::vector<Attempt> attempts{
            withUsage("solo_triton", 1, usage(100, 10, 50, 0.5, 30)),
            withUsage("solo_triton", 2, usage(200, 20, 70, 1.5, 90)),
            withUsage("solo_cuda", 1, usage(100, std::nullopt, 10, 0.25, 10)),
            withUsage("solo_cuda", 2, usage(std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt)),
        };
        const auto byArm = usageByArm(attempts);
        const ArmUsage& triton = byArm.at("solo_triton");
        QCOMPARE(triton.trials, std::size_t(2));
        QCOMPARE(triton.inputTokens, std::optional<std::int64_t>(300));  // 100 + 200
        QCOMPARE(triton.cacheTokens, std::optional<std::int64_t>(30));   // 10 + 20
        QCOMPARE(triton.outputTokens, std::optional<std::int64_t>(120)); // 50 + 70
        MKB_NEAR_OPT(triton.costUsd, 2.0);                               // 0.5 + 1.5
        MKB_NEAR_OPT(triton.meanAgentSeconds, 60.0);                     // (30 + 90) / 2
        const ArmUsage& cuda = byArm.at("solo_cuda");
        QCOMPARE(cuda.attempts, std::size_t(2));
        QCOMPARE(cuda.trials, std::size_t(1)); // the attempt with no usage record is not counted
        QCOMPARE(cuda.inputTokens, std::optional<std::int64_t>(100));
        QVERIFY(!cuda.cacheTokens); // the counted record lacks it
        MKB_NEAR_OPT(cuda.costUsd, 0.25);
        MKB_NEAR_OPT(cuda.meanAgentSeconds, 10.0);
    }

    // usage: every record missing usage gives zero trials and null sums
    void usageEveryRecordMissing() {
        const mkb::Usage none;
        const auto byArm = usageByArm(
            std::vector<Attempt>{withUsage("triton2cuda_skill", 1, none), withUsage("triton2cuda_skill", 2, none)});
        const ArmUsage& skill = byArm.at("triton2cuda_skill");
        QCOMPARE(skill.attempts, std::size_t(2));
        QCOMPARE(skill.trials, std::size_t(0));
        QVERIFY(!skill.inputTokens && !skill.cacheTokens && !skill.outputTokens && !skill.costUsd);
        QVERIFY(!skill.meanAgentSeconds);
    }

    // usage: a solo serving as source and as base counts once
    void usageCountsEachTrialOnce() {
        Attempt triton = passing(1.0);
        triton.usage = usage(10, 0, 5, 1.0, 4);
        Attempt cuda = passing(1.0);
        cuda.usage = usage(20, 0, 5, 2.0, 8);
        Attempt skill = passing(1.0);
        skill.usage = usage(30, 0, 5, 3.0, 12);
        CellPlace reverse;
        reverse.sourceDsl = "cuda";
        reverse.targetDsl = "triton";
        const std::vector<Comparison> comparisons{cell(triton, cuda, skill), cell(cuda, triton, skill, reverse)};
        const auto byArm = usageByArm(comparisons);
        QCOMPARE(byArm.size(), std::size_t(4)); // two solos, two skill arms
        QCOMPARE(byArm.at("solo_triton").trials, std::size_t(1));
        MKB_NEAR_OPT(byArm.at("solo_triton").costUsd, 1.0);
        QCOMPARE(byArm.at("solo_cuda").inputTokens, std::optional<std::int64_t>(20));
        MKB_NEAR_OPT(byArm.at("cuda2triton_skill").meanAgentSeconds, 12.0);
    }

    void ladderLabelsFollowMetaKernelBench() {
        QCOMPARE(ladderLabel(0), std::string("R@0"));
        QCOMPARE(ladderLabel(0.5), std::string("R@0.5"));
        QCOMPARE(ladderLabel(4), std::string("R@4"));
    }
};

QTEST_APPLESS_MAIN(LadderTest)
#include "tst_ladder.moc"
