// The overview's rows and family bars: comparisons grouped by model and direction (or family), every number asked of
// core/analysis; and the overview's lines on the timing rule, the ladder rule and the calibration.
#include "gui/project/overview_rows.h"

#include "core/analysis/ladder.h"
#include "core/analysis/transfer.h"

#include <cstdio>
#include <map>
#include <string_view>

namespace mkb::gui {
namespace {

/// A share in [0, 1] as a percentage with at most one decimal ("0%", "87.5%").
std::string percentText(double share) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", share * 100);
    std::string result = text;
    if (result.size() > 2 && result.compare(result.size() - 2, 2, ".0") == 0) {
        result.resize(result.size() - 2);
    }
    return result + "%";
}

std::optional<double> firstRate(const std::optional<analysis::LadderRates>& rates) {
    if (!rates || rates->rates.empty()) {
        return std::nullopt;
    }
    return rates->rates.front();
}

std::optional<double> scoreOf(const std::optional<analysis::LadderRates>& rates) {
    return rates ? std::optional<double>(rates->score) : std::nullopt;
}

/// The comparisons by (model, direction), sorted so: views into comparisons (keys and members alike), nothing is
/// copied per comparison.
using Groups = std::map<std::pair<std::string_view, std::string_view>, analysis::ComparisonView>;

Groups groupsOf(const std::vector<analysis::Comparison>& comparisons) {
    Groups groups;
    for (const analysis::Comparison& comparison : comparisons) {
        groups[{comparison.model, comparison.direction}].push_back(&comparison);
    }
    return groups;
}

/// The comparisons by family, sorted so (the family bars' order).
std::map<std::string_view, analysis::ComparisonView> familiesOf(const std::vector<analysis::Comparison>& comparisons) {
    std::map<std::string_view, analysis::ComparisonView> byFamily;
    for (const analysis::Comparison& comparison : comparisons) {
        byFamily[comparison.family].push_back(&comparison);
    }
    return byFamily;
}

analysis::SummaryInterval summaryIntervalOf(OverviewIntervals intervals) {
    return intervals == OverviewIntervals::Computed ? analysis::SummaryInterval::Computed
                                                    : analysis::SummaryInterval::Deferred;
}

} // namespace

std::vector<OverviewRow> overviewRows(const std::vector<analysis::Comparison>& comparisons,
                                      const analysis::AnalysisSettings& settings, OverviewIntervals intervals) {
    const Groups groups = groupsOf(comparisons);
    std::vector<OverviewRow> rows;
    rows.reserve(groups.size());
    for (const auto& [key, group] : groups) {
        OverviewRow row;
        row.model = std::string(key.first);
        row.direction = std::string(key.second);
        const analysis::GroupMetrics metrics = analysis::groupMetrics(group, settings, summaryIntervalOf(intervals));
        const analysis::TransferSummary summary =
            analysis::transferSummary(group, settings, summaryIntervalOf(intervals));
        row.comparisons = metrics.comparisons;
        row.resolved = metrics.all.resolved;
        row.transferRate = summary.outcomes.helpedShare;
        row.harmRate = summary.outcomes.harmedShare;
        row.deltaGeometricMean = summary.deltaGeometricMean;
        row.deltaGeometricMeanCi = summary.deltaGeometricMeanCi;
        row.intervalsPending = intervals == OverviewIntervals::Deferred;
        row.judgedPaired = summary.outcomes.paired;
        row.fellBack = summary.outcomes.fellBack;
        row.withinNoise = summary.outcomes.withinNoise;
        row.withRetiming = summary.outcomes.withRetiming;
        row.baseScore = scoreOf(metrics.all.base);
        row.skillScore = scoreOf(metrics.all.skill);
        row.lift = scoreOf(metrics.all.lift);
        row.baseScoreCi = metrics.all.intervals.baseScore;
        row.skillScoreCi = metrics.all.intervals.skillScore;
        row.liftCi = metrics.all.intervals.liftScore;
        row.ladderPaired = metrics.all.pairedCells;
        row.ladderFellBack = metrics.all.fellBack;
        row.ladderTies = metrics.all.ties;
        row.basePassRate = firstRate(metrics.all.base);
        row.skillPassRate = firstRate(metrics.all.skill);
        row.sourcePassed = metrics.coverage.sourcePassed;
        row.skillCoverage = metrics.coverage.sourceWroteSkill;
        rows.push_back(std::move(row));
    }
    return rows;
}

analysis::DirectionMatrix overviewMatrix(const std::vector<analysis::Comparison>& comparisons,
                                         const analysis::AnalysisSettings& settings, OverviewIntervals intervals) {
    const analysis::ComparisonView all = analysis::viewOf(comparisons);
    // Deferred either way: ΔGM's intervals are not shown, and the lift's are computed as overviewIntervals does.
    analysis::DirectionMatrix matrix =
        analysis::directionMatrix(all, settings, {}, analysis::SummaryInterval::Deferred);
    if (intervals == OverviewIntervals::Computed) {
        const std::vector<analysis::LadderIntervals> cells = analysis::directionLadderIntervals(all, settings);
        for (std::size_t i = 0; i < matrix.cells.size() && i < cells.size(); ++i) {
            matrix.cells[i].ladder.intervals = cells[i];
        }
    }
    return matrix;
}

