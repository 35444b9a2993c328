// Builds the kbx-events tables from the store's transitions (io::loadKbxTransitions), its performance kinds only.
#include "core/report/report_kbx_events.h"

#include "core/analysis/kbx_events.h"
#include "core/io/kbx_transitions.h"

namespace mkb::report {
namespace {

ReportCell shareLow(const analysis::EventShare& share) {
    return share.interval ? percentCell(share.interval->low) : nullCell();
}

ReportCell shareHigh(const analysis::EventShare& share) {
    return share.interval ? percentCell(share.interval->high) : nullCell();
}

std::string reasonsText(const std::vector<std::pair<std::string, std::size_t>>& reasons) {
    std::string text;
    for (const auto& [reason, count] : reasons) {
        text += (text.empty() ? "" : "; ") + reason + " " + std::to_string(count);
    }
    return text;
}

} // namespace

Result<std::vector<ReportTable>> kbxEventTables(Store& store, const ReportOptions& options,
                                                const std::function<std::string(const TrialRecord&)>& categoryOf) {
    auto transitions = io::loadKbxTransitions(store, options.model, categoryOf);
    if (!transitions) {
        return transitions.error();
    }
    std::vector<analysis::TransitionEvent> events;
    for (io::KbxTransition& transition : *transitions) {
        if (!analysis::performanceKinds(transition.event.kinds).empty()) {
            events.push_back(std::move(transition.event));
        }
    }
    if (events.empty()) {
        return std::vector<ReportTable>{};
    }
    const analysis::EventsSummary summary = analysis::kbxEventsSummary(events);
    ReportTable groups{"kbx-events",
                       "KernelBench-X's performance events against paired re-timing, by kind and category",
                       {"kind", "Category", "events", "held", "within noise", "reversed", "not timed", "held share",
                        "held 95% low", "held 95% high", "noise share", "noise 95% low", "noise 95% high",
                        "reversed share", "reversed 95% low", "reversed 95% high", "claimed GM after/before",
                        "paired GM after/before", "not timed because"},
                       {},
                       {},
                       {}};
    for (const analysis::EventGroup& group : summary.groups) {
        groups.rows.push_back(
            {textCell(group.kind), textCell(group.category.empty() ? "all" : group.category), countCell(group.events),
             countCell(group.held), countCell(group.withinNoise), countCell(group.reversed), countCell(group.notTimed),
             percentCell(group.heldShare.share), shareLow(group.heldShare), shareHigh(group.heldShare),
             percentCell(group.noiseShare.share), shareLow(group.noiseShare), shareHigh(group.noiseShare),
             percentCell(group.reversedShare.share), shareLow(group.reversedShare), shareHigh(group.reversedShare),
             numberCell(group.claimedGeometricMean, 3), numberCell(group.pairedGeometricMean, 3),
             textCell(reasonsText(group.notTimedReasons))});
    }
    groups.footnotes = {
        "An event: a step of a refinement whose after round KernelBench-X labelled speedup_increase (claims the after "
        "kernel faster) or regression_* (claims it slower), from its own separate timings. Held: the paired "
        "after/before ratio's 95% interval (mkb retime --transitions: both kernels and eager in one session) "
        "excludes 1 in the claimed direction; within noise: it contains 1; reversed: it excludes 1 the other way. "
        "Shares are of the timed events, with 95% percentile-bootstrap intervals (seeded). regression_exe claims "
        "the after kernel stopped running correctly: it holds when our grader finds the after kernel incorrect, and "
        "is reversed when both ran correctly under ours. An event of two regression kinds counts under both "
        "(docs/guide/kernelbenchx.md)."};
    ReportTable list{"kbx-event-list",
                     "Each performance event with its claimed and paired after/before ratios",
                     {"task", "Category", "before", "after", "kind", "claimed after/before", "paired after/before",
                      "paired 95% low", "paired 95% high", "rounds", "standing", "why not timed"},
                     {},
                     {},
                     {}};
    for (const analysis::EventRow& row : summary.rows) {
        const analysis::TransitionEvent& event = row.event;
        const std::string why =
            event.notTimedDetail.empty() ? event.notTimed : event.notTimed + ": " + event.notTimedDetail;
        list.rows.push_back({textCell(event.task), textCell(event.category.empty() ? "uncategorised" : event.category),
                             countCell(std::size_t(event.beforeIndex)), countCell(std::size_t(event.afterIndex)),
                             textCell(row.kind), numberCell(event.claimedRatio, 3),
                             event.paired ? numberCell(event.paired->ratio, 3) : nullCell(),
                             event.paired ? numberCell(event.paired->ciLow, 3) : nullCell(),
                             event.paired ? numberCell(event.paired->ciHigh, 3) : nullCell(),
                             event.paired ? countCell(std::size_t(event.paired->n)) : nullCell(),
                             textCell(analysis::toString(row.standing)), textCell(why)});
    }
    return std::vector<ReportTable>{std::move(groups), std::move(list)};
}

} // namespace mkb::report
