// R@t, S, lift, coverage and the MetaKernelBench splits over resolved comparisons.
#include "core/analysis/ladder.h"

#include "core/analysis/stats.h"

#include <cstdio>

namespace mkb::analysis {

bool attains(const Attempt& attempt, double threshold) {
    return attempt.passed && reaches(attempt.speedup, threshold);
}

std::optional<LadderRates> ladder(const std::vector<const Attempt*>& attempts, const AnalysisSettings& settings) {
    if (attempts.empty() || settings.thresholds.empty()) {
        return std::nullopt;
    }
    LadderRates result;
    result.thresholds = settings.thresholds;
    double rateSum = 0;
    for (double threshold : settings.thresholds) {
        std::size_t attained = 0;
        for (const Attempt* attempt : attempts) {
            attained += attains(*attempt, threshold) ? 1 : 0;
        }
        const double rate = static_cast<double>(attained) / static_cast<double>(attempts.size());
        result.rates.push_back(rate);
        rateSum += rate;
    }
    result.score = 100.0 * rateSum / static_cast<double>(settings.thresholds.size());
    return result;
}

bool straddles(const Attempt& attempt, double threshold) {
    return attempt.passed && attempt.speedupCiLow && attempt.speedupCiHigh && *attempt.speedupCiLow <= threshold &&
           threshold <= *attempt.speedupCiHigh;
}

static Contrast contrastOf(const std::vector<const Comparison*>& resolved, const AnalysisSettings& settings) {
    Contrast result;
    result.resolved = resolved.size();
    std::vector<const Attempt*> bases;
    std::vector<const Attempt*> skills;
    result.baseBorderline.assign(settings.thresholds.size(), 0);
    result.skillBorderline.assign(settings.thresholds.size(), 0);
    for (const Comparison* comparison : resolved) {
        bases.push_back(&*comparison->base);
        skills.push_back(&comparison->skillOutcome());
        for (const auto& [attempt, counts] :
             {std::pair{bases.back(), &result.baseBorderline}, std::pair{skills.back(), &result.skillBorderline}}) {
            result.withCi += attempt->speedupCiLow && attempt->speedupCiHigh ? 1 : 0;
            for (std::size_t i = 0; i < settings.thresholds.size(); ++i) {
                (*counts)[i] += straddles(*attempt, settings.thresholds[i]) ? 1 : 0;
            }
        }
    }
    result.base = ladder(bases, settings);
    result.skill = ladder(skills, settings);
    if (result.base && result.skill) {
        LadderRates lift;
        lift.thresholds = result.base->thresholds;
        for (std::size_t i = 0; i < result.base->rates.size(); ++i) {
            lift.rates.push_back(result.skill->rates[i] - result.base->rates[i]);
        }
        lift.score = result.skill->score - result.base->score;
        result.lift = lift;
    }
    return result;
}

static ComparisonView resolvedWhere(const ComparisonView& comparisons,
                                    const std::function<bool(const Comparison&)>& keep) {
    ComparisonView selected;
    for (const Comparison* comparison : comparisons) {
        if (comparison->resolved() && keep(*comparison)) {
            selected.push_back(comparison);
        }
    }
    return selected;
}

static ComparisonView viewOf(const std::vector<Comparison>& comparisons) {
    ComparisonView view;
    view.reserve(comparisons.size());
    for (const Comparison& comparison : comparisons) {
        view.push_back(&comparison);
    }
    return view;
}

static Coverage coverageOf(const ComparisonView& comparisons) {
    Coverage result;
    std::size_t sourcePassed = 0;
    std::size_t wroteSkill = 0;
    for (const Comparison* comparison : comparisons) {
        if (!comparison->resolved()) {
            continue;
        }
        ++result.resolved;
        sourcePassed += comparison->source->passed ? 1 : 0;
        wroteSkill += comparison->sourceWroteSkill() ? 1 : 0;
    }
    result.sourcePassed = share(sourcePassed, result.resolved);
    result.sourceWroteSkill = share(wroteSkill, result.resolved);
    return result;
}

static GroupMetrics groupMetricsOf(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    GroupMetrics result;
    result.comparisons = comparisons.size();
    result.coverage = coverageOf(comparisons);
    result.all = contrastOf(resolvedWhere(comparisons, [](const Comparison&) { return true; }), settings);
    result.withSkill =
        contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return c.sourceWroteSkill(); }), settings);
    result.sourcePassed =
        contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return c.source->passed; }), settings);
    result.sourceFailed =
        contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return !c.source->passed; }), settings);
    return result;
}

Contrast contrast(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings) {
    return contrastOf(resolvedWhere(viewOf(comparisons), [](const Comparison&) { return true; }), settings);
}

Coverage coverage(const std::vector<Comparison>& comparisons) {
    return coverageOf(viewOf(comparisons));
}

GroupMetrics groupMetrics(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings) {
    return groupMetricsOf(viewOf(comparisons), settings);
}

GroupMetrics groupMetrics(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    return groupMetricsOf(comparisons, settings);
}

std::map<std::string, GroupMetrics> groupMetricsBy(const std::vector<Comparison>& comparisons,
                                                   const std::function<std::string(const Comparison&)>& keyOf,
                                                   const AnalysisSettings& settings) {
    std::map<std::string, ComparisonView> groups;
    for (const Comparison& comparison : comparisons) {
        groups[keyOf(comparison)].push_back(&comparison);
    }
    std::map<std::string, GroupMetrics> result;
    for (const auto& [key, members] : groups) {
        result.emplace(key, groupMetricsOf(members, settings));
    }
    return result;
}

std::map<std::string, GroupMetrics> groupMetricsByDirection(const std::vector<Comparison>& comparisons,
                                                            const AnalysisSettings& settings) {
    return groupMetricsBy(
        comparisons, [](const Comparison& c) { return c.direction; }, settings);
}

std::map<std::string, GroupMetrics> groupMetricsByFamily(const std::vector<Comparison>& comparisons,
                                                         const AnalysisSettings& settings) {
    return groupMetricsBy(
        comparisons, [](const Comparison& c) { return c.family; }, settings);
}

std::string ladderLabel(double threshold) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "R@%g", threshold);
    return buffer;
}

} // namespace mkb::analysis
