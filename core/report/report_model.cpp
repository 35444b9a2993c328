// Builds report tables: trial selection, grouping by the chosen split, and one table per metric set, every number
// taken from a core/analysis/ function.
// Longer than 600 lines because every report table is built from the same grouped selection and shares its grouping
// helpers; a candidate for a split into one file per metric set.
#include "core/report/report_model.h"

#include "core/analysis/attempt.h"
#include "core/analysis/attempt_set.h"
#include "core/analysis/calibration_ladder.h"
#include "core/analysis/comparison.h"
#include "core/analysis/kernelbenchx.h"
#include "core/analysis/ladder.h"
#include "core/analysis/portability.h"
#include "core/analysis/refinement.h"
#include "core/analysis/transfer.h"
#include "core/analysis/usage.h"
#include "core/analysis/variance.h"
#include "core/catalog/problem_meta.h"
#include "core/io/attempt_loader.h"
#include "core/io/kbx_categories.h"
#include "core/report/report_directions.h"
#include "core/report/report_kbx_agreement.h"
#include "core/report/report_kbx_events.h"
#include "core/report/report_kbx_paper.h"
#include "core/report/report_kbx_portability.h"
#include "core/util/json_input.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

namespace mkb::report {
namespace {

using analysis::Attempt;
using analysis::Comparison;

constexpr MetricSet kAllMetricSets[] = {MetricSet::Ladder,       MetricSet::Coverage,   MetricSet::Transfer,
                                        MetricSet::Standing,     MetricSet::Reverse,    MetricSet::Usage,
                                        MetricSet::KernelBenchX, MetricSet::Refinement, MetricSet::Portability};
/// Every set --metrics knows, in the order a report holds them: `all`'s, then the direction tables and the
/// KernelBench-X findings, agreement and events.
constexpr MetricSet kKnownMetricSets[] = {MetricSet::Ladder,       MetricSet::Coverage,      MetricSet::Transfer,
                                          MetricSet::Standing,     MetricSet::Reverse,       MetricSet::Usage,
                                          MetricSet::KernelBenchX, MetricSet::Refinement,    MetricSet::Portability,
                                          MetricSet::Directions,   MetricSet::KbxPaper,      MetricSet::KbxAgreement,
                                          MetricSet::KbxEvents,    MetricSet::KbxPortability};

/// One row group of the report: its comparisons and the attempts that belong to it.
struct Group {
    std::string key;
    std::vector<Comparison> ownComparisons;
    std::vector<const Attempt*> chosenAttempts; // while the groups are made; then in `attempts`
    // The whole selection for the overall split (no copy), else the group's own.
    const std::vector<Comparison>* comparisons = &ownComparisons;
    analysis::AttemptSet attempts; // views of the selection's attempts, never copies
    std::set<std::string> arms;    // every arm of the group's live trials, with a verdict or not (the usage rows)
};

const std::string kAllKey = "all";

std::string problemKey(int number, const std::string& slug) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%02d", number);
    return std::string(digits) + "_" + slug;
}

std::string splitColumn(ReportSplit split) {
    switch (split) {
    case ReportSplit::Overall:
        return "group";
    case ReportSplit::Direction:
        return "direction";
    case ReportSplit::Family:
        return "family";
    case ReportSplit::WithSkill:
        return "skill handed over";
    case ReportSplit::SourceVerdict:
        return "source verdict";
    case ReportSplit::Model:
        return "model";
    case ReportSplit::Category:
        return "category";
    case ReportSplit::Boundary:
        return "boundary";
    }
    return "group";
}

std::string splitTitle(ReportSplit split) {
    return split == ReportSplit::Overall ? "overall" : "by " + splitColumn(split);
}

/// A boundary as a group key: "pending" for arms that hold no verdict yet.
std::string boundaryOrPending(const std::string& boundary) {
    return boundary.empty() ? "pending" : boundary;
}

/// The key of a comparison under a split.
std::string comparisonKey(const Comparison& comparison, ReportSplit split) {
    switch (split) {
    case ReportSplit::Overall:
        return "all";
    case ReportSplit::Direction:
        return comparison.direction;
    case ReportSplit::Family:
        return comparison.family;
    case ReportSplit::Model:
        return comparison.model;
    case ReportSplit::Category:
        return categoryOrUncategorised(comparison.category);
    case ReportSplit::Boundary:
        return comparison.notComparable() ? "not comparable" : boundaryOrPending(comparison.boundary());
    case ReportSplit::WithSkill:
        if (!comparison.skill) {
            return "pending";
        }
        return comparison.sourceWroteSkill() ? "with skill" : "without skill";
    case ReportSplit::SourceVerdict:
        if (!comparison.source) {
            return "pending";
        }
        return comparison.source->passed ? "passed" : "failed";
    }
    return "all";
}

/// Splits whose groups are defined on attempts directly; the others take the attempts of their comparisons.
bool groupsAttemptsDirectly(ReportSplit split) {
    return split == ReportSplit::Overall || split == ReportSplit::Family || split == ReportSplit::Model ||
           split == ReportSplit::Category || split == ReportSplit::Boundary;
}

std::string attemptKey(const Attempt& attempt, ReportSplit split) {
    switch (split) {
    case ReportSplit::Family:
        return attempt.family;
    case ReportSplit::Model:
        return attempt.model;
    case ReportSplit::Category:
        return categoryOrUncategorised(attempt.category);
    case ReportSplit::Boundary:
        return boundaryOrPending(attempt.boundary);
    default:
        return "all";
    }
}

/// withAttempts: fill each group's attempts (only the usage, kbx, refinement and portability tables read them); the
/// groups themselves are the same either way.
std::vector<Group> makeGroups(const std::vector<Comparison>& comparisons, const std::vector<Attempt>& attempts,
                              ReportSplit split, bool withAttempts) {
    std::vector<Group> groups;
    if (split == ReportSplit::Overall) {
        groups.push_back(Group{"all", {}, {}, &comparisons, analysis::AttemptSet(attempts), {}});
        return groups;
    }
    std::map<std::string, Group> byKey;
    for (const Comparison& comparison : comparisons) {
        byKey[comparisonKey(comparison, split)].ownComparisons.push_back(comparison);
    }
    if (groupsAttemptsDirectly(split)) {
        for (const Attempt& attempt : attempts) {
            Group& group = byKey[attemptKey(attempt, split)]; // a group of attempts alone is a group too
            if (withAttempts) {
                group.chosenAttempts.push_back(&attempt);
            }
        }
    } else if (withAttempts) {
        std::unordered_map<std::int64_t, const Attempt*> attemptById;
        attemptById.reserve(attempts.size());
        for (const Attempt& attempt : attempts) {
            attemptById.emplace(attempt.trialId, &attempt);
        }
        for (auto& [key, group] : byKey) {
            std::set<std::int64_t> seen;
            for (const Comparison& comparison : group.ownComparisons) {
                for (const auto* arm : {&comparison.source, &comparison.base, &comparison.skill}) {
                    if (*arm && seen.insert((*arm)->trialId).second) {
                        auto found = attemptById.find((*arm)->trialId);
                        group.chosenAttempts.push_back(found != attemptById.end() ? found->second : &**arm);
                    }
                }
            }
        }
    }
    for (auto& [key, group] : byKey) {
        group.key = key;
        groups.push_back(std::move(group));
    }
    for (Group& group : groups) {
        // The addresses settle only after the moves into the vector.
        group.comparisons = &group.ownComparisons;
        group.attempts = analysis::AttemptSet(std::move(group.chosenAttempts));
    }
    return groups;
}

/// Names the arms of each group, those still without a verdict included: for the attempt splits the arms of the
/// group's live trials (the attempts, and the armless trials not archived), for the comparison splits the three arms of
/// each of its cell-replicates.
void collectArms(std::vector<Group>& groups, const std::vector<Attempt>& attempts,
                 const std::vector<TrialRecord>& armless, const std::vector<Comparison>& comparisons,
                 ReportSplit split) {
    std::map<std::string, Group*> byKey;
    for (Group& group : groups) {
        byKey.emplace(group.key, &group);
    }
    if (groupsAttemptsDirectly(split)) {
        auto note = [&](const std::string& family, const std::string& model, const std::string& category,
                        const std::string& boundary, const std::string& arm) {
            const std::string key = split == ReportSplit::Family     ? family
                                    : split == ReportSplit::Model    ? model
                                    : split == ReportSplit::Category ? categoryOrUncategorised(category)
                                    : split == ReportSplit::Boundary ? boundaryOrPending(boundary)
                                                                     : kAllKey;
            if (auto found = byKey.find(key); found != byKey.end()) {
                found->second->arms.insert(arm);
            }
        };
        for (const Attempt& attempt : attempts) {
            note(attempt.family, attempt.model, attempt.category, attempt.boundary, attempt.arm);
        }
        for (const TrialRecord& trial : armless) {
            if (!trial.archived) {
                note(trial.family, trial.model, trial.category, "", trial.arm);
            }
        }
        return;
    }
    for (const Comparison& comparison : comparisons) {
        if (auto found = byKey.find(comparisonKey(comparison, split)); found != byKey.end()) {
            found->second->arms.insert(
                {"solo_" + comparison.sourceDsl, "solo_" + comparison.targetDsl, comparison.direction + "_skill"});
        }
    }
}

std::vector<std::string> withGroupColumn(ReportSplit split, std::vector<std::string> columns) {
    columns.insert(columns.begin(), splitColumn(split));
    return columns;
}

std::optional<double> optionalFrom(const std::optional<std::int64_t>& value) {
    return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
}

ReportCell intervalBound(const std::optional<analysis::Interval>& interval, bool high, bool percent) {
    if (!interval) {
        return nullCell();
    }
    const double bound = high ? interval->high : interval->low;
    return percent ? percentCell(bound) : numberCell(bound, 1);
}

/// Rows base, skill and lift with S and its interval, then the lift's interval bounds at every threshold and for S.
void appendLadderRows(ReportTable& table, const std::string& key, const analysis::Contrast& contrast,
                      std::size_t thresholdCount) {
    const analysis::LadderIntervals& intervals = contrast.intervals;
    const std::tuple<const char*, const std::optional<analysis::LadderRates>*, const std::optional<analysis::Interval>*>
        arms[] = {{"base", &contrast.base, &intervals.baseScore},
                  {"skill", &contrast.skill, &intervals.skillScore},
                  {"lift", &contrast.lift, &intervals.liftScore}};
    for (const auto& [name, rates, scoreInterval] : arms) {
        std::vector<ReportCell> row{textCell(key), textCell(name), countCell(contrast.resolved)};
        for (std::size_t i = 0; i < thresholdCount; ++i) {
            row.push_back(*rates ? percentCell((*rates)->rates[i]) : nullCell());
        }
        row.push_back(*rates ? numberCell((*rates)->score, 1) : nullCell());
        row.push_back(intervalBound(*scoreInterval, false, false));
        row.push_back(intervalBound(*scoreInterval, true, false));
        table.rows.push_back(std::move(row));
    }
    for (const bool high : {false, true}) {
        std::vector<ReportCell> row{textCell(key), textCell(high ? "lift 95% high" : "lift 95% low"),
                                    countCell(contrast.resolved)};
        for (std::size_t i = 0; i < thresholdCount; ++i) {
            row.push_back(i < intervals.liftRates.size() ? intervalBound(intervals.liftRates[i], high, true)
                                                         : nullCell());
        }
        row.push_back(intervalBound(intervals.liftScore, high, false));
        row.push_back(nullCell());
        row.push_back(nullCell());
        table.rows.push_back(std::move(row));
    }
}

std::string perThreshold(const std::vector<std::size_t>& counts, const std::vector<double>& thresholds) {
    std::string text;
    for (std::size_t i = 0; i < thresholds.size() && i < counts.size(); ++i) {
        text += (i ? ", " : "") + analysis::ladderLabel(thresholds[i]) + " " + std::to_string(counts[i]);
    }
    return text;
}

ReportTable ladderTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{
        "ladder", "Speedup ladder R@t and S, base against skill (" + splitTitle(options.split) + ")", {}, {}, {}, {}};
    std::vector<std::string> columns{"arm", "resolved"};
    for (double threshold : options.settings.thresholds) {
        columns.push_back(analysis::ladderLabel(threshold));
    }
    columns.insert(columns.end(), {"S", "S 95% low", "S 95% high"});
    table.columns = withGroupColumn(options.split, columns);
    const std::size_t count = options.settings.thresholds.size();
    std::vector<std::size_t> baseBorderline(count, 0);
    std::vector<std::size_t> skillBorderline(count, 0);
    std::vector<std::size_t> ties(count, 0);
    std::size_t withCi = 0;
    std::size_t resolved = 0;
    std::size_t pairedCells = 0;
    std::size_t fellBack = 0;
    for (const Group& group : groups) {
        const analysis::Contrast contrast = analysis::contrast(*group.comparisons, options.settings);
        appendLadderRows(table, group.key, contrast, count);
        withCi += contrast.withCi;
        resolved += contrast.resolved;
        pairedCells += contrast.pairedCells;
        fellBack += contrast.fellBack;
        for (std::size_t i = 0; i < count; ++i) {
            baseBorderline[i] += contrast.baseBorderline[i];
            skillBorderline[i] += contrast.skillBorderline[i];
            ties[i] += contrast.ties[i];
        }
    }
    table.footnotes.push_back(
        ladderRuleLine(options.settings.timing, resolved, pairedCells, fellBack, ties, options.settings.thresholds));
    table.footnotes.push_back(kLadderIntervalLine);
    if (withCi > 0) { // verdicts graded before speedup CIs existed add no line: older reports stay as they were
        table.footnotes.push_back("Borderline (passed, speedup 95% CI contains t; " + std::to_string(withCi) +
                                  " base and skill attempts carry a CI): base " +
                                  perThreshold(baseBorderline, options.settings.thresholds) + "; skill " +
                                  perThreshold(skillBorderline, options.settings.thresholds) + ".");
    }
    return table;
}

