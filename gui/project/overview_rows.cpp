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
        const analysis::GroupMetrics metrics = analysis::groupMetrics(group, settings);
        const analysis::TransferSummary summary =
            analysis::transferSummary(group, settings,
                                      intervals == OverviewIntervals::Computed ? analysis::SummaryInterval::Computed
                                                                               : analysis::SummaryInterval::Deferred);
        row.comparisons = metrics.comparisons;
        row.resolved = metrics.all.resolved;
        row.transferRate = summary.outcomes.helpedShare;
        row.harmRate = summary.outcomes.harmedShare;
        row.deltaGeometricMean = summary.deltaGeometricMean;
        row.deltaGeometricMeanCi = summary.deltaGeometricMeanCi;
        row.deltaGeometricMeanCiPending = intervals == OverviewIntervals::Deferred;
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

std::vector<std::optional<analysis::Interval>> overviewIntervals(const std::vector<analysis::Comparison>& comparisons,
                                                                 const analysis::AnalysisSettings& settings,
                                                                 const std::atomic<bool>* cancel) {
    std::vector<std::optional<analysis::Interval>> intervals;
    for (const auto& [key, group] : groupsOf(comparisons)) {
        if (cancel != nullptr && cancel->load()) {
            break;
        }
        intervals.push_back(analysis::deltaGeometricMeanCi(group, settings));
    }
    return intervals;
}

void fillIntervals(std::vector<OverviewRow>& rows, const std::vector<std::optional<analysis::Interval>>& intervals) {
    for (std::size_t i = 0; i < rows.size() && i < intervals.size(); ++i) {
        rows[i].deltaGeometricMeanCi = intervals[i];
        rows[i].deltaGeometricMeanCiPending = false;
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

FamilyBars familyBars(const std::vector<analysis::Comparison>& comparisons,
                      const analysis::AnalysisSettings& settings) {
    FamilyBars bars;
    std::map<std::string_view, analysis::ComparisonView> byFamily;
    for (const analysis::Comparison& comparison : comparisons) {
        byFamily[comparison.family].push_back(&comparison);
    }
    for (const auto& [family, group] : byFamily) {
        bars.families.emplace_back(family);
        const analysis::Contrast contrast = analysis::groupMetrics(group, settings).all;
        bars.lift.push_back(scoreOf(contrast.lift));
        bars.liftCi.push_back(contrast.intervals.liftScore);
        bars.harmRate.push_back(analysis::outcomeCounts(group, settings).harmedShare);
    }
    return bars;
}

} // namespace mkb::gui
