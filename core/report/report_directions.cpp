// The direction matrix and its long form as report tables, every number taken from analysis::directionMatrix.
#include "core/report/report_directions.h"

#include "core/analysis/ladder.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace mkb::report {
namespace {

using analysis::DirectionCell;
using analysis::DirectionCellState;

/// "+5.0", "-2.0"; "0.0" for what rounds to zero (no sign where there is no direction).
std::string signedScore(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f", value);
    const std::string rounded = text;
    return rounded == "+0.0" || rounded == "-0.0" ? "0.0" : rounded;
}

void addTiming(TableTiming& timing, const analysis::OutcomeCounts& counts) {
    timing.resolved += counts.total;
    timing.withRetiming += counts.withRetiming;
    timing.paired += counts.paired;
    timing.fellBack += counts.fellBack;
    timing.withinNoise += counts.withinNoise;
}

/// The ladder's rule counts summed over the pairs of a matrix, for ladderRuleLine.
struct LadderTotals {
    std::size_t resolved = 0;
    std::size_t pairedCells = 0;
    std::size_t fellBack = 0;
    std::vector<std::size_t> ties;
};

void addLadder(LadderTotals& totals, const analysis::Contrast& contrast) {
    totals.resolved += contrast.resolved;
    totals.pairedCells += contrast.pairedCells;
    totals.fellBack += contrast.fellBack;
    totals.ties.resize(std::max(totals.ties.size(), contrast.ties.size()), 0);
    for (std::size_t i = 0; i < contrast.ties.size(); ++i) {
        totals.ties[i] += contrast.ties[i];
    }
}

ReportCell boundOf(const std::optional<analysis::Interval>& interval, bool high, bool percent) {
    if (!interval) {
        return nullCell();
    }
    const double bound = high ? interval->high : interval->low;
    return percent ? percentCell(bound) : numberCell(bound, 1);
}

ReportCell scoreOf(const std::optional<analysis::LadderRates>& rates) {
    return rates ? numberCell(rates->score, 1) : nullCell();
}

std::vector<std::string> unionOfDsls(const std::vector<DirectionGroup>& groups) {
    std::set<std::string> dsls;
    for (const DirectionGroup& group : groups) {
        for (const analysis::Comparison& comparison : *group.comparisons) {
            dsls.insert(comparison.sourceDsl);
            dsls.insert(comparison.targetDsl);
        }
    }
    return {dsls.begin(), dsls.end()}; // id order, as analysis::directionMatrixDsls gives
}

} // namespace

std::string directionCellText(const DirectionCell& cell) {
    switch (cell.state) {
    case DirectionCellState::Diagonal:
        return "—";
    case DirectionCellState::NoData:
        return "no data";
    case DirectionCellState::Unresolved:
        return "unresolved (" + std::to_string(cell.comparisons) +
               (cell.comparisons == 1 ? " cell-replicate)" : " cell-replicates)");
    case DirectionCellState::Measured:
        break;
    }
    std::string text = cell.lift() ? signedScore(*cell.lift()) : "—";
    if (const std::optional<analysis::Interval> ci = cell.liftCi()) {
        text += " [" + signedScore(ci->low) + ", " + signedScore(ci->high) + "]";
        if (cell.liftWithinNoise()) {
            text += " within noise";
        }
    } else {
        text += " (no CI, " + std::to_string(cell.resolved()) + (cell.resolved() == 1 ? " cell)" : " cells)");
    }
    const analysis::OutcomeCounts& outcomes = cell.transfer.outcomes;
    return text + "; helped " + std::to_string(outcomes.helped) + ", harmed " + std::to_string(outcomes.harmed) +
           " of " + std::to_string(outcomes.total);
}