ReportTable coverageTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{
        "coverage", "Coverage of resolved cell-replicates (" + splitTitle(options.split) + ")", {}, {}, {}, {}};
    table.columns =
        withGroupColumn(options.split, {"cell-replicates", "resolved", "source passed", "source wrote skill"});
    for (const Group& group : groups) {
        const analysis::Coverage coverage = analysis::coverage(*group.comparisons);
        table.rows.push_back({textCell(group.key), countCell(group.comparisons->size()), countCell(coverage.resolved),
                              percentCell(coverage.sourcePassed), percentCell(coverage.sourceWroteSkill)});
    }
    return table;
}

/// Adds the outcomes' timing counts to a table's timing.
void addTiming(TableTiming& timing, const analysis::OutcomeCounts& counts) {
    timing.resolved += counts.total;
    timing.withRetiming += counts.withRetiming;
    timing.paired += counts.paired;
    timing.fellBack += counts.fellBack;
    timing.withinNoise += counts.withinNoise;
}

void setTiming(ReportTable& table, TableTiming timing) {
    table.footnotes.push_back(timingLine(timing));
    table.timing = std::move(timing);
}

TableTiming emptyTiming(const ReportOptions& options) {
    TableTiming timing;
    timing.rule = analysis::toString(options.settings.timing);
    return timing;
}

