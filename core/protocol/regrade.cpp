// The regrade of a store in named steps: the rounds it selects, the problem files it writes from the store, the kernels
// it makes of them, the pool that grades them, and the filing of each verdict as it comes back.
#include "core/protocol/regrade.h"

#include "core/grader_client/device_probe.h"
#include "core/grader_client/grader_fingerprint.h"
#include "core/grader_client/grader_pool.h"
#include "core/io/kbx_corpus_kernel.h"
#include "core/protocol/stored_problems.h"
#include "core/store/store.h"
#include "core/util/paths.h"
#include "core/util/sha256.h"
#include "core/util/text.h"
#include "core/vocabulary/boundary.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace mkb {
namespace fs = std::filesystem;

const char* toString(RegradeStatus status) {
    switch (status) {
    case RegradeStatus::Graded:
        return "graded";
    case RegradeStatus::Current:
        return "current";
    case RegradeStatus::NoProblem:
        return "no problem file";
    case RegradeStatus::NotAdapted:
        return "not adapted";
    case RegradeStatus::WouldGrade:
        return "to grade";
    case RegradeStatus::Infrastructure:
        return "grader failed";
    case RegradeStatus::Left:
        return "left for a rerun";
    }
    return "?";
}

std::string verdictInWords(const Verdict& verdict) {
    char speedup[32];
    std::snprintf(speedup, sizeof speedup, "%.3gx", verdict.speedupVsEager);
    if (verdict.passed) {
        return std::string("passed ") + speedup;
    }
    std::string error = safeOneLine(verdict.error);
    if (error.size() > 160) {
        error = error.substr(0, 157) + "...";
    }
    if (verdict.correct) {
        return "correct, not passed" + (error.empty() ? "" : ": " + error);
    }
    return "failed (" + (verdict.stage.empty() ? std::string("?") : verdict.stage) + ")" +
           (error.empty() ? "" : ": " + error);
}

int RegradeSummary::count(RegradeStatus status) const {
    return static_cast<int>(std::count_if(rounds.begin(), rounds.end(),
                                          [status](const RegradeRound& round) { return round.status == status; }));
}

