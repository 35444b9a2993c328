// One graded attempt as the metrics see it, and the builder that flattens store trials into attempts.
#pragma once

#include "core/records/trial.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb::analysis {

/// One evaluated submission of an attempt, in the order the agent made it.
struct SubmissionPoint {
    int index = 0;         // 1-based order within the attempt
    bool compiled = false; // the grader could import the kernel (KernelBench's "compiled")
    bool correct = false;
    double speedup = 0; // speedup over eager; 0 unless the submission passed
    std::string kernelSource;
};

// What every metric reads of every attempt comes first and fits in one cache line, the line the struct is aligned to:
// once two strings had grown the struct and pushed these fields across a line boundary, reading them took twice as
// long (the GUI scale bench's overview rows, 50,000 comparisons).
struct alignas(64) Attempt {
    bool graded = false; // holds a final verdict (status Finished)
    bool passed = false;
    bool correct = false;
    bool imported = false;
    bool compliant = false;
    bool skipped = false;               // a skill arm never run because its source wrote no skill
    bool wroteSkill = false;            // the attempt left a non-empty SKILL.md
    double speedup = 0;                 // speedup over eager of the final evaluation; 0 unless passed
    std::optional<double> speedupCiLow; // the speedup's 95% bootstrap CI (Verdict::speedupCiLow/High), when graded so
    std::optional<double> speedupCiHigh;

    std::int64_t trialId = 0;
    std::string model;
    int problemNumber = 0;
    std::string problemSlug;
    std::string family;
    std::string category; // KernelBench-X category of the problem ("" = uncategorised)
    int replicate = 1;
    std::string arm; // "solo_triton", "triton2cuda_skill"
    std::string dsl; // the DSL the attempt writes kernels in
    Usage usage;

    // KernelBench-X extensions of the final verdict; nullopt when the grader did not judge them.
    std::optional<bool> outliersCorrect;
    std::optional<bool> quantPassed;
    std::optional<double> iou;
    std::optional<double> mfu;
    std::string deviceName;
    // The implementation boundary its final verdict was graded under ("mkb", "strict", or "legacy" for verdicts
    // older than boundaries); "" when it holds no verdict. Comparisons never pair different boundaries.
    std::string boundary;

    std::vector<SubmissionPoint> submissions; // ascending index; the final fresh evaluation is not among them
    std::string finalKernelSource;            // the kernel the final verdict graded ("" when unknown)
};

/// The attempt's view of one trial. Running, errored and interrupted trials are not graded; skipped ones keep
/// skipped = true. Submissions are attached by the caller (see attemptsFromTrials).
Attempt attemptFromTrial(const TrialRecord& trial);
/// attemptFromTrial(trial) written into a default-constructed attempt where it lies: a bulk loader that emplaces its
/// attempts saves moving the large record once per trial.
void fillAttemptFromTrial(const TrialRecord& trial, Attempt& attempt);

/// The trial becomes an attempt (and fills a comparison's arm): it is not archived and holds a verdict (Finished or
/// Skipped).
bool fillsArm(const TrialRecord& trial);

/// Adds one submission of the attempt's trial: index 0 (the final fresh evaluation) gives finalKernelSource, index >= 1
/// joins the trajectory. Submissions must come in ascending index; settleFinalKernel follows the last one.
void addSubmission(Attempt& attempt, const SubmissionRecord& submission);
/// After the attempt's last submission: without an index-0 evaluation, the final kernel is the last submission's.
void settleFinalKernel(Attempt& attempt);

/// Attaches submissions to the attempts they belong to (matched by trialId) as attemptsFromTrials describes.
void attachSubmissions(std::vector<Attempt>& attempts, const std::vector<SubmissionRecord>& submissions);

/// Attempts for every trial that holds a verdict (Finished or Skipped) and is not archived, in input order.
/// Submissions are matched to their trial by trialId: index >= 1 forms the trajectory, index 0 (the final fresh
/// evaluation) gives finalKernelSource, else the last submission's source does.
std::vector<Attempt> attemptsFromTrials(const std::vector<TrialRecord>& trials,
                                        const std::vector<SubmissionRecord>& submissions = {});

} // namespace mkb::analysis