OverviewIntervalSet overviewIntervals(const std::vector<analysis::Comparison>& comparisons,
                                      const analysis::AnalysisSettings& settings, const std::atomic<bool>* cancel) {
    const auto cancelled = [cancel] { return cancel != nullptr && cancel->load(); };
    OverviewIntervalSet intervals;
    for (const auto& [key, group] : groupsOf(comparisons)) {
        if (cancelled()) {
            return intervals;
        }
        intervals.rows.push_back(
            {analysis::deltaGeometricMeanCi(group, settings), analysis::ladderIntervals(group, settings)});
    }
    for (const auto& [family, group] : familiesOf(comparisons)) {
        if (cancelled()) {
            return intervals;
        }
        intervals.familyLift.push_back(analysis::ladderIntervals(group, settings).liftScore);
    }
    intervals.matrixCells = analysis::directionLadderIntervals(analysis::viewOf(comparisons), settings, {}, cancel);
    return intervals;
}

void fillIntervals(const OverviewIntervalSet& intervals, std::vector<OverviewRow>& rows, FamilyBars& bars,
                   analysis::DirectionMatrix& matrix) {
    for (std::size_t i = 0; i < rows.size() && i < intervals.rows.size(); ++i) {
        OverviewRow& row = rows[i];
        row.deltaGeometricMeanCi = intervals.rows[i].deltaGeometricMean;
        row.baseScoreCi = intervals.rows[i].ladder.baseScore;
        row.skillScoreCi = intervals.rows[i].ladder.skillScore;
        row.liftCi = intervals.rows[i].ladder.liftScore;
        row.intervalsPending = false;
    }
    if (intervals.familyLift.size() == bars.families.size()) {
        bars.liftCi = intervals.familyLift;
        bars.intervalsPending = false;
    }
    for (std::size_t i = 0; i < matrix.cells.size() && i < intervals.matrixCells.size(); ++i) {
        matrix.cells[i].ladder.intervals = intervals.matrixCells[i];
    }
}

std::string timingRuleLine(const std::vector<OverviewRow>& rows, const analysis::AnalysisSettings& settings) {
    report::TableTiming timing;
    timing.rule = analysis::toString(settings.timing);
    for (const OverviewRow& row : rows) {
        timing.resolved += row.resolved;
        timing.paired += row.judgedPaired;
        timing.fellBack += row.fellBack;
        timing.withinNoise += row.withinNoise;
        timing.withRetiming += row.withRetiming;
    }
    return report::timingLine(timing);
}

std::string ladderRuleLine(const std::vector<OverviewRow>& rows, const analysis::AnalysisSettings& settings) {
    std::size_t resolved = 0;
    std::size_t paired = 0;
    std::size_t fellBack = 0;
    std::vector<std::size_t> ties(settings.thresholds.size(), 0);
    for (const OverviewRow& row : rows) {
        resolved += row.resolved;
        paired += row.ladderPaired;
        fellBack += row.ladderFellBack;
        for (std::size_t i = 0; i < ties.size() && i < row.ladderTies.size(); ++i) {
            ties[i] += row.ladderTies[i];
        }
    }
    return report::ladderRuleLine(settings.timing, resolved, paired, fellBack, ties, settings.thresholds);
}

std::string calibrationLine(const report::CalibrationSummary& summary) {
    std::string line;
    const auto countOf = [](int count, int total) {
        return total ? std::to_string(count) + " of " + std::to_string(total) + " (" +
                           percentText(double(count) / total) + ")"
                     : std::string("— of 0");
    };
    for (const report::DeviceCalibration& entry : summary.devices) {
        line += line.empty() ? "" : " | ";
        if (!entry.chosen) {
            line += "no calibration of " + entry.device + ": run mkb calibrate";
            continue;
        }
        const CalibrationRecord& chosen = *entry.chosen;
        line += "calibration of " + chosen.device + (chosen.deviceName.empty() ? "" : " (" + chosen.deviceName + ")") +
                " on " + chosen.createdAt.substr(0, 10);
        line += entry.stale ? ", stale (grader " + chosen.graderFingerprint.substr(0, 12) +
                                  ", not the data's: run mkb calibrate again):"
                            : ":";
        for (std::size_t i = 0; i < chosen.methods.size(); ++i) {
            const CalibrationMethodResult& method = chosen.methods[i];
            line += (i ? "; " : " ") + method.method + " A/A false " +
                    countOf(method.aaHelped + method.aaHarmed, method.aaComparisons) + ", A/B detected " +
                    countOf(method.abDetected, method.abComparisons) + ", smallest safe δ " +
                    (method.smallestDelta ? percentText(*method.smallestDelta) : "none found");
        }
    }
    return line;
}

FamilyBars familyBars(const std::vector<analysis::Comparison>& comparisons, const analysis::AnalysisSettings& settings,
                      OverviewIntervals intervals) {
    FamilyBars bars;
    bars.intervalsPending = intervals == OverviewIntervals::Deferred;
    for (const auto& [family, group] : familiesOf(comparisons)) {
        bars.families.emplace_back(family);
        const analysis::Contrast contrast = analysis::groupMetrics(group, settings, summaryIntervalOf(intervals)).all;
        bars.lift.push_back(scoreOf(contrast.lift));
        bars.liftCi.push_back(contrast.intervals.liftScore);
        bars.harmRate.push_back(analysis::outcomeCounts(group, settings).harmedShare);
    }
    return bars;
}

} // namespace mkb::gui