namespace {

constexpr std::string_view kCorpusOrigin = "kbx-corpus:";

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string jsonString(const std::string& json, const char* key) {
    const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
    if (!parsed.is_object()) {
        return {};
    }
    const auto found = parsed.find(key);
    return found != parsed.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::string problemFileName(const TrialRecord& trial) {
    char number[16];
    std::snprintf(number, sizeof number, "%02d", trial.problemNumber);
    return std::string(number) + "_" + trial.problemSlug;
}

bool selected(const TrialRecord& trial, const std::string& task, const std::string& glob) {
    const std::string stem = problemFileName(trial);
    for (const std::string& name : {std::to_string(trial.problemNumber), stem, trial.family + "/" + stem, task}) {
        if (globMatch(glob, name)) {
            return true;
        }
    }
    return false;
}

/// One selected round with what grading it needs.
struct RoundWork {
    RegradeRound round;
    const TrialRecord* trial = nullptr;
    std::string code;
    const Problem* problem = nullptr; // written to the work folder; unset for a skipped round
    std::string dsl;
};

/// A regrade from its store to its summary; one object per regrade.
class Regrade {
public:
    Regrade(Store& store, const GraderLaunch& launch, const RegradeJob& job, const RegradeCallbacks& callbacks,
            const std::atomic<bool>* cancel)
        : store_(store), launch_(launch), job_(job), callbacks_(callbacks), cancel_(cancel) {}

    RegradeRun run() {
        RegradeRun result;
        if (Status prepared = prepareWorkFolder(); !prepared) {
            return failed(RegradeStage::Selecting, prepared.error().message);
        }
        if (Status chosen = selectRounds(); !chosen) {
            return failed(RegradeStage::Selecting, chosen.error().message);
        }
        if (Status started = startGrader(); !started) {
            return failed(RegradeStage::StartingGrader, started.error().message);
        }
        markCurrentRounds();
        gradeRounds();
        if (pool_) {
            pool_->stop();
        }
        removeTemporaryFolder();
        if (!filingError_.empty()) {
            return failed(RegradeStage::Filing, filingError_);
        }
        summary_.seconds = secondsSince(started_);
        for (RoundWork& work : works_) {
            summary_.rounds.push_back(std::move(work.round));
        }
        result.summary = std::move(summary_);
        return result;
    }

private:
    RegradeRun failed(RegradeStage stage, std::string error) {
        if (pool_) {
            pool_->stop();
        }
        removeTemporaryFolder();
        RegradeRun run;
        run.failedAt = stage;
        run.error = std::move(error);
        return run;
    }

    Status prepareWorkFolder() {
        std::error_code ec;
        if (job_.kernelsOut) {
            workFolder_ = *job_.kernelsOut;
        } else {
            workFolder_ = fs::temp_directory_path(ec) / ("mkb-regrade-" + std::to_string(::getpid()));
            temporary_ = true;
        }
        fs::create_directories(workFolder_, ec);
        if (ec) {
            return makeError("regrade: cannot create " + workFolder_.string() + ": " + ec.message());
        }
        return Ok{};
    }

    void removeTemporaryFolder() {
        if (temporary_) {
            std::error_code ec;
            fs::remove_all(workFolder_, ec);
            temporary_ = false;
        }
    }

    /// The problem files the store holds, by fingerprint (core/protocol/stored_problems.h).
    Status loadProblems() {
        auto stored = writeStoredProblems(store_, workFolder_ / "problems");
        if (!stored) {
            return stored.error();
        }
        problems_ = std::move(stored->byFingerprint);
        unreadable_ = std::move(stored->unreadable);
        return Ok{};
    }

    std::string roundName(const SubmissionRecord& submission) const {
        std::string round = jsonString(submission.verdict.json, "round");
        return round.empty() ? "submission " + std::to_string(submission.index) : round;
    }

    Status selectRounds() {
        if (Status loaded = loadProblems(); !loaded) {
            return loaded;
        }
        TrialFilter filter;
        filter.model = job_.model;
        auto trials = store_.loadTrials(filter, TrialDetail::Full);
        if (!trials) {
            return trials.error();
        }
        trials_ = std::move(trials.value());
        std::sort(trials_.begin(), trials_.end(), [](const TrialRecord& a, const TrialRecord& b) {
            return std::tie(a.model, a.problemNumber, a.replicate, a.arm) <
                   std::tie(b.model, b.problemNumber, b.replicate, b.arm);
        });
        for (const TrialRecord& trial : trials_) {
            auto submissions = store_.submissions(trial.id);
            if (!submissions) {
                return submissions.error();
            }
            for (SubmissionRecord& submission : *submissions) {
                RoundWork work;
                work.trial = &trial;
                work.round.trialId = trial.id;
                work.round.submissionId = submission.id;
                const std::string task = jsonString(submission.verdict.json, "task");
                work.round.task = task.empty() ? trial.family + "/" + problemFileName(trial) : task;
                if (!selected(trial, work.round.task, job_.problems)) {
                    break;
                }
                work.round.round = roundName(submission);
                work.round.theirs = std::move(submission.verdict);
                work.code = std::move(submission.kernelSource);
                work.dsl = job_.dsl.value_or(trial.dsl);
                placeProblem(work);
                works_.push_back(std::move(work));
            }
        }
        for (const RoundWork& work : works_) {
            if (work.problem && descriptors_.count(work.dsl) == 0) {
                auto descriptor = job_.dslDescriptor ? job_.dslDescriptor(work.dsl)
                                                     : Result<std::string>(makeError("no DSL descriptors given"));
                if (!descriptor) {
                    return makeError("regrade: DSL '" + work.dsl + "' of " + work.round.task + ": " +
                                     descriptor.error().message);
                }
                descriptors_.emplace(work.dsl, std::move(descriptor.value()));
            }
        }
        return Ok{};
    }

    /// Finds the round's problem file, or says why it has none.
    void placeProblem(RoundWork& work) {
        const TrialRecord& trial = *work.trial;
        if (trial.problemFingerprint.empty()) {
            work.round.status = RegradeStatus::NoProblem;
            work.round.reason = trial.origin.starts_with(kCorpusOrigin)
                                    ? "the store holds no problem file for it (the task is not in the suite the "
                                      "corpus was imported with, or it was imported without --suite)"
                                    : "its trial records no problem fingerprint";
            return;
        }
        if (auto found = problems_.find(trial.problemFingerprint); found != problems_.end()) {
            work.problem = &found->second;
            return;
        }
        work.round.status = RegradeStatus::NoProblem;
        auto bad = unreadable_.find(trial.problemFingerprint);
        work.round.reason = bad != unreadable_.end() ? "its stored problem file cannot be read: " + bad->second
                                                     : "the store holds no problem with its fingerprint " +
                                                           trial.problemFingerprint.substr(0, 12);
    }

    Status startGrader() {
        if (job_.dryRun) {
            auto fingerprint =
                graderFingerprintOf(launch_.packageDir.empty() ? graderPackageDir() : launch_.packageDir);
            graderFingerprint_ = fingerprintWithBoundary(fingerprint ? *fingerprint : "", job_.grade.boundary);
            summary_.graderFingerprint = graderFingerprint_;
            return Ok{};
        }
        pool_ = std::make_unique<GraderPool>(job_.devices, launch_, [](const std::string&, const std::string&) {});
        if (auto devices = store_.devices()) {
            for (const std::string& device : job_.devices) {
                pool_->setPeaks(device, latestPeaksFor(*devices, graderDeviceFor(device), currentHostName()));
            }
        }
        if (Status started = pool_->start(); !started) {
            return makeError("the grader could not start: " + started.error().message);
        }
        graderFingerprint_ = fingerprintWithBoundary(pool_->hello().graderFingerprint, job_.grade.boundary);
        summary_.graderFingerprint = graderFingerprint_;
        if (callbacks_.graderStarted) {
            callbacks_.graderStarted();
        }
        return Ok{};
    }

    /// Rounds regraded before under this boundary, grader and problem keep that verdict and are not graded again.
    void markCurrentRounds() {
        std::map<std::int64_t, Verdict> current; // by submission
        if (auto stored = store_.regradings()) {
            for (RegradingRecord& record : *stored) {
                if (record.verdict.boundary == job_.grade.boundary && record.graderFingerprint == graderFingerprint_) {
                    regradedWith_.emplace(record.submissionId, record.problemFingerprint);
                    current[record.submissionId] = std::move(record.verdict);
                }
            }
        }
        for (RoundWork& work : works_) {
            if (work.problem && regradedWith_.count({work.round.submissionId, work.problem->fingerprint}) != 0) {
                work.round.status = RegradeStatus::Current;
                work.round.ours = current[work.round.submissionId];
            }
        }
    }

    /// The kernel.py of a round in the work folder; false (with the reason on the round) when it cannot be made.
    bool writeKernel(RoundWork& work) {
        std::string source = work.code;
        if (work.trial->origin.starts_with(kCorpusOrigin)) {
            auto adapted =
                corpusRoundKernel(work.code, work.problem->source, "task " + work.round.task + " " + work.round.round);
            if (!adapted) {
                work.round.status = RegradeStatus::NotAdapted;
                work.round.reason = adapted.error().message;
                return false;
            }
            source = std::move(adapted->source);
        } else if (trimmed(source).empty()) {
            work.round.status = RegradeStatus::NotAdapted;
            work.round.reason = "task " + work.round.task + " " + work.round.round + ": the submission holds no code";
            return false;
        }
        const fs::path folder =
            workFolder_ / "kernels" / (std::to_string(work.trial->id) + "_" + std::to_string(work.round.submissionId));
        std::error_code ec;
        fs::create_directories(folder, ec);
        work.round.kernel = folder / "kernel.py";
        if (Status written = writeFileAtomically(work.round.kernel, source); !written) {
            work.round.status = RegradeStatus::NotAdapted;
            work.round.reason = written.error().message;
            return false;
        }
        kernelSources_[work.round.submissionId] = std::move(source);
        return true;
    }

    bool shouldStop() {
        if (cancel_ && cancel_->load()) {
            summary_.cancelled = true;
            return true;
        }
        if (job_.timeLimitS && secondsSince(started_) >= *job_.timeLimitS) {
            summary_.timeLimitReached = true;
            return true;
        }
        return !filingError_.empty();
    }

    void report(const RegradeRound& round) {
        if (callbacks_.roundDone) {
            callbacks_.roundDone(round);
        }
    }

    /// Grades one round and files its verdict; called by the workers, one round each at a time.
    void gradeOne(RoundWork& work) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (shouldStop()) {
                work.round.status = RegradeStatus::Left;
                return;
            }
            if (!writeKernel(work)) {
                report(work.round);
                return;
            }
            if (job_.dryRun) {
                work.round.status = RegradeStatus::WouldGrade;
                report(work.round);
                return;
            }
        }
        const GradeRequest request = makeGradeRequest(*work.problem, work.round.kernel, work.dsl,
                                                      descriptors_.at(work.dsl), job_.devices.front(), job_.grade);
        const auto gradingStarted = std::chrono::steady_clock::now();
        Verdict verdict = pool_->grade(request, {}, cancel_);
        verdict.boundary = job_.grade.boundary;
        std::lock_guard<std::mutex> lock(mutex_);
        summary_.gradingSeconds += secondsSince(gradingStarted);
        if (verdict.infrastructureError) {
            work.round.status = RegradeStatus::Infrastructure;
            work.round.reason = verdict.error;
            work.round.ours = std::move(verdict);
            report(work.round);
            return;
        }
        RegradingRecord record;
        record.submissionId = work.round.submissionId;
        record.graderFingerprint = graderFingerprint_;
        record.problemFingerprint = work.problem->fingerprint;
        record.kernelSource = kernelSources_[work.round.submissionId];
        record.kernelSha256 = sha256Hex(record.kernelSource);
        record.verdict = verdict;
        if (auto filed = store_.insertRegrading(record); !filed) {
            filingError_ = "regrade: task " + work.round.task + " " + work.round.round + ": " + filed.error().message;
            work.round.status = RegradeStatus::Left;
            return;
        }
        work.round.status = RegradeStatus::Graded;
        work.round.ours = std::move(verdict);
        report(work.round);
    }

