// R@t, S, lift, coverage and the MetaKernelBench splits over resolved comparisons.
#include "core/analysis/ladder.h"

#include "core/analysis/stats.h"

#include <cstdio>

namespace mkb::analysis {

namespace {

LadderPosition verdictPosition(const Attempt& attempt) {
    return {attempt.passed, attempt.speedup, attempt.speedupCiLow, attempt.speedupCiHigh};
}

LadderPosition retimedPosition(const Attempt& attempt, const PairedTiming& overEager) {
    return {attempt.passed, overEager.ratio, overEager.ciLow, overEager.ciHigh};
}

/// A cell's base and skill-outcome positions under the settings' timing rule (Contrast says how).
struct CellPositions {
    LadderPosition base;
    LadderPosition skill;
    bool paired = false;     // both speedups came from the re-timing
    bool fellBack = false;   // a passing arm had no speedup from a re-timing
    bool indistinct = false; // the re-timing's paired ratio skill/base has a CI containing 1
};

CellPositions positionsOf(const Comparison& comparison, TimingRule timing) {
    CellPositions cell{verdictPosition(*comparison.base), verdictPosition(comparison.skillOutcome())};
    if (timing == TimingRule::Unpaired) {
        return cell;
    }
    const bool skillRan = comparison.sourceWroteSkill();
    const bool needBase = comparison.base->passed;
    const bool needSkill = skillRan && comparison.skill->passed;
    if (!needBase && !needSkill) {
        return cell; // nothing passed: no speedup to take from anywhere
    }
    const CellRetiming* retiming = comparison.retiming.get();
    if (!retiming || (needBase && !retiming->baseOverEager) || (needSkill && !retiming->skillOverEager)) {
        cell.fellBack = true;
        return cell;
    }
    if (needBase) {
        cell.base = retimedPosition(*comparison.base, *retiming->baseOverEager);
    }
    cell.skill = !skillRan   ? cell.base
                 : needSkill ? retimedPosition(*comparison.skill, *retiming->skillOverEager)
                             : verdictPosition(*comparison.skill);
    cell.paired = true;
    cell.indistinct = skillRan && retiming->skillOverBase && retiming->skillOverBase->withinNoise();
    return cell;
}

/// R@t and S from per-cell attainment (attained[i][t] is 0 or 1); nullopt when there are no cells.
std::optional<LadderRates> ladderOf(const std::vector<std::vector<double>>& attained,
                                    const std::vector<double>& thresholds) {
    if (attained.empty() || thresholds.empty()) {
        return std::nullopt;
    }
    LadderRates result;
    result.thresholds = thresholds;
    double rateSum = 0;
    for (std::size_t t = 0; t < thresholds.size(); ++t) {
        double count = 0;
        for (const std::vector<double>& cell : attained) {
            count += cell[t];
        }
        result.rates.push_back(count / double(attained.size()));
        rateSum += result.rates.back();
    }
    result.score = 100.0 * rateSum / double(thresholds.size());
    return result;
}

} // namespace

CellLadder cellLadder(const Comparison& comparison, const AnalysisSettings& settings) {
    const CellPositions cell = positionsOf(comparison, settings.timing);
    CellLadder result{cell.base, cell.skill, cell.paired, cell.fellBack, {}, {}, {}};
    for (double t : settings.thresholds) {
        const bool base = cell.base.attains(t);
        const bool skill = cell.skill.attains(t);
        const bool crossing = base != skill && cell.base.passed && cell.skill.passed;
        // A tie: noise moved it across t, so it lifts nothing.
        const bool tie =
            cell.paired && crossing && (cell.base.straddles(t) || cell.skill.straddles(t) || cell.indistinct);
        result.baseAttains.push_back(base);
        result.skillAttains.push_back(tie ? base : skill);
        result.ties.push_back(tie);
    }
    return result;
}

bool attains(const Attempt& attempt, double threshold) {
    return verdictPosition(attempt).attains(threshold);
}

bool straddles(const Attempt& attempt, double threshold) {
    return verdictPosition(attempt).straddles(threshold);
}

std::optional<LadderRates> ladder(const std::vector<const Attempt*>& attempts, const AnalysisSettings& settings) {
    std::vector<std::vector<double>> attained;
    for (const Attempt* attempt : attempts) {
        std::vector<double>& cell = attained.emplace_back();
        for (double threshold : settings.thresholds) {
            cell.push_back(attains(*attempt, threshold) ? 1 : 0);
        }
    }
    return ladderOf(attained, settings.thresholds);
}

/// A cell's statistics whose means the intervals bootstrap: S base, S skill, S lift, then the lift at each threshold.
static std::vector<double> cellStatisticsOf(const CellLadder& cell) {
    const std::size_t count = cell.baseAttains.size();
    std::vector<double> statistics{0, 0, 0};
    for (std::size_t i = 0; i < count; ++i) {
        const double base = cell.baseAttains[i] ? 1 : 0;
        const double skill = cell.skillAttains[i] ? 1 : 0;
        statistics[0] += 100.0 * base / double(count);
        statistics[1] += 100.0 * skill / double(count);
        statistics.push_back(skill - base);
    }
    statistics[2] = statistics[1] - statistics[0];
    return statistics;
}

/// The 95% bootstrap intervals of the means of the cells' statistics (cellStatisticsOf, one entry per cell).
static LadderIntervals intervalsOf(std::vector<std::vector<double>> cellStatistics, std::size_t thresholds) {
    LadderIntervals result;
    if (thresholds == 0) {
        return result;
    }
    std::vector<std::optional<Interval>> intervals = meanBootstrapCis(std::move(cellStatistics), 3 + thresholds);
    result.baseScore = intervals[0];
    result.skillScore = intervals[1];
    result.liftScore = intervals[2];
    result.liftRates.assign(intervals.begin() + 3, intervals.end());
    return result;
}

/// interval: bootstrap S and lift (groupMetrics asks it only for the whole group, not for its sub-contrasts).
static Contrast contrastOf(const std::vector<const Comparison*>& resolved, const AnalysisSettings& settings,
                           SummaryInterval interval = SummaryInterval::Computed) {
    Contrast result;
    result.timing = settings.timing;
    result.resolved = resolved.size();
    const std::size_t count = settings.thresholds.size();
    result.baseBorderline.assign(count, 0);
    result.skillBorderline.assign(count, 0);
    result.ties.assign(count, 0);
    std::vector<std::vector<double>> baseAttained;
    std::vector<std::vector<double>> skillAttained;
    std::vector<std::vector<double>> cellStatistics; // only when the intervals are computed
    for (const Comparison* comparison : resolved) {
        const CellLadder cell = cellLadder(*comparison, settings);
        result.pairedCells += cell.paired ? 1 : 0;
        result.fellBack += cell.fellBack ? 1 : 0;
        std::vector<double> base(count);
        std::vector<double> skill(count);
        for (const auto& [position, borderline] :
             {std::pair{&cell.base, &result.baseBorderline}, std::pair{&cell.skill, &result.skillBorderline}}) {
            result.withCi += position->ciLow && position->ciHigh ? 1 : 0;
            for (std::size_t i = 0; i < count; ++i) {
                (*borderline)[i] += position->straddles(settings.thresholds[i]) ? 1 : 0;
            }
        }
        for (std::size_t i = 0; i < count; ++i) {
            base[i] = cell.baseAttains[i] ? 1 : 0;
            skill[i] = cell.skillAttains[i] ? 1 : 0;
            result.ties[i] += cell.ties[i] ? 1 : 0;
        }
        if (interval == SummaryInterval::Computed) {
            cellStatistics.push_back(cellStatisticsOf(cell));
        }
        baseAttained.push_back(std::move(base));
        skillAttained.push_back(std::move(skill));
    }
    result.base = ladderOf(baseAttained, settings.thresholds);
    result.skill = ladderOf(skillAttained, settings.thresholds);
    if (result.base && result.skill) {
        LadderRates lift;
        lift.thresholds = result.base->thresholds;
        for (std::size_t i = 0; i < result.base->rates.size(); ++i) {
            lift.rates.push_back(result.skill->rates[i] - result.base->rates[i]);
        }
        lift.score = result.skill->score - result.base->score;
        result.lift = lift;
    }
    if (interval == SummaryInterval::Computed) {
        result.intervals = intervalsOf(std::move(cellStatistics), count);
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

static ComparisonView resolvedOf(const ComparisonView& comparisons) {
    return resolvedWhere(comparisons, [](const Comparison&) { return true; });
}

static GroupMetrics groupMetricsOf(const ComparisonView& comparisons, const AnalysisSettings& settings,
                                   SummaryInterval interval) {
    constexpr SummaryInterval none = SummaryInterval::Deferred; // the sub-contrasts never get intervals
    GroupMetrics result;
    result.comparisons = comparisons.size();
    result.coverage = coverageOf(comparisons);
    result.all = contrastOf(resolvedOf(comparisons), settings, interval);
    result.withSkill = contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return c.sourceWroteSkill(); }),
                                  settings, none);
    result.sourcePassed =
        contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return c.source->passed; }), settings, none);
    result.sourceFailed =
        contrastOf(resolvedWhere(comparisons, [](const Comparison& c) { return !c.source->passed; }), settings, none);
    return result;
}

Contrast contrast(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings) {
    return contrastOf(resolvedOf(viewOf(comparisons)), settings);
}

Coverage coverage(const std::vector<Comparison>& comparisons) {
    return coverageOf(viewOf(comparisons));
}

GroupMetrics groupMetrics(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings,
                          SummaryInterval interval) {
    return groupMetricsOf(viewOf(comparisons), settings, interval);
}

GroupMetrics groupMetrics(const ComparisonView& comparisons, const AnalysisSettings& settings,
                          SummaryInterval interval) {
    return groupMetricsOf(comparisons, settings, interval);
}

LadderIntervals ladderIntervals(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    std::vector<std::vector<double>> cellStatistics;
    for (const Comparison* comparison : resolvedOf(comparisons)) {
        cellStatistics.push_back(cellStatisticsOf(cellLadder(*comparison, settings)));
    }
    return intervalsOf(std::move(cellStatistics), settings.thresholds.size());
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
        result.emplace(key, groupMetricsOf(members, settings, SummaryInterval::Computed));
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
