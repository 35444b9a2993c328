// loadKbxTransitions: the trials' consecutive submissions joined to our regradings (newest per boundary) and to the
// store's live transition re-timings; the not-timed reasons are the kbx-events report's.
#include "core/io/kbx_transitions.h"

#include "core/io/kbx_regraded_rounds.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <tuple>

namespace mkb::io {
namespace {

using RetimingKey = std::tuple<std::string, std::string, int, int, std::string, int, int>;

std::string taskOf(const TrialRecord& trial) {
    char number[16];
    std::snprintf(number, sizeof number, "%02d", trial.problemNumber);
    return trial.family + "/" + number + "_" + trial.problemSlug;
}

/// The pair's paired ratio, or why it has none.
void judgeTiming(analysis::TransitionEvent& event, const TransitionRetimingRecord* retimed, const TrialRecord& trial,
                 const Verdict& was, const Verdict& now) {
    if (retimed && retimed->result.ok) {
        for (const RetimedPair& pair : retimed->result.pairs) {
            if (pair.a == "before" && pair.b == "after") {
                event.paired = analysis::PairedRatio{pair.ratio, pair.ciLow, pair.ciHigh, pair.n};
            }
        }
        if (!event.paired) {
            event.notTimed = "re-timed without a before/after pair";
        }
    } else if (retimed) {
        event.notTimed = "fails under our grader";
        event.notTimedDetail = retimed->result.error;
        event.afterFailsOurs = retimed->result.failedLabel == "after";
    } else if (!was.imported || !now.imported) {
        event.notTimed = "a kernel never ran (its own verdict)";
    } else if (trial.problemFingerprint.empty()) {
        event.notTimed = "no problem file (the task is not in the imported suite)";
    } else {
        event.notTimed = "not re-timed yet";
    }
}

} // namespace

std::string reachedBy(const Verdict& verdict) {
    const nlohmann::json parsed = nlohmann::json::parse(verdict.json, nullptr, false);
    if (!parsed.is_object()) {
        return {};
    }
    const auto found = parsed.find("reached_by");
    return found != parsed.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::vector<std::string> transitionKinds(const std::string& kinds) {
    std::vector<std::string> found;
    std::istringstream parts(kinds);
    for (std::string part; std::getline(parts, part, ',');) {
        const auto first = part.find_first_not_of(" \t");
        if (first == std::string::npos) {
            continue;
        }
        std::string kind = part.substr(first, part.find_last_not_of(" \t") - first + 1);
        if (std::find(found.begin(), found.end(), kind) == found.end()) {
            found.push_back(std::move(kind));
        }
    }
    return found;
}

std::string submissionName(const Verdict& verdict, int index) {
    return verdict.boundary == "kbx" ? "round_" + std::to_string(index - 1) : "submission " + std::to_string(index);
}

std::string notTimedText(const analysis::TransitionEvent& event) {
    if (event.paired && event.notTimed.empty()) {
        return {};
    }
    return event.notTimedDetail.empty() ? event.notTimed : event.notTimed + ": " + event.notTimedDetail;
}

std::string standingText(const analysis::TransitionEvent& event) {
    const std::vector<std::string> kinds = analysis::performanceKinds(event.kinds);
    std::string text;
    if (kinds.empty()) {
        text = "no speed claim";
    } else {
        std::vector<analysis::EventStanding> standings;
        for (const std::string& kind : kinds) {
            standings.push_back(analysis::kindStanding(event, kind));
        }
        const bool allAgree = std::all_of(standings.begin(), standings.end(),
                                          [&](analysis::EventStanding standing) { return standing == standings[0]; });
        if (allAgree) {
            text = analysis::toString(standings[0]);
        } else {
            for (std::size_t i = 0; i < kinds.size(); ++i) {
                text += (i == 0 ? "" : "; ") + kinds[i] + " " + analysis::toString(standings[i]);
            }
        }
    }
    const std::string why = notTimedText(event);
    return why.empty() ? text : text + " (" + why + ")";
}

Result<std::vector<KbxTransition>> loadKbxTransitions(Store& store, const std::optional<std::string>& model,
                                                      const CategoryOf& categoryOf) {
    auto records = store.liveTransitionRetimings();
    if (!records) {
        return records.error();
    }
    std::map<RetimingKey, const TransitionRetimingRecord*> retimed;
    for (const TransitionRetimingRecord& record : *records) {
        retimed[{record.model, record.suite, record.problemNumber, record.replicate, record.arm, record.beforeIndex,
                 record.afterIndex}] = &record;
    }
    TrialFilter filter;
    filter.model = model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    auto regradings = store.regradings();
    if (!regradings) {
        return regradings.error();
    }
    const auto ours = newestRegradings(std::move(*regradings), [](std::int64_t) { return true; });
    std::map<std::int64_t, std::map<std::string, Verdict>> oursBySubmission; // submission id -> boundary -> verdict
    for (const auto& [key, record] : ours) {
        oursBySubmission[key.second][key.first] = record.verdict;
    }
    const auto oursOf = [&oursBySubmission](std::int64_t submissionId) {
        const auto found = oursBySubmission.find(submissionId);
        return found == oursBySubmission.end() ? std::map<std::string, Verdict>{} : found->second;
    };
    std::vector<KbxTransition> transitions;
    for (const TrialRecord& trial : *trials) {
        if (trial.archived) {
            continue;
        }
        auto submissions = store.submissions(trial.id);
        if (!submissions) {
            return submissions.error();
        }
        std::map<int, const SubmissionRecord*> byIndex;
        for (const SubmissionRecord& submission : *submissions) {
            if (submission.index >= 1) {
                byIndex[submission.index] = &submission;
            }
        }
        for (const auto& [index, after] : byIndex) {
            const auto before = byIndex.find(index - 1);
            const std::string kinds = reachedBy(after->verdict);
            if (before == byIndex.end() || kinds.empty()) {
                continue;
            }
            KbxTransition transition;
            analysis::TransitionEvent& event = transition.event;
            event.task = taskOf(trial);
            event.category = categoryOf(trial);
            event.kinds = kinds;
            event.beforeIndex = index - 1;
            event.afterIndex = index;
            const Verdict& was = before->second->verdict;
            const Verdict& now = after->verdict;
            if (was.speedupVsEager > 0 && now.speedupVsEager > 0) {
                event.claimedRatio = now.speedupVsEager / was.speedupVsEager;
            }
            const auto found = retimed.find(
                {trial.model, trial.suite, trial.problemNumber, trial.replicate, trial.arm, index - 1, index});
            judgeTiming(event, found == retimed.end() ? nullptr : found->second, trial, was, now);
            transition.trialId = trial.id;
            transition.model = trial.model;
            transition.beforeSubmissionId = before->second->id;
            transition.afterSubmissionId = after->id;
            transition.theirsBefore = was;
            transition.theirsAfter = now;
            transition.oursBefore = oursOf(before->second->id);
            transition.oursAfter = oursOf(after->id);
            transition.beforeKernel = before->second->kernelSource;
            transition.afterKernel = after->kernelSource;
            transitions.push_back(std::move(transition));
        }
    }
    return transitions;
}

} // namespace mkb::io