std::vector<ReportCell> outcomeCells(const analysis::OutcomeCounts& counts) {
    return {countCell(counts.total),        countCell(counts.helped),        countCell(counts.neutral),
            countCell(counts.harmed),       percentCell(counts.helpedShare), percentCell(counts.neutralShare),
            percentCell(counts.harmedShare)};
}

ReportTable transferTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{
        "transfer", "Paired transfer: helped (T), neutral, harmed (H) and ΔGM (" + splitTitle(options.split) + ")",
        {},         {},
        {},         {}};
    table.columns = withGroupColumn(options.split, {"resolved", "helped", "neutral", "harmed", "T", "neutral share",
                                                    "H", "ΔGM", "ΔGM CI low", "ΔGM CI high"});
    TableTiming timing = emptyTiming(options);
    for (const Group& group : groups) {
        const analysis::TransferSummary summary = analysis::transferSummary(*group.comparisons, options.settings);
        addTiming(timing, summary.outcomes);
        std::vector<ReportCell> row{textCell(group.key)};
        for (ReportCell& cell : outcomeCells(summary.outcomes)) {
            row.push_back(std::move(cell));
        }
        row.push_back(percentCell(summary.deltaGeometricMean));
        const std::optional<analysis::Interval>& ci = summary.deltaGeometricMeanCi;
        row.push_back(percentCell(ci ? std::optional<double>(ci->low) : std::nullopt));
        row.push_back(percentCell(ci ? std::optional<double>(ci->high) : std::nullopt));
        table.rows.push_back(std::move(row));
    }
    setTiming(table, std::move(timing));
    table.footnotes.push_back("ΔGM CI: 95% percentile bootstrap over the group's resolved comparisons (" +
                              std::to_string(analysis::kBootstrapResamples) +
                              " resamples, seeded from the ratios); none with fewer than 2.");
    return table;
}

ReportTable standingTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{
        "standing", "Transfer outcomes by source standing (" + splitTitle(options.split) + ")", {}, {}, {}, {}};
    table.columns = withGroupColumn(
        options.split, {"source standing", "resolved", "helped", "neutral", "harmed", "T", "neutral share", "H"});
    TableTiming timing = emptyTiming(options);
    for (const Group& group : groups) {
        for (const analysis::StandingRow& standing :
             analysis::outcomesBySourceStanding(*group.comparisons, options.settings)) {
            addTiming(timing, standing.outcomes);
            std::vector<ReportCell> row{textCell(group.key), textCell(analysis::toString(standing.standing))};
            for (ReportCell& cell : outcomeCells(standing.outcomes)) {
                row.push_back(std::move(cell));
            }
            table.rows.push_back(std::move(row));
        }
    }
    setTiming(table, std::move(timing));
    return table;
}

ReportTable reverseTable(const std::vector<Group>& groups, const std::vector<Comparison>& all,
                         const ReportOptions& options) {
    // The opposite direction of a comparison lands in another group under these splits, so the table covers the
    // whole selection there.
    const bool wholeSelection = !groupsAttemptsDirectly(options.split);
    const ReportSplit split = wholeSelection ? ReportSplit::Overall : options.split;
    ReportTable table{
        "reverse",
        "Reverse direction: what happened b→a where a→b was helped, neutral or harmed (" + splitTitle(split) + ")",
        {},
        {},
        {},
        {}};
    table.columns = withGroupColumn(split, {"forward outcome", "comparisons", "reverse helped", "reverse neutral",
                                            "reverse harmed", "reverse missing"});
    TableTiming timing = emptyTiming(options);
    auto addRows = [&](const std::string& key, const std::vector<Comparison>& comparisons) {
        addTiming(timing, analysis::outcomeCounts(comparisons, options.settings));
        for (const analysis::ReverseDirectionRow& reverse :
             analysis::reverseDirectionTable(comparisons, options.settings)) {
            table.rows.push_back({textCell(key), textCell(analysis::toString(reverse.forward)),
                                  countCell(reverse.comparisons), countCell(reverse.reverseHelped),
                                  countCell(reverse.reverseNeutral), countCell(reverse.reverseHarmed),
                                  countCell(reverse.reverseMissing)});
        }
    };
    if (wholeSelection) {
        addRows("all", all);
    } else {
        for (const Group& group : groups) {
            addRows(group.key, *group.comparisons);
        }
    }
    setTiming(table, std::move(timing));
    return table;
}

ReportTable usageTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{"usage", "Usage per arm (" + splitTitle(options.split) + ")", {}, {}, {}, {}};
    table.columns = withGroupColumn(options.split, {"arm", "attempts", "with usage", "input tokens", "cache tokens",
                                                    "output tokens", "cost USD", "mean agent s", "note"});
    for (const Group& group : groups) {
        std::map<std::string, analysis::ArmUsage> byArm = analysis::usageByArm(group.attempts);
        for (const std::string& arm : group.arms) {
            byArm.try_emplace(arm); // no verdict yet: zero attempts, every sum null
        }
        for (const auto& [arm, usage] : byArm) {
            const auto overflowed = [&](const char* key) {
                return std::find(usage.overflowed.begin(), usage.overflowed.end(), key) != usage.overflowed.end();
            };
            // A sum past its type's range is shown as such, never as a wrapped number or as unknown ("—").
            const auto sumCell = [&](const char* key, std::optional<double> value, int decimals) {
                return overflowed(key) ? textCell("overflow") : numberCell(value, decimals);
            };
            std::string note = usage.attempts == 0 ? "no verdict yet" : "";
            if (!usage.overflowed.empty()) {
                note = "a sum exceeds the largest number its column holds: a usage record carries an absurd value";
            }
            table.rows.push_back(
                {textCell(group.key), textCell(arm), countCell(usage.attempts), countCell(usage.trials),
                 sumCell("n_input_tokens", optionalFrom(usage.inputTokens), 0),
                 sumCell("n_cache_tokens", optionalFrom(usage.cacheTokens), 0),
                 sumCell("n_output_tokens", optionalFrom(usage.outputTokens), 0), sumCell("cost_usd", usage.costUsd, 2),
                 numberCell(usage.meanAgentSeconds, 1), note.empty() ? nullCell() : textCell(note)});
        }
    }
    return table;
}

