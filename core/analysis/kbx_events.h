// KernelBench-X's performance events against paired re-timing (DESIGN §5.5, §8): whether each claimed speedup
// increase or regression holds when its before and after kernels are timed together, per kind and category.
#pragma once

#include "core/analysis/stats.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mkb::analysis {

/// The after/before ratio of one paired re-timing (the after kernel's speedup over the before kernel) and its 95% CI.
struct PairedRatio {
    double ratio = 1;
    double ciLow = 1;
    double ciHigh = 1;
    int n = 0;
};

/// One before/after pair of a refinement whose after round KernelBench-X labelled with a performance kind.
struct TransitionEvent {
    std::string task;     // "pooling/106_row_avg_pool1d"
    std::string category; // KernelBench-X's category, "" when unknown
    std::string kinds;    // the transition's kinds as KernelBench-X wrote them: "regression_exe,regression_perf"
    int beforeIndex = 0;  // submission indices
    int afterIndex = 0;
    std::optional<double> claimedRatio; // KernelBench-X's after/before speedup from its own unpaired timings
    std::optional<PairedRatio> paired;  // ours; unset when the pair was not timed
    bool afterFailsOurs = false;        // our grader found the after kernel incorrect (the before one ran correctly)
    std::string notTimed;               // when unset: the reason's class ("fails under our grader", …)
    std::string notTimedDetail;         // and the reason in full (the grader's error)
};

/// Which way a kind claims the after kernel moved: +1 faster (speedup_increase), -1 slower (every regression_*
/// kind), 0 not a performance kind (exe_fail_to_pass, perf_ok_newly, …).
int claimedDirection(const std::string& kind);

/// The performance kinds among a transition's comma-separated kinds, in the order written.
std::vector<std::string> performanceKinds(const std::string& kinds);

enum class EventStanding {
    Held,        // the paired ratio's CI excludes 1 in the claimed direction
    WithinNoise, // the CI contains 1
    Reversed,    // the CI excludes 1 the other way
    NotTimed,    // no paired ratio
};

/// "held", "within noise", "reversed", "not timed".
const char* toString(EventStanding standing);

/// How the event stands against a claim in direction (+1 or -1).
EventStanding eventStanding(const TransitionEvent& event, int direction);

/// How the event stands under one of its kinds. regression_exe claims the after kernel stopped running correctly,
/// not that it got slower: it holds when our grader finds the after kernel incorrect, and is reversed when our
/// grader times both (both ran correctly); every other kind follows eventStanding.
EventStanding kindStanding(const TransitionEvent& event, const std::string& kind);

/// A share with its 95% percentile-bootstrap interval (meanBootstrapCis over the events' 0/1 indicators); the
/// interval is unset with fewer than two timed events.
struct EventShare {
    std::optional<double> share;
    std::optional<Interval> interval;
};

/// The events of one kind in one category (category "" = every category of the kind).
struct EventGroup {
    std::string kind;
    std::string category;
    std::size_t events = 0;
    std::size_t held = 0;
    std::size_t withinNoise = 0;
    std::size_t reversed = 0;
    std::size_t notTimed = 0;
    EventShare heldShare; // over the timed events (held + within noise + reversed)
    EventShare noiseShare;
    EventShare reversedShare;
    std::vector<std::pair<std::string, std::size_t>> notTimedReasons; // class -> events, most frequent first
    std::optional<double> claimedGeometricMean;                       // of the claimed ratios of the timed events
    std::optional<double> pairedGeometricMean;                        // of their paired ratios
};

/// One event as the per-event table and the chart show it: the standing under each of its performance kinds.
struct EventRow {
    TransitionEvent event;
    std::string kind; // the performance kind this row judges (an event of two kinds gives two rows)
    EventStanding standing = EventStanding::NotTimed;
};

struct EventsSummary {
    std::vector<EventGroup> groups; // per kind (speedup_increase first, then regressions by name): the whole kind,
                                    // then each category by name ("uncategorised" for "")
    std::vector<EventRow> rows;     // per event and kind, in the order of the events given
};

/// Classifies every event under each of its performance kinds and counts them per kind and category. An event of two
/// regression kinds counts under both. Events without a performance kind are left out.
EventsSummary kbxEventsSummary(const std::vector<TransitionEvent>& events);

} // namespace mkb::analysis
