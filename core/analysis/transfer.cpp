// Paired transfer metrics over resolved comparisons: tier, effective speedup, ratio, outcome, standing, reverse table.
#include "core/analysis/transfer.h"

#include "core/analysis/ladder.h"
#include "core/analysis/stats.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace mkb::analysis {

const char* toString(Outcome outcome) {
    switch (outcome) {
    case Outcome::Helped:
        return "helped";
    case Outcome::Neutral:
        return "neutral";
    case Outcome::Harmed:
        return "harmed";
    }
    return "unknown";
}

const char* toString(SourceStanding standing) {
    switch (standing) {
    case SourceStanding::Above:
        return "above";
    case SourceStanding::Same:
        return "same";
    case SourceStanding::Below:
        return "below";
    }
    return "unknown";
}

int tier(const Attempt& attempt, const AnalysisSettings& settings) {
    return static_cast<int>(std::count_if(settings.thresholds.begin(), settings.thresholds.end(),
                                          [&attempt](double threshold) { return attains(attempt, threshold); }));
}

double effectiveSpeedup(const Attempt& attempt, const AnalysisSettings& settings) {
    if (!attempt.passed || !(attempt.speedup > 0)) {
        return 1.0;
    }
    return settings.clipEffectiveSpeedup ? std::max(attempt.speedup, 1.0) : attempt.speedup;
}

namespace {

bool bothPassed(const Attempt& base, const Attempt& skill) {
    return base.passed && skill.passed;
}

/// The paired ratio skill/base that the paired rule reads, when it applies: paired rule, skill arm run, both passed.
const PairedTiming* applicablePairedRatio(const Comparison& comparison, const AnalysisSettings& settings) {
    if (settings.timing != TimingRule::Paired || comparison.skillSkipped() || !comparison.retiming ||
        !comparison.retiming->skillOverBase || !bothPassed(*comparison.base, *comparison.skill)) {
        return nullptr;
    }
    return &*comparison.retiming->skillOverBase;
}

Outcome unpairedOutcome(const Comparison& comparison, const AnalysisSettings& settings) {
    const Attempt& base = *comparison.base;
    const Attempt& skill = comparison.skillOutcome();
    const int baseTier = tier(base, settings);
    const int skillTier = tier(skill, settings);
    if (skillTier != baseTier) {
        return skillTier > baseTier ? Outcome::Helped : Outcome::Harmed;
    }
    if (base.passed && skill.passed && base.speedup > 0 && skill.speedup > 0) {
        const double ratio = skill.speedup / base.speedup;
        if (reaches(ratio, 1.0 + settings.delta)) {
            return Outcome::Helped;
        }
        if (staysWithin(ratio, 1.0 / (1.0 + settings.delta))) {
            return Outcome::Harmed;
        }
    }
    return Outcome::Neutral;
}

} // namespace

double pairedRatio(const Comparison& comparison, const AnalysisSettings& settings) {
    if (const PairedTiming* paired = applicablePairedRatio(comparison, settings)) {
        if (!settings.clipEffectiveSpeedup) {
            return paired->ratio;
        }
        const CellRetiming& retiming = *comparison.retiming;
        const double base = retiming.baseOverEager ? retiming.baseOverEager->ratio : comparison.base->speedup;
        const double skill = retiming.skillOverEager ? retiming.skillOverEager->ratio : comparison.skill->speedup;
        if (reaches(base, 1.0) && reaches(skill, 1.0)) {
            return paired->ratio;
        }
        if (base > 0 && skill > 0) {
            return std::max(skill, 1.0) / std::max(base, 1.0);
        }
    }
    return effectiveSpeedup(comparison.skillOutcome(), settings) / effectiveSpeedup(*comparison.base, settings);
}

Outcome pairedOutcome(const PairedTiming& paired, double delta) {
    if (reaches(paired.ratio, 1.0 + delta) && paired.ciLow > 1.0) {
        return Outcome::Helped;
    }
    if (staysWithin(paired.ratio, 1.0 / (1.0 + delta)) && paired.ciHigh < 1.0) {
        return Outcome::Harmed;
    }
    return Outcome::Neutral;
}

bool isSignificant(const OutcomeJudgement& judgement) {
    return judgement.outcome != Outcome::Neutral && (judgement.decisive || judgement.paired);
}