    void gradeRounds() {
        std::vector<RoundWork*> pending;
        for (RoundWork& work : works_) {
            if (work.round.status == RegradeStatus::Left && work.problem) {
                pending.push_back(&work);
            } else {
                report(work.round);
            }
        }
        const int workers = std::max(1, job_.workers > 0 ? job_.workers : static_cast<int>(job_.devices.size()));
        std::atomic<std::size_t> next{0};
        const auto worker = [&]() {
            for (std::size_t at = next++; at < pending.size(); at = next++) {
                gradeOne(*pending[at]);
            }
        };
        std::vector<std::thread> threads;
        for (int i = 1; i < std::min<int>(workers, static_cast<int>(pending.size())); ++i) {
            threads.emplace_back(worker);
        }
        worker();
        for (std::thread& thread : threads) {
            thread.join();
        }
    }

    Store& store_;
    const GraderLaunch& launch_;
    const RegradeJob& job_;
    const RegradeCallbacks& callbacks_;
    const std::atomic<bool>* cancel_;
    const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

    fs::path workFolder_;
    bool temporary_ = false;
    std::map<std::string, Problem> problems_;       // by fingerprint
    std::map<std::string, std::string> unreadable_; // fingerprint -> why the catalog refused it
    std::map<std::string, std::string> descriptors_;
    std::vector<TrialRecord> trials_;
    std::vector<RoundWork> works_;
    std::set<std::pair<std::int64_t, std::string>> regradedWith_; // (submission, problem fingerprint)
    std::map<std::int64_t, std::string> kernelSources_;
    std::string graderFingerprint_;
    std::unique_ptr<GraderPool> pool_;
    std::mutex mutex_; // the store, the summary, the callbacks
    std::string filingError_;
    RegradeSummary summary_;
};

} // namespace

RegradeRun regradeStore(const fs::path& storePath, const GraderLaunch& launch, const RegradeJob& job,
                        const RegradeCallbacks& callbacks, const std::atomic<bool>* cancel) {
    auto opened = Store::open(storePath, job.dryRun ? OpenMode::ReadExisting : OpenMode::MustExist);
    if (!opened) {
        RegradeRun run;
        run.failedAt = RegradeStage::OpeningStore;
        run.error = opened.error().message;
        return run;
    }
    return Regrade(**opened, launch, job, callbacks, cancel).run();
}

} // namespace mkb
