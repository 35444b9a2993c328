// The chart series: groupings of comparisons handed to core/analysis/, reshaped into what each chart draws.
#include "gui/charts/chart_data.h"

#include "core/analysis/ladder.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace mkb::gui {

namespace {

std::map<std::string, std::vector<analysis::Comparison>>
resolvedBy(const std::vector<analysis::Comparison>& comparisons,
           std::string (*keyOf)(const analysis::Comparison& comparison)) {
    std::map<std::string, std::vector<analysis::Comparison>> groups;
    for (const analysis::Comparison& comparison : comparisons) {
        if (comparison.resolved()) {
            groups[keyOf(comparison)].push_back(comparison);
        }
    }
    return groups;
}

std::string familyOf(const analysis::Comparison& comparison) {
    return comparison.family;
}
std::string modelOf(const analysis::Comparison& comparison) {
    return comparison.model;
}

} // namespace

std::string problemLabel(int problemNumber, const std::string& problemSlug) {
    return problemSlug.empty() ? "problem " + std::to_string(problemNumber) : problemSlug;
}

std::vector<FamilyLiftBar> familyLiftBars(const std::vector<analysis::Comparison>& comparisons,
                                          const analysis::AnalysisSettings& settings) {
    std::vector<FamilyLiftBar> bars;
    for (const auto& [family, metrics] : analysis::groupMetricsByFamily(comparisons, settings)) {
        const analysis::Contrast& contrast = metrics.all;
        if (!contrast.lift || !contrast.base || !contrast.skill) {
            continue;
        }
        const std::optional<analysis::Interval>& ci = contrast.intervals.liftScore;
        bars.push_back({family, contrast.resolved, contrast.base->score, contrast.skill->score, contrast.lift->score,
                        ci, ci && ci->low <= 0 && ci->high >= 0});
    }
    return bars;
}

std::vector<FamilyHarmBar> familyHarmBars(const std::vector<analysis::Comparison>& comparisons,
                                          const analysis::AnalysisSettings& settings) {
    std::vector<FamilyHarmBar> bars;
    for (const auto& [family, group] : resolvedBy(comparisons, familyOf)) {
        const analysis::OutcomeCounts counts = analysis::outcomeCounts(group, settings);
        if (!counts.harmedShare) {
            continue;
        }
        bars.push_back({family, counts.total, counts.harmed, 100.0 * *counts.harmedShare});
    }
    return bars;
}

std::vector<PairedRatioColumn> pairedRatioColumns(const std::vector<analysis::Comparison>& comparisons,
                                                  const analysis::AnalysisSettings& settings) {
    std::map<int, std::vector<analysis::Comparison>> byProblem;
    for (const analysis::Comparison& comparison : comparisons) {
        if (comparison.resolved()) {
            byProblem[comparison.problemNumber].push_back(comparison);
        }
    }
    std::vector<PairedRatioColumn> columns;
    for (const auto& [number, group] : byProblem) {
        PairedRatioColumn column;
        column.problemNumber = number;
        column.problemSlug = group.front().problemSlug;
        column.family = group.front().family;
        column.geometricMeanRatio = analysis::deltaGeometricMean(group, settings).value_or(0) + 1;
        if (const auto ci = analysis::deltaGeometricMeanCi(group, settings)) {
            column.geometricMeanCi = analysis::Interval{ci->low + 1, ci->high + 1};
        }
        for (const analysis::Comparison& comparison : group) {
            const analysis::OutcomeJudgement judgement = analysis::judgeOutcome(comparison, settings);
            PairedRatioPoint point{comparison.model,     comparison.direction,
                                   comparison.replicate, analysis::pairedRatio(comparison, settings),
                                   judgement.outcome,    std::nullopt,
                                   std::nullopt,         false};
            if (judgement.ratio) {
                // The CI is of the kernels' ratio; drawn around r, which equals it unless clipping at eager moved r.
                const double scale = point.ratio / judgement.ratio->ratio;
                point.ciLow = judgement.ratio->ciLow * scale;
                point.ciHigh = judgement.ratio->ciHigh * scale;
            }
            point.withinNoise = judgement.withinNoise;
            column.points.push_back(std::move(point));
        }
        columns.push_back(std::move(column));
    }
    std::stable_sort(columns.begin(), columns.end(), [](const PairedRatioColumn& a, const PairedRatioColumn& b) {
        return std::tie(a.geometricMeanRatio, a.problemNumber) < std::tie(b.geometricMeanRatio, b.problemNumber);
    });
    return columns;
}

std::vector<StandingOutcomeBar> standingOutcomeBars(const std::vector<analysis::Comparison>& comparisons,
                                                    const analysis::AnalysisSettings& settings) {
    std::vector<StandingOutcomeBar> bars;
    for (const auto& [model, group] : resolvedBy(comparisons, modelOf)) {
        for (const analysis::StandingRow& row : analysis::outcomesBySourceStanding(group, settings)) {
            bars.push_back({model, row.standing, row.outcomes});
        }
    }
    return bars;
}

std::vector<LadderStep> ladderSteps(const std::vector<analysis::Comparison>& comparisons,
                                    const analysis::AnalysisSettings& settings) {
    const analysis::Contrast contrast = analysis::contrast(comparisons, settings);
    std::vector<LadderStep> steps;
    if (!contrast.base || !contrast.skill) {
        return steps;
    }
    for (std::size_t i = 0; i < contrast.base->thresholds.size(); ++i) {
        const double threshold = contrast.base->thresholds[i];
        steps.push_back({threshold, analysis::ladderLabel(threshold), 100.0 * contrast.base->rates[i],
                         100.0 * contrast.skill->rates[i]});
    }
    return steps;
}

SpeedupScatter speedupScatter(const std::vector<analysis::Comparison>& comparisons,
                              const analysis::AnalysisSettings& settings) {
    SpeedupScatter scatter;
    for (const analysis::Comparison& comparison : comparisons) {
        if (!comparison.resolved()) {
            continue;
        }
        const analysis::Attempt& source = *comparison.source;
        const analysis::Attempt& target = comparison.skillOutcome();
        if (!source.passed || !target.passed || source.speedup <= 0 || target.speedup <= 0) {
            ++scatter.leftOut;
            continue;
        }
        scatter.points.push_back({comparison.model, comparison.direction, comparison.problemNumber,
                                  comparison.problemSlug, comparison.family, comparison.replicate, source.speedup,
                                  target.speedup, analysis::transferOutcome(comparison, settings)});
    }
    return scatter;
}

} // namespace mkb::gui