std::vector<ReportTable> directionTables(const std::vector<DirectionGroup>& groups, const std::string& groupColumn,
                                         const std::string& scope, const ReportOptions& options) {
    const std::vector<std::string> dsls = unionOfDsls(groups);
    const bool grouped = !groupColumn.empty();
    ReportTable matrixTable{"direction-matrix",
                            "Direction matrix: S lift [95% CI] and helped / harmed counts, source (rows) × target "
                            "(columns) (" +
                                scope + ")",
                            {},
                            {},
                            {},
                            {}};
    if (grouped) {
        matrixTable.columns.push_back(groupColumn);
    }
    matrixTable.columns.push_back("source \\ target");
    matrixTable.columns.insert(matrixTable.columns.end(), dsls.begin(), dsls.end());

    ReportTable longTable{
        "directions", "Transfer by ordered DSL pair, the matrix's numbers (" + scope + ")", {}, {}, {}, {}};
    if (grouped) {
        longTable.columns.push_back(groupColumn);
    }
    longTable.columns.insert(longTable.columns.end(), {"source",
                                                       "target",
                                                       "cell-replicates",
                                                       "resolved",
                                                       "helped",
                                                       "neutral",
                                                       "harmed",
                                                       "T",
                                                       "neutral share",
                                                       "H",
                                                       "S base",
                                                       "S skill",
                                                       "S lift",
                                                       "lift 95% low",
                                                       "lift 95% high",
                                                       "within noise",
                                                       "ΔGM",
                                                       "ΔGM CI low",
                                                       "ΔGM CI high",
                                                       "state"});

    TableTiming timing;
    timing.rule = analysis::toString(options.settings.timing);
    LadderTotals ladder;
    ladder.ties.assign(options.settings.thresholds.size(), 0);
    for (const DirectionGroup& group : groups) {
        const analysis::DirectionMatrix matrix = analysis::directionMatrix(*group.comparisons, options.settings, dsls);
        for (std::size_t source = 0; source < matrix.size(); ++source) {
            std::vector<ReportCell> row;
            if (grouped) {
                row.push_back(textCell(group.key));
            }
            row.push_back(textCell(matrix.dsls[source]));
            for (std::size_t target = 0; target < matrix.size(); ++target) {
                row.push_back(textCell(directionCellText(matrix.at(source, target))));
            }
            matrixTable.rows.push_back(std::move(row));
        }
        for (const DirectionCell* cell : matrix.pairs()) {
            addTiming(timing, cell->transfer.outcomes);
            addLadder(ladder, cell->ladder);
            const analysis::OutcomeCounts& outcomes = cell->transfer.outcomes;
            const bool measured = cell->state == DirectionCellState::Measured;
            std::vector<ReportCell> row;
            if (grouped) {
                row.push_back(textCell(group.key));
            }
            row.insert(row.end(), {textCell(cell->sourceDsl), textCell(cell->targetDsl), countCell(cell->comparisons),
                                   countCell(cell->resolved())});
            for (const std::size_t count : {outcomes.helped, outcomes.neutral, outcomes.harmed}) {
                row.push_back(measured ? countCell(count) : nullCell());
            }
            row.insert(row.end(), {percentCell(outcomes.helpedShare), percentCell(outcomes.neutralShare),
                                   percentCell(outcomes.harmedShare), scoreOf(cell->ladder.base),
                                   scoreOf(cell->ladder.skill), numberCell(cell->lift(), 1),
                                   boundOf(cell->liftCi(), false, false), boundOf(cell->liftCi(), true, false),
                                   cell->liftCi() ? textCell(cell->liftWithinNoise() ? "yes" : "no") : nullCell(),
                                   percentCell(cell->transfer.deltaGeometricMean),
                                   boundOf(cell->transfer.deltaGeometricMeanCi, false, true),
                                   boundOf(cell->transfer.deltaGeometricMeanCi, true, true),
                                   textCell(analysis::toString(cell->state))});
            longTable.rows.push_back(std::move(row));
        }
    }
    matrixTable.footnotes.push_back(kDirectionMatrixLine);
    matrixTable.footnotes.push_back(timingLine(timing));
    matrixTable.footnotes.push_back(ladderRuleLine(options.settings.timing, ladder.resolved, ladder.pairedCells,
                                                   ladder.fellBack, ladder.ties, options.settings.thresholds));
    matrixTable.footnotes.push_back(kLadderIntervalLine);
    matrixTable.timing = timing;
    longTable.footnotes.push_back(timingLine(timing));
    longTable.footnotes.push_back("ΔGM CI: 95% percentile bootstrap over the pair's resolved comparisons (" +
                                  std::to_string(analysis::kBootstrapResamples) +
                                  " resamples, seeded from the ratios); none with fewer than 2. State: measured, "
                                  "unresolved (no resolved comparison yet) or no data (no comparison of the pair).");
    longTable.timing = std::move(timing);
    return {std::move(matrixTable), std::move(longTable)};
}

} // namespace mkb::report
