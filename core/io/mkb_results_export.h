// Export of a model's trials as a MetaKernelBench-compatible results.json (legend, model, overall, cells).
#pragma once

#include "core/analysis/settings.h"
#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mkb {

/// The results.json document of one model: {"legend", "model", "timing", "overall", "cells"} with the keys
/// MetaKernelBench writes, in the order docs/report.md documents (an ordered_json keeps insertion order), and "timing",
/// ours: the rule the ladders were ranked by (settings.timing) and how many cells it ranked on a re-timing. Every
/// number comes from core/analysis/ (groupMetrics, usageByArm) over the comparisons with the live re-timings attached
/// (analysis::attachRetimings), as mkb report ranks them; cells are (problem, direction) with their replicates, sorted
/// by problem then direction. Trials of other models are ignored.
nlohmann::ordered_json metaKernelBenchResults(const std::vector<TrialRecord>& trials, const std::string& model,
                                              const analysis::AnalysisSettings& settings = {},
                                              const std::vector<RetimingRecord>& retimings = {});

/// The models that hold live trials, sorted.
std::vector<std::string> modelsOf(const std::vector<TrialRecord>& trials);

/// Loads the model's trials and the store's live re-timings and builds its results.json; the error names the store or
/// the model.
Result<nlohmann::ordered_json> exportMetaKernelBenchResults(Store& store, const std::string& model,
                                                            const analysis::AnalysisSettings& settings = {});

/// "openrouter/z/glm-5" -> "openrouter_z_glm-5": a model name usable as a folder name.
std::string modelFolderName(const std::string& model);

} // namespace mkb
