// Trials, submissions, skills and usage as plain data: what the store saves and what planner and analysis read.
#pragma once

#include "core/records/verdict.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// Token and cost usage of one attempt; any field may be unknown.
struct Usage {
    std::optional<std::int64_t> inputTokens;
    std::optional<std::int64_t> cacheTokens;
    std::optional<std::int64_t> outputTokens;
    std::optional<double> costUsd;
    std::optional<double> agentSeconds;
};

enum class TrialStatus {
    Running,             // started, no verdict yet (a crash leaves it so; the planner reruns it)
    Finished,            // holds a final verdict (passed or not)
    Skipped,             // skill arm whose source wrote no skill: counts as its base
    InfrastructureError, // the grader or the driver broke; rerun next time
    Interrupted,         // stopped by the user; rerun next time
};

const char* toString(TrialStatus status);
std::optional<TrialStatus> trialStatusFromString(const std::string& text);

struct SubmissionRecord {
    std::int64_t id = 0;
    std::int64_t trialId = 0;
    int index = 0; // 1-based order within the attempt; 0 = the final fresh evaluation
    std::string kernelSource;
    Verdict verdict;
    double evalSeconds = 0;
    std::string createdAt; // ISO 8601 UTC
};

struct SkillRecord {
    std::int64_t id = 0;
    std::int64_t trialId = 0; // the attempt that wrote it
    std::string text;
    std::string sha256;
};

struct TrialRecord {
    std::int64_t id = 0;
    std::string model; // the model's name in the store
    std::string suite;
    int problemNumber = 0;
    std::string problemSlug;
    std::string family;
    std::string category; // the problem's KernelBench-X category: not a trials column, loaders fill it from MKB_META
    int replicate = 1;
    std::string arm;                           // "solo_triton" or "triton2cuda_skill"
    std::string dsl;                           // the DSL the attempt writes kernels in
    std::string coordinate;                    // "p07_r1_solo_triton"
    std::optional<std::int64_t> sourceTrialId; // skill arms: the source solo trial
    TrialStatus status = TrialStatus::Running;
    std::string error;
    bool skipped = false;
    bool timedOut = false;
    bool archived = false;  // redone trials are archived, never deleted
    std::string archivedAt; // ISO 8601 UTC when archived, else empty
    Usage usage;
    std::string problemFingerprint;
    std::string graderFingerprint;
    std::string sourceSkillSha256; // skill arms: SHA-256 of the skill they were given
    std::optional<Verdict> finalVerdict;
    std::optional<std::string> skillText; // the SKILL.md this attempt wrote, if any
    std::string startedAt;
    std::string finishedAt;
    std::int64_t invocationId = 0;
    std::string origin; // empty for our own runs; "mkb-import:<sha256 of the imported record>" for imported trials
    // A lean load (Store::loadTrials with TrialDetail::Lean) leaves out what no metric reads: skillText, the final
    // verdict's json, the fingerprints, sourceSkillSha256, archivedAt and origin. Store::loadTrial reads them all.
    bool lean = false;
    bool skillWritten = false; // set by every store load: the attempt left a non-blank SKILL.md (see skillText)
};

} // namespace mkb
