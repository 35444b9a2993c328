// The ladder's rows and per-threshold counts (report_ladder_rows.h).
#include "core/report/report_ladder_rows.h"

#include <tuple>

namespace mkb::report {

ReportCell intervalBound(const std::optional<analysis::Interval>& interval, bool high, bool percent) {
    if (!interval) {
        return nullCell();
    }
    const double bound = high ? interval->high : interval->low;
    return percent ? percentCell(bound) : numberCell(bound, 1);
}

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

} // namespace mkb::report
