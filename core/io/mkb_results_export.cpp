// Builds MetaKernelBench's results.json from store trials: group metrics from core/analysis/, records from the trials.
#include "core/io/mkb_results_export.h"

#include "core/analysis/comparison.h"
#include "core/analysis/ladder.h"
#include "core/analysis/usage.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace mkb {
namespace {

using analysis::Comparison;
using json = nlohmann::ordered_json; // documented key order, not alphabetical

json legend() {
    return {
        {"arms", "solo_<dsl>: the problem attempted in that DSL with no help, writing a SKILL.md on the way; "
                 "<a>2<b>_skill: the problem attempted in DSL b with the SKILL.md of solo_<a> attached"},
        {"records", "one record per cell, replicate and arm: source = the solo in the source DSL, base = the solo in "
                    "the target DSL (no skill), skill = the attempt given the source's skill; a replicate is resolved "
                    "when all three hold a verdict; a skipped skill record was not run because its source wrote no "
                    "SKILL.md"},
        {"rates", "R@t = share of resolved cell-replicates that passed with speedup over torch eager >= t (R@0 is the "
                  "pass rate); S = 100 x the mean of R@t over the thresholds; lift = skill - base, a skipped skill "
                  "arm counting as its base; with_skill = the same contrast over replicates whose source wrote a "
                  "SKILL.md; by_source_verdict = the contrast split by whether the source passed"},
        {"source_coverage", "share of resolved cell-replicates whose source solo passed"},
        {"skill_coverage", "share of resolved cell-replicates whose source solo wrote a SKILL.md"},
        {"usage", "per arm, over the trials carrying a usage record, each counted once: n_trials, summed cost_usd and "
                  "token counts (input, cache, output), mean agent_sec; a sum is null when any counted record lacks "
                  "that number"},
        {"timing",
         "not a MetaKernelBench key: the rule that ranked the ladders (docs/metrics.md). paired: a cell whose "
         "base and skill passed is ranked on its paired re-timing's speedups over eager (one session), a "
         "crossing of t within noise counting as a tie (the skill keeps its base's rung); cells without a "
         "re-timing fall back to the verdicts' speedups (fell_back). unpaired: MetaKernelBench's rule, each "
         "arm's own verdict speedup"},
    };
}

/// The rule the ladders were ranked by and what it did over the whole selection (the ladder report's rule line).
json timingJson(const analysis::Contrast& contrast, const analysis::AnalysisSettings& settings) {
    json ties = json::object();
    for (std::size_t i = 0; i < settings.thresholds.size() && i < contrast.ties.size(); ++i) {
        ties[analysis::ladderLabel(settings.thresholds[i])] = contrast.ties[i];
    }
    return {{"rule", analysis::toString(settings.timing)},
            {"n_resolved", contrast.resolved},
            {"n_paired_cells", contrast.pairedCells},
            {"n_fell_back", contrast.fellBack},
            {"ties", ties}};
}

json optionalJson(const std::optional<double>& value) {
    return value ? json(*value) : json(nullptr);
}

json optionalJson(const std::optional<std::int64_t>& value) {
    return value ? json(*value) : json(nullptr);
}

json ladderJson(const analysis::LadderRates& rates) {
    json out = json::object();
    for (std::size_t i = 0; i < rates.thresholds.size(); ++i) {
        out[analysis::ladderLabel(rates.thresholds[i])] = rates.rates[i];
    }
    out["S"] = rates.score;
    return out;
}

json contrastJson(const analysis::Contrast& contrast) {
    if (!contrast.base || !contrast.skill || !contrast.lift) {
        return {{"base", nullptr}, {"skill", nullptr}, {"lift", nullptr}};
    }
    return {{"base", ladderJson(*contrast.base)},
            {"skill", ladderJson(*contrast.skill)},
            {"lift", ladderJson(*contrast.lift)}};
}

json usageJson(const std::vector<Comparison>& comparisons) {
    json out = json::object();
    for (const auto& [arm, usage] : analysis::usageByArm(comparisons)) {
        out[arm] = {{"n_trials", usage.trials},
                    {"cost_usd", optionalJson(usage.costUsd)},
                    {"n_input_tokens", optionalJson(usage.inputTokens)},
                    {"n_cache_tokens", optionalJson(usage.cacheTokens)},
                    {"n_output_tokens", optionalJson(usage.outputTokens)},
                    {"agent_sec", optionalJson(usage.meanAgentSeconds)}};
        if (!usage.overflowed.empty()) {
            // Not a MetaKernelBench key: it says why those sums are null (a total past 64-bit integers or doubles).
            out[arm]["overflow"] = usage.overflowed;
        }
    }
    return out;
}

/// The keys MetaKernelBench writes for a group of cell-replicates, in its order.
json groupJson(const std::vector<Comparison>& comparisons, const analysis::AnalysisSettings& settings) {
    const analysis::GroupMetrics metrics = analysis::groupMetrics(comparisons, settings);
    json out = json::object();
    out["n_cell_replicates"] = metrics.comparisons;
    out["n_resolved"] = metrics.coverage.resolved;
    out["source_coverage"] = optionalJson(metrics.coverage.sourcePassed);
    out["skill_coverage"] = optionalJson(metrics.coverage.sourceWroteSkill);
    const json all = contrastJson(metrics.all);
    out["base"] = all["base"];
    out["skill"] = all["skill"];
    out["lift"] = all["lift"];
    out["with_skill"] = contrastJson(metrics.withSkill);
    out["by_source_verdict"] = {{"passed", contrastJson(metrics.sourcePassed)},
                                {"failed", contrastJson(metrics.sourceFailed)}};
    out["usage"] = usageJson(comparisons);
    return out;
}

std::string problemName(int number, const std::string& slug) {
    char digits[16];
    std::snprintf(digits, sizeof digits, "%02d", number);
    return std::string(digits) + "_" + slug;
}

json recordJson(const TrialRecord* trial) {
    if (!trial) {
        return nullptr;
    }
    const Verdict verdict = trial->finalVerdict.value_or(Verdict{});
    json usage = nullptr;
    if (analysis::carriesUsage(trial->usage)) {
        usage = {{"n_input_tokens", optionalJson(trial->usage.inputTokens)},
                 {"n_cache_tokens", optionalJson(trial->usage.cacheTokens)},
                 {"n_output_tokens", optionalJson(trial->usage.outputTokens)},
                 {"cost_usd", optionalJson(trial->usage.costUsd)},
                 {"agent_sec", optionalJson(trial->usage.agentSeconds)}};
    }
    json skipped = nullptr;
    if (trial->skipped || trial->status == TrialStatus::Skipped) {
        skipped = trial->error.empty() ? std::string("source wrote no SKILL.md") : trial->error;
    }
    json error = nullptr;
    if (!trial->skipped && trial->status != TrialStatus::Skipped && !trial->error.empty()) {
        error = trial->error;
    }
    return {{"rewards",
             {{"imported", verdict.imported ? 1.0 : 0.0},
              {"correct", verdict.correct ? 1.0 : 0.0},
              {"speedup_vs_eager", verdict.passed ? verdict.speedupVsEager : 0.0},
              {"passed", verdict.passed ? 1.0 : 0.0}}},
            {"timed_out", trial->timedOut},
            {"error", error},
            {"skipped", skipped},
            {"usage", usage}};
}

} // namespace