OutcomeJudgement judgeOutcome(const Comparison& comparison, const AnalysisSettings& settings) {
    OutcomeJudgement judgement;
    judgement.decisive = comparison.base->passed != comparison.skillOutcome().passed;
    if (settings.timing == TimingRule::Unpaired || comparison.skillSkipped()) {
        judgement.outcome = unpairedOutcome(comparison, settings);
        return judgement;
    }
    const Attempt& base = *comparison.base;
    const Attempt& skill = *comparison.skill;
    if (base.passed != skill.passed) {
        judgement.outcome = skill.passed ? Outcome::Helped : Outcome::Harmed;
        return judgement;
    }
    if (!base.passed) {
        judgement.outcome = Outcome::Neutral;
        return judgement;
    }
    if (const PairedTiming* paired = applicablePairedRatio(comparison, settings)) {
        judgement.paired = true;
        judgement.ratio = *paired;
        judgement.outcome = pairedOutcome(*paired, settings.delta);
        judgement.withinNoise = judgement.outcome == Outcome::Neutral && paired->withinNoise();
        return judgement;
    }
    judgement.fellBack = true;
    judgement.outcome = unpairedOutcome(comparison, settings);
    return judgement;
}

Outcome transferOutcome(const Comparison& comparison, const AnalysisSettings& settings) {
    return judgeOutcome(comparison, settings).outcome;
}

SourceStanding sourceStanding(const Comparison& comparison, const AnalysisSettings& settings) {
    const Attempt& source = *comparison.source;
    const Attempt& base = *comparison.base;
    if (settings.timing == TimingRule::Paired && comparison.retiming && comparison.retiming->sourceOverBase &&
        source.passed && base.passed) {
        switch (pairedOutcome(*comparison.retiming->sourceOverBase, settings.delta)) {
        case Outcome::Helped:
            return SourceStanding::Above;
        case Outcome::Harmed:
            return SourceStanding::Below;
        case Outcome::Neutral:
            return SourceStanding::Same;
        }
    }
    const int sourceTier = tier(source, settings);
    const int baseTier = tier(base, settings);
    if (sourceTier == baseTier) {
        return SourceStanding::Same;
    }
    return sourceTier > baseTier ? SourceStanding::Above : SourceStanding::Below;
}

static void count(OutcomeCounts& counts, Outcome outcome) {
    ++counts.total;
    switch (outcome) {
    case Outcome::Helped:
        ++counts.helped;
        break;
    case Outcome::Neutral:
        ++counts.neutral;
        break;
    case Outcome::Harmed:
        ++counts.harmed;
        break;
    }
}

static void count(OutcomeCounts& counts, const Comparison& comparison, const AnalysisSettings& settings) {
    const OutcomeJudgement judgement = judgeOutcome(comparison, settings);
    count(counts, judgement.outcome);
    counts.paired += judgement.paired ? 1 : 0;
    counts.fellBack += judgement.fellBack ? 1 : 0;
    counts.withinNoise += judgement.withinNoise ? 1 : 0;
    counts.withRetiming += comparison.retiming ? 1 : 0;
}

static void fillShares(OutcomeCounts& counts) {
    counts.helpedShare = share(counts.helped, counts.total);
    counts.neutralShare = share(counts.neutral, counts.total);
    counts.harmedShare = share(counts.harmed, counts.total);
}

namespace {

const Comparison& comparisonOf(const Comparison& comparison) {
    return comparison;
}

const Comparison& comparisonOf(const Comparison* comparison) {
    return *comparison;
}

/// outcomeCounts over a vector of comparisons or a view of them.
template <typename Comparisons>
OutcomeCounts outcomeCountsIn(const Comparisons& comparisons, const AnalysisSettings& settings) {
    OutcomeCounts counts;
    for (const auto& entry : comparisons) {
        const Comparison& comparison = comparisonOf(entry);
        if (comparison.resolved()) {
            count(counts, comparison, settings);
        } else if (comparison.notComparable()) {
            ++counts.notComparable;
        }
    }
    fillShares(counts);
    return counts;
}

/// The paired ratio of every resolved comparison, in order: what ΔGM and its CI are taken over.
template <typename Comparisons>
std::vector<double> resolvedRatios(const Comparisons& comparisons, const AnalysisSettings& settings) {
    std::vector<double> ratios;
    for (const auto& entry : comparisons) {
        const Comparison& comparison = comparisonOf(entry);
        if (comparison.resolved()) {
            ratios.push_back(pairedRatio(comparison, settings));
        }
    }
    return ratios;
}

std::optional<double> deltaOf(const std::vector<double>& ratios) {
    const std::optional<double> geometric = geometricMean(ratios);
    if (!geometric) {
        return std::nullopt;
    }
    return *geometric - 1.0;
}

std::optional<Interval> deltaCiOf(std::vector<double> ratios) {
    std::optional<Interval> interval = geometricMeanBootstrapCi(std::move(ratios));
    if (!interval) {
        return std::nullopt;
    }
    return Interval{interval->low - 1.0, interval->high - 1.0};
}

template <typename Comparisons>
TransferSummary transferSummaryIn(const Comparisons& comparisons, const AnalysisSettings& settings,
                                  SummaryInterval interval) {
    std::vector<double> ratios = resolvedRatios(comparisons, settings);
    TransferSummary summary{outcomeCountsIn(comparisons, settings), deltaOf(ratios), {}};
    if (interval == SummaryInterval::Computed) {
        summary.deltaGeometricMeanCi = deltaCiOf(std::move(ratios));
    }
    return summary;
}

} // namespace