std::string fastPLabel(double p) {
    char text[32];
    std::snprintf(text, sizeof text, "fast_%g", p);
    return text;
}

std::vector<ReportTable> kernelBenchXTables(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable accuracy{
        "kbx", "KernelBench-X accuracies, fast_p and speedups (" + splitTitle(options.split) + ")", {}, {}, {}, {}};
    std::vector<std::string> columns{"graded", "call accuracy", "execution accuracy", "outlier accuracy",
                                     "quantization pass"};
    for (double p : options.settings.fastPThresholds) {
        columns.push_back(fastPLabel(p));
    }
    for (const char* name : {"correct timed", "GM speedup", "slower than eager", "IOU median", "MFU median"}) {
        columns.push_back(name);
    }
    accuracy.columns = withGroupColumn(options.split, columns);
    ReportTable variance{"variance",
                         "Share of variance in correctness explained by KernelBench-X category, by family and by model "
                         "(η², " +
                             splitTitle(options.split) + ")",
                         withGroupColumn(options.split, {"graded", "η² category", "η² family", "η² model"}),
                         {},
                         {},
                         {}};
    for (const Group& group : groups) {
        const analysis::KernelBenchXSummary summary = analysis::kernelBenchXSummary(group.attempts, options.settings);
        std::vector<ReportCell> row{textCell(group.key),
                                    countCell(summary.accuracy.attempts),
                                    percentCell(summary.accuracy.callAccuracy),
                                    percentCell(summary.accuracy.executionAccuracy),
                                    percentCell(summary.accuracy.outlierAccuracy),
                                    percentCell(summary.accuracy.quantPassRate)};
        for (const analysis::FastP& fast : summary.fastP) {
            row.push_back(percentCell(fast.share));
        }
        row.push_back(countCell(summary.speedups.correctTimed));
        row.push_back(numberCell(summary.speedups.geometricMeanSpeedup, 3));
        row.push_back(percentCell(summary.speedups.slowerThanEagerShare));
        row.push_back(percentCell(summary.iou.median));
        row.push_back(percentCell(summary.mfu.median));
        accuracy.rows.push_back(std::move(row));

        const analysis::CorrectnessVariance explained = analysis::correctnessVariance(group.attempts);
        variance.rows.push_back({textCell(group.key), countCell(explained.attempts),
                                 numberCell(explained.byCategory, 3), numberCell(explained.byFamily, 3),
                                 numberCell(explained.byModel, 3)});
    }
    return {std::move(accuracy), std::move(variance)};
}

std::vector<ReportTable> refinementTables(const std::vector<Group>& groups, const ReportOptions& options) {
    const std::string scope = splitTitle(options.split);
    ReportTable byIndex{"refinement-index",
                        "Compile and correct rates by submission index (" + scope + ")",
                        withGroupColumn(options.split, {"submission", "attempts", "compiled", "correct"}),
                        {},
                        {},
                        {}};
    ReportTable rescue{
        "refinement-rescue",
        "Rescued attempts against correct from the start (" + scope + ")",
        withGroupColumn(options.split, {"with submissions", "correct from start", "rescued", "never correct",
                                        "rescued share", "GM speedup from start", "GM speedup rescued"}),
        {},
        {},
        {}};
    ReportTable edits{"refinement-edits",
                      "Fixing edits: local fixes against structural rewrites (" + scope + ")",
                      withGroupColumn(options.split, {"fixing edits", "local fixes", "structural rewrites",
                                                      "local share", "median changed-line share"}),
                      {},
                      {},
                      {}};
    for (const Group& group : groups) {
        for (const analysis::IndexRates& rates : analysis::ratesBySubmissionIndex(group.attempts)) {
            byIndex.rows.push_back({textCell(group.key), countCell(static_cast<std::size_t>(rates.index)),
                                    countCell(rates.attempts), percentCell(rates.compileRate),
                                    percentCell(rates.correctRate)});
        }
        const analysis::RescueSummary summary = analysis::rescueSummary(group.attempts);
        rescue.rows.push_back(
            {textCell(group.key), countCell(summary.withSubmissions), countCell(summary.correctFromStart),
             countCell(summary.rescued), countCell(summary.neverCorrect), percentCell(summary.rescuedShare),
             numberCell(summary.fromStartGeometricMean, 3), numberCell(summary.rescuedGeometricMean, 3)});
        const analysis::FixingEditSummary fixes =
            analysis::summarizeFixingEdits(analysis::fixingEdits(group.attempts, options.settings));
        edits.rows.push_back({textCell(group.key), countCell(fixes.edits), countCell(fixes.localFixes),
                              countCell(fixes.structuralRewrites), percentCell(fixes.localFixShare),
                              percentCell(fixes.changedLineShare.median)});
    }
    return {std::move(byIndex), std::move(rescue), std::move(edits)};
}

ReportTable portabilityTable(const std::vector<Group>& groups, const ReportOptions& options) {
    ReportTable table{
        "portability",
        "Portability: one kernel graded on several devices, max/min speedup (" + splitTitle(options.split) + ")",
        withGroupColumn(options.split, {"problem", "DSL", "kernel", "devices", "max/min", "fastest", "slowest"}),
        {},
        {},
        {}};
    for (const Group& group : groups) {
        for (const analysis::PortabilityGroup& kernel : analysis::portability(group.attempts)) {
            table.rows.push_back({textCell(group.key), textCell(problemKey(kernel.problemNumber, kernel.problemSlug)),
                                  textCell(kernel.dsl), textCell(kernel.kernelSha256.substr(0, 12)),
                                  countCell(kernel.devices.size()), numberCell(kernel.maxOverMin, 3),
                                  textCell(kernel.fastestDevice), textCell(kernel.slowestDevice)});
        }
    }
    return table;
}

/// The direction matrices: one over the whole selection when the split is overall or direction (the matrix is the
/// direction split laid out), else one per group that holds comparisons.
std::vector<ReportTable> directionTablesOf(const std::vector<Group>& groups, const std::vector<Comparison>& all,
                                           const ReportOptions& options) {
    if (options.split == ReportSplit::Overall || options.split == ReportSplit::Direction) {
        return directionTables({{kAllKey, &all}}, "", splitTitle(ReportSplit::Overall), options);
    }
    std::vector<DirectionGroup> matrices;
    for (const Group& group : groups) {
        if (!group.comparisons->empty()) {
            matrices.push_back({group.key, group.comparisons});
        }
    }
    return directionTables(matrices, splitColumn(options.split), splitTitle(options.split), options);
}

std::string formatSettings(const analysis::AnalysisSettings& settings) {
    std::string thresholds;
    for (double threshold : settings.thresholds) {
        char text[32];
        std::snprintf(text, sizeof text, "%s%g", thresholds.empty() ? "" : ",", threshold);
        thresholds += text;
    }
    char text[160];
    std::snprintf(text, sizeof text, "settings: thresholds %s, delta %g, effective speedup %s", thresholds.c_str(),
                  settings.delta, settings.clipEffectiveSpeedup ? "clipped at 1" : "unclipped");
    return text;
}

