// KernelBench-X's performance events classified by their paired after/before ratio, and counted per kind and category.
#include "core/analysis/kbx_events.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace mkb::analysis {
namespace {

constexpr const char* kSpeedupIncrease = "speedup_increase";
constexpr const char* kRegressionPrefix = "regression_";

std::string trimmedWord(const std::string& text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

/// Speedup increase first, then the regressions by name.
bool kindBefore(const std::string& a, const std::string& b) {
    const bool aIncrease = a == kSpeedupIncrease;
    const bool bIncrease = b == kSpeedupIncrease;
    return aIncrease != bIncrease ? aIncrease : a < b;
}

EventShare shareOf(const std::vector<std::vector<double>>& indicators, std::size_t statistic,
                   const std::vector<std::optional<Interval>>& intervals) {
    EventShare share;
    if (indicators.empty()) {
        return share;
    }
    double sum = 0;
    for (const std::vector<double>& item : indicators) {
        sum += item[statistic];
    }
    share.share = sum / static_cast<double>(indicators.size());
    share.interval = intervals[statistic];
    return share;
}

/// Counts, shares and geometric means of one group's rows.
EventGroup groupOf(const std::string& kind, const std::string& category, const std::vector<const EventRow*>& rows) {
    EventGroup group;
    group.kind = kind;
    group.category = category;
    group.events = rows.size();
    std::vector<std::vector<double>> indicators;
    std::vector<double> claimed;
    std::vector<double> paired;
    std::map<std::string, std::size_t> reasons;
    bool everyClaimKnown = true;
    for (const EventRow* row : rows) {
        switch (row->standing) {
        case EventStanding::Held:
            ++group.held;
            break;
        case EventStanding::WithinNoise:
            ++group.withinNoise;
            break;
        case EventStanding::Reversed:
            ++group.reversed;
            break;
        case EventStanding::NotTimed:
            ++group.notTimed;
            ++reasons[row->event.notTimed.empty() ? std::string("not re-timed") : row->event.notTimed];
            continue;
        }
        indicators.push_back({row->standing == EventStanding::Held ? 1.0 : 0.0,
                              row->standing == EventStanding::WithinNoise ? 1.0 : 0.0,
                              row->standing == EventStanding::Reversed ? 1.0 : 0.0});
        if (!row->event.paired) {
            continue; // judged without a ratio (regression_exe on our verdict): in the shares, not in the means
        }
        paired.push_back(row->event.paired->ratio);
        if (row->event.claimedRatio) {
            claimed.push_back(*row->event.claimedRatio);
        } else {
            everyClaimKnown = false;
        }
    }
    const std::vector<std::optional<Interval>> intervals = meanBootstrapCis(indicators, 3);
    group.heldShare = shareOf(indicators, 0, intervals);
    group.noiseShare = shareOf(indicators, 1, intervals);
    group.reversedShare = shareOf(indicators, 2, intervals);
    group.pairedGeometricMean = geometricMean(paired);
    // Over the same events as the paired mean, or not at all: two means over different events compare nothing.
    group.claimedGeometricMean = everyClaimKnown ? geometricMean(claimed) : std::nullopt;
    group.notTimedReasons.assign(reasons.begin(), reasons.end());
    std::stable_sort(group.notTimedReasons.begin(), group.notTimedReasons.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return group;
}

} // namespace

int claimedDirection(const std::string& kind) {
    if (kind == kSpeedupIncrease) {
        return 1;
    }
    return kind.rfind(kRegressionPrefix, 0) == 0 && kind.size() > std::string(kRegressionPrefix).size() ? -1 : 0;
}

std::vector<std::string> performanceKinds(const std::string& kinds) {
    std::vector<std::string> found;
    std::istringstream parts(kinds);
    for (std::string part; std::getline(parts, part, ',');) {
        std::string kind = trimmedWord(part);
        if (claimedDirection(kind) != 0 && std::find(found.begin(), found.end(), kind) == found.end()) {
            found.push_back(std::move(kind));
        }
    }
    return found;
}

const char* toString(EventStanding standing) {
    switch (standing) {
    case EventStanding::Held:
        return "held";
    case EventStanding::WithinNoise:
        return "within noise";
    case EventStanding::Reversed:
        return "reversed";
    case EventStanding::NotTimed:
        return "not timed";
    }
    return "?";
}

EventStanding eventStanding(const TransitionEvent& event, int direction) {
    if (!event.paired) {
        return EventStanding::NotTimed;
    }
    const PairedRatio& paired = *event.paired;
    if (paired.ciLow <= 1 && 1 <= paired.ciHigh) {
        return EventStanding::WithinNoise;
    }
    const bool faster = paired.ciLow > 1;
    return (faster ? 1 : -1) == direction ? EventStanding::Held : EventStanding::Reversed;
}

EventStanding kindStanding(const TransitionEvent& event, const std::string& kind) {
    if (kind == "regression_exe") {
        return event.afterFailsOurs ? EventStanding::Held
               : event.paired       ? EventStanding::Reversed
                                    : EventStanding::NotTimed;
    }
    return eventStanding(event, claimedDirection(kind));
}

EventsSummary kbxEventsSummary(const std::vector<TransitionEvent>& events) {
    EventsSummary summary;
    for (const TransitionEvent& event : events) {
        for (const std::string& kind : performanceKinds(event.kinds)) {
            summary.rows.push_back({event, kind, kindStanding(event, kind)});
        }
    }
    std::map<std::string, std::map<std::string, std::vector<const EventRow*>>> byKind; // kind -> category -> rows
    for (const EventRow& row : summary.rows) {
        byKind[row.kind][row.event.category].push_back(&row);
    }
    std::vector<std::string> kinds;
    for (const auto& [kind, categories] : byKind) {
        kinds.push_back(kind);
    }
    std::sort(kinds.begin(), kinds.end(), kindBefore);
    for (const std::string& kind : kinds) {
        std::vector<const EventRow*> all;
        for (const EventRow& row : summary.rows) {
            if (row.kind == kind) {
                all.push_back(&row);
            }
        }
        summary.groups.push_back(groupOf(kind, "", all));
        std::vector<std::pair<std::string, const std::vector<const EventRow*>*>> categories;
        for (const auto& [category, rows] : byKind[kind]) {
            categories.emplace_back(category.empty() ? std::string("uncategorised") : category, &rows);
        }
        std::sort(categories.begin(), categories.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [category, rows] : categories) {
            summary.groups.push_back(groupOf(kind, category, *rows));
        }
    }
    return summary;
}

} // namespace mkb::analysis
