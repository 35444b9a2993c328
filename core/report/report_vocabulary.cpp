// The report's cells, the names of its splits and metric sets, and the parsers of its options' values
// (report_model.h).
#include "core/report/report_model.h"

#include "core/analysis/ladder.h"
#include "core/util/text.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace mkb::report {
namespace {

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

} // namespace

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

} // namespace mkb::report