std::optional<std::pair<std::string, std::string>> directionDsls(const std::string& direction) {
    return analysis::parseSkillArm(direction + "_skill");
}

/// The report's filters on one trial: model, family, problems, and the arms of the chosen direction.
class TrialSelector {
public:
    explicit TrialSelector(const ReportOptions& options) : options_(options) {
        if (options.direction) {
            if (auto dsls = directionDsls(*options.direction)) {
                arms_ = {"solo_" + dsls->first, "solo_" + dsls->second, *options.direction + "_skill"};
            }
        }
    }

    bool keeps(const TrialRecord& trial) const {
        if (options_.model && trial.model != *options_.model) {
            return false;
        }
        if (options_.family && trial.family != *options_.family) {
            return false;
        }
        if (options_.problems && !globMatch(*options_.problems, problemKey(trial.problemNumber, trial.problemSlug)) &&
            !globMatch(*options_.problems, trial.problemSlug)) {
            return false;
        }
        if (options_.boundary && trial.finalVerdict &&
            boundaryOrLegacy(trial.finalVerdict->boundary) != *options_.boundary) {
            return false;
        }
        if (options_.direction) {
            return std::find(arms_.begin(), arms_.end(), trial.arm) != arms_.end(); // no arms: a bad direction
        }
        return true;
    }

private:
    const ReportOptions& options_;
    std::vector<std::string> arms_;
};

/// The implementation boundaries the attempts were graded under, and the cell-replicates never paired because their
/// arms were graded under different ones (DESIGN §5.2): one line under every table and in the notes.
std::string boundaryLine(const std::vector<Attempt>& attempts, const std::vector<Comparison>& comparisons) {
    std::map<std::string, std::size_t> counts;
    for (const Attempt& attempt : attempts) {
        if (!attempt.boundary.empty()) {
            ++counts[attempt.boundary];
        }
    }
    const auto notComparable = std::count_if(comparisons.begin(), comparisons.end(),
                                             [](const Comparison& comparison) { return comparison.notComparable(); });
    if (counts.empty()) {
        return "Boundary: none (no attempt holds a verdict).";
    }
    std::string names;
    for (const auto& [boundary, count] : counts) {
        names += (names.empty() ? "" : ", ") + boundary + " (" + std::to_string(count) + " attempts)";
    }
    std::string line = (counts.size() == 1 ? "Boundary: " : "Boundaries: ") + names;
    if (counts.size() > 1) {
        line += "; no comparison pairs two of them (--boundary keeps one)";
    }
    return line + "; " + std::to_string(notComparable) +
           " cell-replicates not comparable (arms graded under different boundaries).";
}

/// What a report is built from: the selected trials as attempts (in trial id order) and the selected trials that fill
/// no arm, with the comparisons over both.
struct Selection {
    std::size_t trials = 0;
    std::shared_ptr<const std::vector<Attempt>> attempts;
    std::vector<TrialRecord> armless;
    std::vector<Comparison> comparisons;
};

Report reportOf(Selection& selection, const ReportOptions& options) {
    Report report;
    report.title = "MetaKernelBench Workbench report";
    const std::vector<Attempt>& attempts = *selection.attempts;
    std::vector<Comparison>& comparisons = selection.comparisons;
    if (options.direction) {
        std::erase_if(comparisons,
                      [&](const Comparison& comparison) { return comparison.direction != *options.direction; });
    }
    std::string note = "selection: " + std::to_string(selection.trials) + " trials, " +
                       std::to_string(attempts.size()) + " attempts with a verdict, " +
                       std::to_string(comparisons.size()) + " cell-replicates";
    for (const auto& [name, value] : {std::pair{"model", options.model}, std::pair{"direction", options.direction},
                                      std::pair{"family", options.family}, std::pair{"problems", options.problems},
                                      std::pair{"boundary", options.boundary}}) {
        if (value) {
            note += std::string("; ") + name + " " + *value;
        }
    }
    report.notes.push_back(note);
    report.notes.push_back(formatSettings(options.settings));

    auto wants = [&](MetricSet set) {
        return std::find(options.metrics.begin(), options.metrics.end(), set) != options.metrics.end();
    };
    const bool groupsNeedAttempts = wants(MetricSet::Usage) || wants(MetricSet::KernelBenchX) ||
                                    wants(MetricSet::Refinement) || wants(MetricSet::Portability);
    std::vector<Group> groups = makeGroups(comparisons, attempts, options.split, groupsNeedAttempts);
    if (std::find(options.metrics.begin(), options.metrics.end(), MetricSet::Usage) != options.metrics.end()) {
        collectArms(groups, attempts, selection.armless, comparisons, options.split);
    }
    for (MetricSet set : options.metrics) {
        switch (set) {
        case MetricSet::Ladder:
            report.tables.push_back(ladderTable(groups, options));
            break;
        case MetricSet::Coverage:
            report.tables.push_back(coverageTable(groups, options));
            break;
        case MetricSet::Transfer:
            report.tables.push_back(transferTable(groups, options));
            break;
        case MetricSet::Standing:
            report.tables.push_back(standingTable(groups, options));
            break;
        case MetricSet::Reverse:
            report.tables.push_back(reverseTable(groups, comparisons, options));
            break;
        case MetricSet::Usage:
            report.tables.push_back(usageTable(groups, options));
            break;
        case MetricSet::KernelBenchX:
            for (ReportTable& table : kernelBenchXTables(groups, options)) {
                report.tables.push_back(std::move(table));
            }
            break;
        case MetricSet::Refinement:
            for (ReportTable& table : refinementTables(groups, options)) {
                report.tables.push_back(std::move(table));
            }
            break;
        case MetricSet::Portability:
            report.tables.push_back(portabilityTable(groups, options));
            break;
        case MetricSet::Directions:
            for (ReportTable& table : directionTablesOf(groups, comparisons, options)) {
                report.tables.push_back(std::move(table));
            }
            break;
        case MetricSet::KbxPaper: {
            std::vector<FindingsGroup> findings;
            for (const Group& group : groups) {
                findings.push_back({group.key, &group.attempts});
            }
            report.tables.push_back(kbxPaperTable(findings, splitColumn(options.split)));
            break;
        }
        case MetricSet::KbxAgreement: // read from the store by buildReportFromStore
        case MetricSet::KbxEvents:
        case MetricSet::KbxPortability:
            break;
        }
    }
    report.notes.push_back(boundaryLine(attempts, comparisons)); // which boundary every table covers
    return report;
}

std::string calibratedDeviceName(const CalibrationRecord& calibration) {
    return calibration.deviceName.empty() ? calibration.device
                                          : calibration.device + " (" + calibration.deviceName + ")";
}

ReportCell timingCell(const analysis::PairedTiming& timing, int which, int precision) {
    return numberCell(which == 0 ? timing.ratio : which == 1 ? timing.ciLow : timing.ciHigh, precision);
}

