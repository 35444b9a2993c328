// Builds report tables: trial selection, grouping by the chosen split, and one table per metric set, every number
// taken from a core/analysis/ function.
// Longer than 600 lines because every table of the report's own metric sets is built from the same grouped
// selection and shares its grouping helpers; the calibration tables, the ladder rows and the report's vocabulary
// (cells, names, parsers) are files of their own.
#include "core/report/report_model.h"

#include "core/analysis/attempt.h"
#include "core/analysis/attempt_set.h"
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
#include "core/report/report_calibration.h"
#include "core/report/report_directions.h"
#include "core/report/report_kbx_agreement.h"
#include "core/report/report_kbx_events.h"
#include "core/report/report_kbx_paper.h"
#include "core/report/report_kbx_portability.h"
#include "core/report/report_ladder_rows.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

namespace mkb::report {
namespace {

using analysis::Attempt;
using analysis::Comparison;

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