OutcomeCounts outcomeCounts(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings) {
    return outcomeCountsIn(comparisons, settings);
}

OutcomeCounts outcomeCounts(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    return outcomeCountsIn(comparisons, settings);
}

std::optional<double> deltaGeometricMean(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings) {
    return deltaOf(resolvedRatios(comparisons, settings));
}

std::optional<double> deltaGeometricMean(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    return deltaOf(resolvedRatios(comparisons, settings));
}

std::optional<Interval> deltaGeometricMeanCi(const std::vector<Comparison>& comparisons,
                                             const AnalysisSettings& settings) {
    return deltaCiOf(resolvedRatios(comparisons, settings));
}

std::optional<Interval> deltaGeometricMeanCi(const ComparisonView& comparisons, const AnalysisSettings& settings) {
    return deltaCiOf(resolvedRatios(comparisons, settings));
}

TransferSummary transferSummary(const std::vector<Comparison>& comparisons, const AnalysisSettings& settings,
                                SummaryInterval interval) {
    return transferSummaryIn(comparisons, settings, interval);
}

TransferSummary transferSummary(const ComparisonView& comparisons, const AnalysisSettings& settings,
                                SummaryInterval interval) {
    return transferSummaryIn(comparisons, settings, interval);
}

std::array<StandingRow, 3> outcomesBySourceStanding(const std::vector<Comparison>& comparisons,
                                                    const AnalysisSettings& settings) {
    std::array<StandingRow, 3> rows{StandingRow{SourceStanding::Above, {}}, StandingRow{SourceStanding::Same, {}},
                                    StandingRow{SourceStanding::Below, {}}};
    for (const Comparison& comparison : comparisons) {
        if (!comparison.resolved()) {
            continue;
        }
        const SourceStanding standing = sourceStanding(comparison, settings);
        count(rows[static_cast<std::size_t>(standing)].outcomes, comparison, settings);
    }
    for (StandingRow& row : rows) {
        fillShares(row.outcomes);
    }
    return rows;
}

std::array<ReverseDirectionRow, 3> reverseDirectionTable(const std::vector<Comparison>& comparisons,
                                                         const AnalysisSettings& settings) {
    // Views into the comparisons, hashed: no key copies (this runs over every cell-replicate of a store).
    // Model, problem, replicate, source DSL, target DSL.
    using Key = std::tuple<std::string_view, int, int, std::string_view, std::string_view>;
    struct KeyHash {
        std::size_t operator()(const Key& key) const {
            std::size_t hash = std::hash<std::string_view>{}(std::get<0>(key));
            for (std::size_t part :
                 {std::hash<int>{}(std::get<1>(key)), std::hash<int>{}(std::get<2>(key)),
                  std::hash<std::string_view>{}(std::get<3>(key)), std::hash<std::string_view>{}(std::get<4>(key))}) {
                hash ^= part + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
            }
            return hash;
        }
    };
    std::unordered_map<Key, const Comparison*, KeyHash> byKey;
    byKey.reserve(comparisons.size());
    for (const Comparison& comparison : comparisons) {
        byKey[{comparison.model, comparison.problemNumber, comparison.replicate, comparison.sourceDsl,
               comparison.targetDsl}] = &comparison;
    }
    std::array<ReverseDirectionRow, 3> rows{ReverseDirectionRow{Outcome::Helped}, ReverseDirectionRow{Outcome::Neutral},
                                            ReverseDirectionRow{Outcome::Harmed}};
    for (const Comparison& comparison : comparisons) {
        if (!comparison.resolved()) {
            continue;
        }
        ReverseDirectionRow& row = rows[static_cast<std::size_t>(transferOutcome(comparison, settings))];
        ++row.comparisons;
        auto reverse = byKey.find({comparison.model, comparison.problemNumber, comparison.replicate,
                                   comparison.targetDsl, comparison.sourceDsl});
        if (reverse == byKey.end() || !reverse->second->resolved()) {
            ++row.reverseMissing;
            continue;
        }
        switch (transferOutcome(*reverse->second, settings)) {
        case Outcome::Helped:
            ++row.reverseHelped;
            break;
        case Outcome::Neutral:
            ++row.reverseNeutral;
            break;
        case Outcome::Harmed:
            ++row.reverseHarmed;
            break;
        }
    }
    return rows;
}

} // namespace mkb::analysis