/// The A/B ladders of the chosen calibrations (analysis::slowdownLadder over each one's stored sessions): a ladder
/// table (base = A, skill = B, lift = B − A) and a table of the controls. Nothing when no chosen calibration stored
/// its sessions (calibrations made before the ladder), so such reports stay as they were.
void appendCalibrationLadders(const CalibrationSummary& summary, const analysis::AnalysisSettings& settings,
                              Report& report) {
    const std::vector<double>& thresholds = settings.thresholds;
    ReportTable ladders{"calibration_ladder",
                        "A/B ladder of the calibrations: the slowed copy B against the solution A",
                        {},
                        {},
                        {},
                        {}};
    ladders.columns = {"Device", "arm", "resolved"};
    for (double threshold : thresholds) {
        ladders.columns.push_back(analysis::ladderLabel(threshold));
    }
    ladders.columns.insert(ladders.columns.end(), {"S", "S 95% low", "S 95% high"});
    ReportTable controls{
        "calibration_ab", "A/B controls of the calibrations, one paired re-timing each", {}, {}, {}, {}};
    controls.columns = {"Device",     "Problem",     "DSL",          "Replicate", "A speedup",  "A 95% low",
                        "A 95% high", "A rung",      "B speedup",    "B 95% low", "B 95% high", "B rung",
                        "B/A",        "B/A 95% low", "B/A 95% high", "Change",    "Crossed",    "Ties"};
    for (const DeviceCalibration& entry : summary.devices) {
        if (!entry.chosen) {
            continue;
        }
        const std::vector<analysis::SlowdownSession> sessions = slowdownSessions(*entry.chosen);
        if (sessions.empty()) {
            continue;
        }
        const analysis::SlowdownLadder ladder = analysis::slowdownLadder(sessions, settings);
        const std::string name = calibratedDeviceName(*entry.chosen);
        appendLadderRows(ladders, name, ladder.contrast, thresholds.size());
        char share[32];
        std::snprintf(share, sizeof share, "%.1f%%", 100.0 * double(ladder.changeExcludesZero) / sessions.size());
        char slowdown[32];
        std::snprintf(slowdown, sizeof slowdown, "%.3f", entry.chosen->slowdown);
        ladders.footnotes.push_back(
            name + ": " + std::to_string(sessions.size()) + " controls, slowdown " + slowdown + "; ties " +
            perThreshold(ladder.contrast.ties, thresholds) + "; " + std::to_string(ladder.crossed) +
            " crossed a threshold (not a tie), " + std::to_string(ladder.wrongWay) +
            " the wrong way; the speedup change B/A lies below 1 beyond noise (its 95% interval of ln(B/A) excludes "
            "0) in " +
            std::to_string(ladder.changeExcludesZero) + " of " + std::to_string(sessions.size()) + " (" + share +
            "), above 1 in " + std::to_string(ladder.changeWrongWay) + ".");
        for (const analysis::SlowdownControl& control : ladder.controls) {
            const analysis::SlowdownSession& session = control.session;
            std::string ties;
            for (std::size_t i = 0; i < control.ladder.ties.size() && i < thresholds.size(); ++i) {
                if (control.ladder.ties[i]) {
                    ties += (ties.empty() ? "" : ", ") + analysis::ladderLabel(thresholds[i]);
                }
            }
            controls.rows.push_back(
                {textCell(name), countCell(std::size_t(session.problem)), textCell(session.dsl),
                 countCell(std::size_t(session.replicate)), timingCell(session.a, 0, 3), timingCell(session.a, 1, 3),
                 timingCell(session.a, 2, 3), textCell(ladderRung(control.ladder.baseAttains, thresholds)),
                 timingCell(session.b, 0, 3), timingCell(session.b, 1, 3), timingCell(session.b, 2, 3),
                 textCell(ladderRung(control.ladder.skillAttains, thresholds)), timingCell(session.bOverA, 0, 4),
                 timingCell(session.bOverA, 1, 4), timingCell(session.bOverA, 2, 4),
                 textCell(control.changeExcludesZero ? "below 1"
                          : control.changeWrongWay   ? "above 1"
                                                     : "contains 1"),
                 textCell(control.wrongWay  ? "wrong way"
                          : control.crossed ? "yes"
                                            : "no"),
                 textCell(ties)});
        }
    }
    if (controls.rows.empty()) {
        return;
    }
    ladders.footnotes.insert(
        ladders.footnotes.begin(),
        {"Paired ladder (docs/metrics.md, \"Calibration ladder\"): per control, base = A (the solution) and skill = B "
         "(its copy slowed by the calibration's slowdown), both ranked on their speedups over eager from one "
         "re-timing; lift = B − A. S is a step function: a slowdown moves a control's S only when a threshold lies "
         "between its A and B speedups.",
         kLadderIntervalLine});
    controls.footnotes.push_back("A, B: speedups over eager from one re-timing; B/A = time(A) / time(B) on the same "
                                 "rounds (the speedup change, below 1 when B is slower beyond noise); rung: the "
                                 "highest threshold attained on the ladder (a tie keeps B at A's rung).");
    report.tables.push_back(std::move(ladders));
    report.tables.push_back(std::move(controls));
}

// The live calibration of each device that graded the data (DESIGN §5.5), as one table appended to the report, and
// its A/B ladder where it was stored. The devices are those of the live re-timings; without re-timings, every
// calibrated device. Nothing is added when the store holds no calibration at all, so reports of uncalibrated stores
// stay as they were.
Status appendCalibrations(const Store& store, const analysis::AnalysisSettings& settings, Report& report) {
    Result<CalibrationSummary> summary = calibrationSummary(store);
    if (!summary) {
        return summary.error();
    }
    if (!summary->anyCalibration) {
        return Ok{};
    }
    ReportTable table;
    table.id = "calibration";
    table.title = "Calibration of the devices that graded the data";
    table.columns = {
        "Device",           "Grader",           "Date",         "A/A pairs",       "A/B pairs", "Method", "δ",
        "A/A false helped", "A/A false harmed", "A/B detected", "Smallest safe δ", "Status"};
    for (const DeviceCalibration& entry : summary->devices) {
        if (!entry.chosen) {
            table.footnotes.push_back("no calibration of " + entry.device + ": run mkb calibrate");
            continue;
        }
        const CalibrationRecord& chosen = *entry.chosen;
        if (entry.stale) {
            table.footnotes.push_back("the calibration of " + entry.device + " was made with grader " +
                                      chosen.graderFingerprint.substr(0, 12) +
                                      ", not the data's: stale, run mkb calibrate again");
        }
        const std::string name =
            chosen.deviceName.empty() ? chosen.device : chosen.device + " (" + chosen.deviceName + ")";
        for (const CalibrationMethodResult& method : chosen.methods) {
            const auto share = [](int count, int total) {
                return total ? std::optional<double>(double(count) / total) : std::nullopt;
            };
            table.rows.push_back(
                {textCell(name), textCell(chosen.graderFingerprint.substr(0, 12)),
                 textCell(chosen.createdAt.substr(0, 10)), countCell(std::size_t(method.aaComparisons)),
                 countCell(std::size_t(method.abComparisons)), textCell(method.method), numberCell(method.delta, 3),
                 percentCell(share(method.aaHelped, method.aaComparisons)),
                 percentCell(share(method.aaHarmed, method.aaComparisons)),
                 percentCell(share(method.abDetected, method.abComparisons)), numberCell(method.smallestDelta, 3),
                 textCell(entry.stale ? "stale" : "current")});
        }
    }
    table.footnotes.insert(table.footnotes.begin(),
                           "A/A: a solution against its own copies (any outcome is false); A/B: against a copy "
                           "slowed by the calibration's slowdown (detected when judged harmed).");
    report.tables.push_back(std::move(table));
    appendCalibrationLadders(*summary, settings, report);
    return Ok{};
}
} // namespace