std::vector<std::string> modelsOf(const std::vector<TrialRecord>& trials) {
    std::set<std::string> models;
    for (const TrialRecord& trial : trials) {
        if (!trial.archived) {
            models.insert(trial.model);
        }
    }
    return {models.begin(), models.end()};
}

std::string modelFolderName(const std::string& model) {
    std::string name;
    for (char c : model) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                           c == '.' || c == '_';
        name += plain ? c : '_';
    }
    return name.empty() || name == "." || name == ".." ? "model" : name;
}

json metaKernelBenchResults(const std::vector<TrialRecord>& allTrials, const std::string& model,
                            const analysis::AnalysisSettings& settings, const std::vector<RetimingRecord>& retimings) {
    // A store loaded for one model (the usual case) is used as it is; otherwise the model's trials are copied out.
    std::vector<TrialRecord> ownTrials;
    const bool onlyThisModel = std::all_of(allTrials.begin(), allTrials.end(),
                                           [&model](const TrialRecord& trial) { return trial.model == model; });
    if (!onlyThisModel) {
        for (const TrialRecord& trial : allTrials) {
            if (trial.model == model) {
                ownTrials.push_back(trial);
            }
        }
    }
    const std::vector<TrialRecord>& trials = onlyThisModel ? allTrials : ownTrials;
    // The newest live trial at each coordinate supplies the record, verdict or not (an errored trial shows its error).
    std::map<std::tuple<int, int, std::string>, const TrialRecord*> recordAt;
    for (const TrialRecord& trial : trials) {
        if (trial.archived) {
            continue;
        }
        const TrialRecord*& slot = recordAt[{trial.problemNumber, trial.replicate, trial.arm}];
        if (!slot || slot->id < trial.id) {
            slot = &trial;
        }
    }
    auto recordOf = [&](int problem, int replicate, const std::string& arm) {
        auto found = recordAt.find({problem, replicate, arm});
        return recordJson(found == recordAt.end() ? nullptr : found->second);
    };

    std::vector<Comparison> comparisons = analysis::buildComparisons(trials);
    analysis::attachRetimings(comparisons, retimings); // the paired rule ranks on these; none: every cell falls back
    // Cells are (problem, direction); buildComparisons sorts by problem, direction, replicate.
    std::vector<std::vector<Comparison>> cells;
    for (const Comparison& comparison : comparisons) {
        if (cells.empty() || cells.back().front().problemNumber != comparison.problemNumber ||
            cells.back().front().direction != comparison.direction) {
            cells.emplace_back();
        }
        cells.back().push_back(comparison);
    }
    std::map<std::string, std::vector<Comparison>> byDirection;
    std::map<std::string, std::vector<Comparison>> byCategory;
    for (const Comparison& comparison : comparisons) {
        byDirection[comparison.direction].push_back(comparison);
        byCategory[comparison.family].push_back(comparison);
    }

    json overall = json::object();
    overall["n_cells"] = cells.size();
    overall.update(groupJson(comparisons, settings));
    json directions = json::object();
    for (const auto& [direction, group] : byDirection) {
        directions[direction] = groupJson(group, settings);
    }
    json categories = json::object();
    for (const auto& [category, group] : byCategory) {
        categories[category] = groupJson(group, settings);
    }
    overall["by_direction"] = directions;
    overall["by_category"] = categories;

    json cellList = json::array();
    for (const std::vector<Comparison>& cell : cells) {
        const Comparison& first = cell.front();
        const std::string problem = problemName(first.problemNumber, first.problemSlug);
        json entry = json::object();
        entry["cell"] = {{"problem", problem},
                         {"category", first.family},
                         {"direction", first.direction},
                         {"source_task", problem + "_" + first.sourceDsl},
                         {"target_task", problem + "_" + first.targetDsl}};
        entry.update(groupJson(cell, settings));
        json replicates = json::array();
        for (const Comparison& comparison : cell) {
            replicates.push_back(
                {{"resolved", comparison.resolved()},
                 {"n_replicate", comparison.replicate},
                 {"source", recordOf(comparison.problemNumber, comparison.replicate, "solo_" + comparison.sourceDsl)},
                 {"base", recordOf(comparison.problemNumber, comparison.replicate, "solo_" + comparison.targetDsl)},
                 {"skill", recordOf(comparison.problemNumber, comparison.replicate, comparison.direction + "_skill")}});
        }
        entry["replicates"] = replicates;
        cellList.push_back(std::move(entry));
    }

    json document = json::object();
    document["legend"] = legend();
    document["model"] = model;
    document["timing"] = timingJson(analysis::contrast(comparisons, settings), settings);
    document["overall"] = overall;
    document["cells"] = cellList;
    return document;
}

Result<json> exportMetaKernelBenchResults(Store& store, const std::string& model,
                                          const analysis::AnalysisSettings& settings) {
    TrialFilter filter;
    filter.model = model;
    auto trials = store.loadTrials(filter, TrialDetail::Lean);
    if (!trials) {
        return trials.error();
    }
    if (modelsOf(*trials).empty()) {
        return makeError("model '" + model + "' holds no live trial in " + store.path().string() +
                         "; list the models with `mkb db info` or pick another --model");
    }
    auto retimings = store.liveRetimings();
    if (!retimings) {
        return retimings.error();
    }
    return metaKernelBenchResults(*trials, model, settings, *retimings);
}

} // namespace mkb