std::string ladderRuleLine(analysis::TimingRule rule, std::size_t resolved, std::size_t pairedCells,
                           std::size_t fellBack, const std::vector<std::size_t>& ties,
                           const std::vector<double>& thresholds) {
    if (rule == analysis::TimingRule::Unpaired) {
        return "Ladder: unpaired rule (MetaKernelBench's ladder, --timing unpaired): each arm ranked on its own "
               "grading's speedup, " +
               std::to_string(resolved) + " resolved cells.";
    }
    return "Ladder: paired rule (docs/metrics.md, \"Paired ladder\"): " + std::to_string(pairedCells) + " of " +
           std::to_string(resolved) + " resolved cells ranked on one re-timing of both arms, " +
           std::to_string(fellBack) + " fell back to their gradings' speedups for want of one; ties (a crossing of t " +
           "within noise, lifting nothing): " + perThreshold(ties, thresholds) + ".";
}

std::string timingLine(const TableTiming& timing) {
    const std::string counted = std::to_string(timing.resolved) + " resolved comparisons, " +
                                std::to_string(timing.withRetiming) + " with a paired re-timing";
    if (timing.rule == analysis::toString(analysis::TimingRule::Unpaired)) {
        return "Timing: unpaired rule (MetaKernelBench, --timing unpaired): " + counted +
               (timing.withRetiming ? " (not used)." : ".");
    }
    return "Timing: paired rule (docs/metrics.md, \"With paired re-timing\"): " + counted + "; " +
           std::to_string(timing.paired) + " judged by it (" + std::to_string(timing.withinNoise) + " within noise), " +
           std::to_string(timing.fellBack) + " fell back to the unpaired rule for want of one.";
}

std::vector<analysis::UnpairedControl> unpairedAaControls(const CalibrationRecord& calibration) {
    std::vector<analysis::UnpairedControl> controls;
    const nlohmann::json detail = parseJsonInputOrDiscarded(calibration.detailJson); // a store's text: bounded
    if (!detail.is_array()) {
        return controls;
    }
    for (const nlohmann::json& row : detail) {
        if (!row.is_object() || !row.contains("unpaired")) {
            continue;
        }
        const nlohmann::json& pair = row["unpaired"];
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number()) {
            continue;
        }
        const double first = pair[0].get<double>();
        const double second = pair[1].get<double>();
        controls.push_back({{first > 0, first}, {second > 0, second}});
    }
    return controls;
}

Result<CalibrationSummary> calibrationSummary(const Store& store) {
    Result<std::vector<CalibrationRecord>> calibrations = store.liveCalibrations();
    if (!calibrations) {
        return calibrations.error();
    }
    Result<std::vector<RetimingRecord>> retimings = store.liveRetimings();
    if (!retimings) {
        return retimings.error();
    }
    CalibrationSummary summary;
    summary.anyCalibration = !calibrations->empty();
    std::set<std::string> fingerprints; // the grader fingerprints the data was re-timed with
    std::vector<std::string> devices;
    const auto addDevice = [&devices](const std::string& device) {
        if (!device.empty() && std::find(devices.begin(), devices.end(), device) == devices.end()) {
            devices.push_back(device);
        }
    };
    for (const RetimingRecord& retiming : *retimings) {
        addDevice(retiming.result.device);
        if (!retiming.result.graderFingerprint.empty()) {
            fingerprints.insert(retiming.result.graderFingerprint);
        }
    }
    if (devices.empty()) {
        for (const CalibrationRecord& calibration : *calibrations) {
            addDevice(calibration.device);
        }
    }
    for (const std::string& device : devices) {
        const CalibrationRecord* chosen = nullptr; // newest first: the first match, preferring the data's grader
        for (const CalibrationRecord& calibration : *calibrations) {
            if (calibration.device != device && calibration.deviceName != device) {
                continue;
            }
            if (!chosen ||
                (fingerprints.count(calibration.graderFingerprint) && !fingerprints.count(chosen->graderFingerprint))) {
                chosen = &calibration;
            }
        }
        DeviceCalibration entry;
        entry.device = device;
        if (chosen) {
            entry.chosen = *chosen;
            entry.stale = !fingerprints.empty() && !fingerprints.count(chosen->graderFingerprint);
        }
        summary.devices.push_back(std::move(entry));
    }
    return summary;
}

ReportCell textCell(std::string text) {
    return ReportCell{CellKind::Text, std::move(text), 0, 0};
}

ReportCell countCell(std::size_t count) {
    return ReportCell{CellKind::Number, {}, static_cast<double>(count), 0};
}

ReportCell numberCell(std::optional<double> value, int precision) {
    if (!value || !std::isfinite(*value)) {
        return nullCell();
    }
    return ReportCell{CellKind::Number, {}, *value, precision};
}

ReportCell percentCell(std::optional<double> share, int precision) {
    if (!share || !std::isfinite(*share)) {
        return nullCell();
    }
    return ReportCell{CellKind::Percent, {}, *share, precision};
}

ReportCell nullCell() {
    return ReportCell{};
}

const char* toString(ReportSplit split) {
    switch (split) {
    case ReportSplit::Overall:
        return "overall";
    case ReportSplit::Direction:
        return "direction";
    case ReportSplit::Family:
        return "family";
    case ReportSplit::WithSkill:
        return "with_skill";
    case ReportSplit::SourceVerdict:
        return "source_verdict";
    case ReportSplit::Model:
        return "model";
    case ReportSplit::Category:
        return "category";
    case ReportSplit::Boundary:
        return "boundary";
    }
    return "overall";
}

const char* toString(MetricSet set) {
    switch (set) {
    case MetricSet::Ladder:
        return "ladder";
    case MetricSet::Coverage:
        return "coverage";
    case MetricSet::Transfer:
        return "transfer";
    case MetricSet::Standing:
        return "standing";
    case MetricSet::Reverse:
        return "reverse";
    case MetricSet::Usage:
        return "usage";
    case MetricSet::KernelBenchX:
        return "kbx";
    case MetricSet::Refinement:
        return "refinement";
    case MetricSet::Portability:
        return "portability";
    case MetricSet::Directions:
        return "directions";
    case MetricSet::KbxPaper:
        return "kbx-paper";
    case MetricSet::KbxAgreement:
        return "kbx-agreement";
    case MetricSet::KbxEvents:
        return "kbx-events";
    case MetricSet::KbxPortability:
        return "kbx-portability";
    }
    return "ladder";
}

Result<ReportSplit> parseReportSplit(const std::string& text) {
    for (ReportSplit split :
         {ReportSplit::Overall, ReportSplit::Direction, ReportSplit::Family, ReportSplit::WithSkill,
          ReportSplit::SourceVerdict, ReportSplit::Model, ReportSplit::Category, ReportSplit::Boundary}) {
        if (text == toString(split)) {
            return split;
        }
    }
    return makeError(
        "unknown split '" + text +
        "' in --split; use one of overall, direction, family, with_skill, source_verdict, model, category, boundary");
}

Result<analysis::TimingRule> parseTimingRule(const std::string& text) {
    for (analysis::TimingRule rule : {analysis::TimingRule::Paired, analysis::TimingRule::Unpaired}) {
        if (text == analysis::toString(rule)) {
            return rule;
        }
    }
    return makeError("unknown timing rule '" + text +
                     "' in --timing; use paired (re-timed cells judged on their paired ratio, the default) or "
                     "unpaired (MetaKernelBench's rule on the separate gradings)");
}

Result<std::vector<MetricSet>> parseMetricSets(const std::string& text) {
    std::set<MetricSet> chosen;
    for (const std::string& raw : splitString(text, ',')) {
        const std::string name(trimmed(raw));
        if (name == "all") {
            chosen.insert(std::begin(kAllMetricSets), std::end(kAllMetricSets));
            continue;
        }
        bool known = false;
        for (MetricSet set : kKnownMetricSets) {
            if (name == toString(set)) {
                chosen.insert(set);
                known = true;
            }
        }
        if (!known) {
            return makeError(
                "unknown metric set '" + name +
                "' in --metrics; use a comma-separated list of ladder, transfer, usage, kbx, standing, "
                "reverse, refinement, portability, coverage, directions, kbx-paper, kbx-agreement, kbx-events, "
                "kbx-portability or all");
        }
    }
    if (chosen.empty()) {
        return makeError("--metrics names no metric set; give e.g. --metrics ladder,transfer or --metrics all");
    }
    std::vector<MetricSet> ordered;
    for (MetricSet set : kKnownMetricSets) {
        if (chosen.count(set)) {
            ordered.push_back(set);
        }
    }
    return ordered;
}

Result<std::vector<double>> parseThresholds(const std::string& text) {
    std::vector<double> thresholds;
    for (const std::string& raw : splitString(text, ',')) {
        const std::string item(trimmed(raw));
        char* end = nullptr;
        const double value = std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(value) || value < 0) {
            return makeError("bad threshold '" + item +
                             "' in --thresholds; give non-negative numbers like 0,0.5,1,2,4");
        }
        if (!thresholds.empty() && value <= thresholds.back()) {
            return makeError("--thresholds must ascend without repeats (got " + text + ")");
        }
        thresholds.push_back(value);
    }
    if (thresholds.empty()) {
        return makeError("--thresholds is empty; give e.g. 0,0.5,1,2,4");
    }
    return thresholds;
}

bool needsSubmissions(const ReportOptions& options) {
    return std::find(options.metrics.begin(), options.metrics.end(), MetricSet::Refinement) != options.metrics.end() ||
           std::find(options.metrics.begin(), options.metrics.end(), MetricSet::Portability) != options.metrics.end() ||
           std::find(options.metrics.begin(), options.metrics.end(), MetricSet::KbxPaper) != options.metrics.end();
}

MetricColumns metricColumns(const ReportOptions& options) {
    auto wants = [&](MetricSet set) {
        return std::find(options.metrics.begin(), options.metrics.end(), set) != options.metrics.end();
    };
    MetricColumns columns;
    columns.usage = wants(MetricSet::Usage);
    columns.verdictDetail =
        wants(MetricSet::KernelBenchX) || wants(MetricSet::Portability) || wants(MetricSet::KbxPaper);
    // No report table reads Attempt::wroteSkill: coverage and the with_skill split count skill arms not skipped.
    columns.skillWritten = false;
    return columns;
}

std::vector<TrialRecord> selectTrials(std::vector<TrialRecord> trials, const ReportOptions& options) {
    const TrialSelector selector(options);
    std::erase_if(trials, [&](const TrialRecord& trial) { return !selector.keeps(trial); });
    return trials;
}

Report buildReport(const std::vector<TrialRecord>& trials, const std::vector<SubmissionRecord>& submissions,
                   const ReportOptions& options) {
    Selection selection;
    selection.trials = trials.size();
    // One set of attempts: the comparisons' arms point into it rather than being built a second time.
    selection.attempts =
        std::make_shared<const std::vector<Attempt>>(analysis::attemptsFromTrials(trials, submissions));
    selection.comparisons = analysis::buildComparisons(trials, selection.attempts);
    for (const TrialRecord& trial : trials) {
        if (!analysis::fillsArm(trial)) {
            selection.armless.push_back(trial);
        }
    }
    return reportOf(selection, options);
}

Result<Report> buildReportFromStore(Store& store, const ReportOptions& options) {
    // The trials are read row by row and only what the metrics read is kept.
    const TrialSelector selector(options);
    // Read when the first trial asks: a store without trials (or one being filled with problems) costs nothing.
    std::optional<Result<std::map<std::pair<int, std::string>, std::string>>> categories;
    io::AttemptLoadOptions load;
    load.filter.model = options.model;
    load.columns = metricColumns(options);
    load.withSubmissions = needsSubmissions(options);
    load.keep = [&selector](const TrialRecord& trial) { return selector.keeps(trial); };
    load.category = [&categories, &store](const TrialRecord& trial) {
        if (!categories) {
            categories = io::problemCategories(store);
        }
        if (!*categories) {
            return std::string();
        }
        auto found = (*categories)->find({trial.problemNumber, trial.problemSlug});
        return found == (*categories)->end() ? std::string() : found->second;
    };
    Result<io::LoadedAttempts> loaded = io::loadAttempts(store, load);
    if (!loaded) {
        return loaded.error();
    }
    if (categories && !*categories) {
        return categories->error();
    }
    Selection selection;
    selection.trials = loaded->trials;
    selection.attempts = std::move(loaded->attempts);
    selection.armless = std::move(loaded->armless);
    selection.comparisons = std::move(loaded->comparisons);
    Report report = reportOf(selection, options);
    // The store-level sets, read after the trials: regradings and transition re-timings, in --metrics order.
    for (MetricSet set : options.metrics) {
        if (set != MetricSet::KbxPaper && set != MetricSet::KbxAgreement && set != MetricSet::KbxEvents &&
            set != MetricSet::KbxPortability) {
            continue;
        }
        if (set == MetricSet::KbxPortability && !options.golden) {
            return makeError("--metrics kbx-portability needs --golden DIR (KernelBench-X's metrics/golden_results, "
                             "with this GPU's folder from bench/kbx_golden_timing.py)");
        }
        auto tables = set == MetricSet::KbxPaper       ? kbxPaperRegradedTables(store, options, load.category)
                      : set == MetricSet::KbxAgreement ? kbxAgreementTables(store, options, load.category)
                      : set == MetricSet::KbxEvents    ? kbxEventTables(store, options, load.category)
                                                       : kbxPortabilityTables(*options.golden);
        if (!tables) {
            return tables.error();
        }
        if (categories && !*categories) {
            return categories->error();
        }
        for (ReportTable& table : *tables) {
            report.tables.push_back(std::move(table));
        }
    }
    if (Status calibrated = appendCalibrations(store, options.settings, report); !calibrated) {
        return calibrated.error();
    }
    return report;
}

} // namespace mkb::report
