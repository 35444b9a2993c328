// The project store: one SQLite file per project holding devices, models, problems, invocations, trials,
// submissions, final verdicts, skills and annotations (DESIGN §9), with versioned forward migrations.
//
// Layout decisions worth knowing when reading the file directly (handle()):
// - trials keep the problem's suite/number/slug/family/fingerprint as columns, so a trial survives problem edits;
// - final verdicts live in their own table `final_verdicts` (one row per trial), with the same verdict columns as
//   `submissions`; the grader's full JSON is kept verbatim in `verdict_json`;
// - a skill is one row of `skills` per trial that wrote one; annotations point at skills;
// - only one live (archived = 0) trial per (model, suite, problem number, replicate, arm), enforced by a partial
//   unique index; redone trials are archived, never deleted.
// A Store is used from one thread at a time; open one Store per thread or process (WAL lets them share the file).
#pragma once

#include "core/records/calibration.h"
#include "core/records/problem.h"
#include "core/records/regrading.h"
#include "core/records/retiming.h"
#include "core/records/store_records.h"
#include "core/records/trial.h"
#include "core/records/verdict.h"
#include "core/util/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace mkb {

enum class OpenMode {
    CreateIfMissing, // create the file (and its parent folders) when absent; a 0-byte file is initialised too
    MustExist,       // fail with a clear error when the file does not exist
    ReadExisting,    // MustExist for readers (reports, exports): opened read-only, so nothing is ever written,
                     // migrated, checkpointed or deleted (a write-ahead log beside it is read, never applied); the
                     // page-by-page check on open is skipped (a damaged page fails the read that meets it); an older
                     // schema is refused (`mkb db migrate` first)
    Inspect,         // ReadExisting that also accepts an older schema (`mkb db info`, `mkb db check`)
};

/// Which trials loadTrials returns.
struct TrialFilter {
    std::optional<std::string> model; // only this model's trials (by name)
    std::optional<std::string> suite; // only this suite's trials
    bool includeArchived = false;     // archived (redone) trials too
};

/// How much of each trial loadTrials reads.
enum class TrialDetail {
    Full, // every field
    Lean, // only what the metrics, reports, exports and tables read (TrialRecord::lean says what is left out)
    // Only what analysis::attemptFromTrial, the comparisons and the report's filters read: Lean without the suite,
    // coordinate, source trial, error, timedOut, timestamps and invocation, and a final verdict holding only passed,
    // correct, imported, compliant, speedup, outliersCorrect, quant, roofline and deviceName. `mkb report` loads this.
    Metrics,
};

/// What a TrialDetail::Metrics load reads beyond what every metric needs (identity, arm, status, passed, speedup):
/// a caller leaves out what none of its metrics reads. Left out, the fields keep their defaults.
struct MetricColumns {
    bool usage = true;         // tokens, cost and agent time (the usage table)
    bool verdictDetail = true; // imported, correct, compliant, outliers, quant, roofline, device (KernelBench-X etc.)
    bool skillWritten = true;  // TrialRecord::skillWritten, from a scan of the skills table
};

/// A live trial as the importer checks it: which trial holds a coordinate, with what content and source.
struct LiveTrialRef {
    std::int64_t id = 0;
    std::string origin;
    std::optional<std::int64_t> sourceTrialId;
};

/// How an attempt ended: everything finishTrial writes in one transaction.
struct TrialOutcome {
    TrialStatus status = TrialStatus::Finished;
    std::optional<Verdict> verdict; // the final fresh evaluation; stored in final_verdicts
    Usage usage;
    std::string error;
    std::optional<std::string> skillText; // the SKILL.md the attempt wrote; stored in skills with its SHA-256
    bool timedOut = false;
    bool skipped = false;
    std::string finishedAt; // ISO 8601 UTC; the current time when empty
};

/// What `mkb db info` prints.
struct StoreInfo {
    std::filesystem::path path;
    int schemaVersion = 0;       // the file's version after opening (equals latestSchemaVersion())
    int migratedFromVersion = 0; // the version the file had before this open (0 = newly created)
    std::uintmax_t fileSizeBytes = 0;
    std::int64_t walPendingPages = 0; // committed pages in PATH-wal not yet copied into the file by a checkpoint
    std::string journalMode;          // "wal"
    std::vector<std::pair<std::string, std::int64_t>> rowCounts; // table name -> rows, in schema order
    std::int64_t liveTrials = 0;
    std::int64_t archivedTrials = 0;
};

class Store {
public:
    /// Opens (and when needed creates and migrates forward) the store at path. WAL, foreign keys on, 5 s busy
    /// timeout. Never overwrites a file it cannot recognise: not SQLite, truncated, failing its integrity check,
    /// another application's database, or a schema newer than this build are each a one-line error naming the file.
    static Result<std::unique_ptr<Store>> open(const std::filesystem::path& path,
                                               OpenMode mode = OpenMode::CreateIfMissing);

    /// Reads the schema version of an existing store without changing it (for `mkb db migrate` and `db info`).
    /// 0 means an empty file. Errors like open().
    static Result<int> fileSchemaVersion(const std::filesystem::path& path);

    /// What `mkb db recover` did: the pages applied from the write-ahead log, and where the store and its log were
    /// copied first (empty when there was nothing to apply).
    struct LogRecovery {
        std::int64_t appliedPages = 0;
        std::filesystem::path copy;
    };
    /// Applies a write-ahead log beside the store that no running process holds (a writer stopped without closing
    /// the store), after copying the store and the log to PATH.before-recover and PATH.before-recover-wal. Refuses
    /// while any process has the store open, and when the log is certainly another database's.
    static Result<LogRecovery> recoverWriteAheadLog(const std::filesystem::path& path);

    /// The schema version this build writes.
    static int latestSchemaVersion();
    /// PRAGMA application_id of every workbench store ('MKBW').
    static constexpr std::int32_t kApplicationId = 0x4D4B4257;

    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    const std::filesystem::path& path() const;
    /// The schema version the file had before this open; 0 when this open created it.
    int migratedFromVersion() const;
    /// The raw connection for bulk readers (read-only use, please).
    sqlite3* handle();

    /// Runs work inside one SQLite transaction (a savepoint when nested); rolls back when work returns an error.
    Status transaction(const std::function<Status()>& work);

    // Problems: every distinct fingerprint of a problem is kept (unique per suite, number, fingerprint).
    Result<std::int64_t> upsertProblem(const Problem& problem);
    /// Every stored version of every problem (source text included), ordered by suite, number, first seen.
    Result<std::vector<Problem>> problems();

    // Devices, keyed by UUID.
    Result<std::int64_t> saveDevice(const DeviceRecord& device);
    Result<std::vector<DeviceRecord>> devices();

    // Models, keyed by name. ensureModel returns the existing id (updating driver/settings) or inserts one.
    Result<std::int64_t> ensureModel(const std::string& name, const std::string& driver,
                                     const std::string& settingsJson);
    Result<std::vector<ModelRecord>> models();

    // Invocations.
    Result<std::int64_t> beginInvocation(const InvocationRecord& invocation);
    Status finishInvocation(std::int64_t invocationId, const std::string& finishedAt = {});
    Result<std::vector<InvocationRecord>> invocations();

    // Trials.
    /// Inserts a live trial (status running unless the record says otherwise) and returns its id. The model is
    /// created (driver "") when not yet in the store. Fails when a live trial already holds the same
    /// (model, suite, problem number, replicate, arm): archive that one first.
    Result<std::int64_t> insertTrial(const TrialRecord& trial);
    Status updateTrialStatus(std::int64_t trialId, TrialStatus status, const std::string& error = {});
    /// Writes status, verdict, usage, error, skill, flags and finish time in one transaction. Refuses a trial that
    /// already holds a final verdict or is archived.
    Status finishTrial(std::int64_t trialId, const TrialOutcome& outcome);
    /// Writes a trial that already ended elsewhere (an import of history), archived or live as the record says,
    /// with its outcome, in one transaction. Like insertTrial, a live record may not collide with a live trial.
    Result<std::int64_t> insertFinishedTrial(const TrialRecord& trial, const TrialOutcome& outcome);
    /// Marks a trial archived (kept forever, no longer live), so a new trial may take its place.
    Status archiveTrial(std::int64_t trialId);
    /// The live trial at (model, suite, problem number, replicate, arm): id, origin and source trial. The importer
    /// reads it inside its write transaction, so its check and its insert see the same store.
    Result<std::optional<LiveTrialRef>> liveTrialAt(const std::string& model, const std::string& suite,
                                                    int problemNumber, int replicate, const std::string& arm);
    /// True when an archived trial of the model and suite has this origin (the content of an import).
    Result<bool> hasArchivedOrigin(const std::string& model, const std::string& suite, const std::string& origin);
    /// Links a trial to the trial its skill came from; re-import repairs a skill arm stored without its source.
    Status setSourceTrial(std::int64_t trialId, std::int64_t sourceTrialId);
    /// Trials with finalVerdict and skillText filled, ordered by id; a single query. A Lean load leaves the heavy
    /// text and provenance fields out (see TrialRecord::lean); read them for one trial with loadTrial.
    /// columns applies to TrialDetail::Metrics only.
    Result<std::vector<TrialRecord>> loadTrials(const TrialFilter& filter = {}, TrialDetail detail = TrialDetail::Full,
                                                const MetricColumns& columns = {});
    /// How many trials loadTrials(filter) would return.
    Result<std::size_t> countTrials(const TrialFilter& filter = {});
    /// The trials loadTrials(filter, TrialDetail::Metrics, columns) returns, handed to visit one at a time in id order
    /// instead of held together: visit sees one record refilled from row to row (it copies what it keeps). For readers
    /// that turn 100k trials into something smaller (`mkb report` builds its attempts straight from the rows).
    Status visitTrials(const TrialFilter& filter, const MetricColumns& columns,
                       const std::function<void(const TrialRecord&)>& visit);
    /// One trial with every field.
    Result<TrialRecord> loadTrial(std::int64_t trialId);

    // Submissions (feedback evaluations during an attempt).
    Result<std::int64_t> addSubmission(const SubmissionRecord& submission);
    Result<std::vector<SubmissionRecord>> submissions(std::int64_t trialId);
    /// Every submission of the store in trial id then index order, with the verdict fields the metrics read (rewards,
    /// stage, error, mismatch, compliance, device; no verdict JSON), handed to visit one at a time: visit sees one
    /// record refilled from row to row (it copies what it keeps).
    Status visitSubmissionSummaries(const std::function<void(const SubmissionRecord&)>& visit);

    // Skills and annotations.
    Result<std::optional<SkillRecord>> skillOfTrial(std::int64_t trialId);
    Result<std::int64_t> addAnnotation(const AnnotationRecord& annotation);
    Result<std::vector<AnnotationRecord>> annotations(std::int64_t skillId);
    Status deleteAnnotation(std::int64_t annotationId);

    // Paired re-timings of cells and of submission pairs, and device calibrations (DESIGN §5.5; implemented in
    // retiming_store.cpp).
    /// Stores a cell's re-timing as its live record and archives the cell's previous live record in the same
    /// transaction (nothing is overwritten). The result's JSON is kept verbatim (written from its fields when empty).
    Result<std::int64_t> insertRetiming(const RetimingRecord& record);
    /// Every live (not archived) re-timing, ordered by model, suite, problem, replicate, direction.
    Result<std::vector<RetimingRecord>> liveRetimings() const;
    /// Every re-timing, archived ones included, ordered by id.
    Result<std::vector<RetimingRecord>> allRetimings() const;
    /// Stores the re-timing of a trial's submission pair (before -> after) as the pair's live record, archiving the
    /// pair's previous live record in the same transaction.
    Result<std::int64_t> insertTransitionRetiming(const TransitionRetimingRecord& record);
    /// Every live re-timing of a submission pair, ordered by model, suite, problem, replicate, arm and indices.
    Result<std::vector<TransitionRetimingRecord>> liveTransitionRetimings() const;
    /// Every re-timing of a submission pair, archived ones included, ordered by id.
    Result<std::vector<TransitionRetimingRecord>> allTransitionRetimings() const;
    /// Stores a calibration as the live one of its device and grader fingerprint, archiving the previous one.
    Result<std::int64_t> insertCalibration(const CalibrationRecord& record);
    /// Every live calibration, newest first.
    Result<std::vector<CalibrationRecord>> liveCalibrations() const;

    // Regradings: our verdicts on stored submissions graded again (`mkb regrade`; implemented in regrading_store.cpp).
    /// Files one. A second regrading of one submission under the same boundary, grader and problem fingerprints is
    /// refused by the schema (one per key): callers skip those they find in regradings().
    Result<std::int64_t> insertRegrading(const RegradingRecord& record);
    /// Every regrading with its full verdict, ordered by submission then id; the kernels graded only withKernels.
    Result<std::vector<RegradingRecord>> regradings(bool withKernels = false);

    // Housekeeping.
    Result<StoreInfo> info();
    /// PRAGMA integrity_check plus a foreign key check; returns the problems found (empty when healthy).
    Result<std::vector<std::string>> integrityCheck();

    struct Impl;

private:
    explicit Store(std::unique_ptr<Impl> impl);
    Status writeTrialOutcome(std::int64_t trialId, const TrialOutcome& outcome, bool historyImport);
    Result<std::vector<TrialRecord>> loadLeanTrials(const TrialFilter& filter, TrialDetail detail,
                                                    const MetricColumns& columns);
    std::unique_ptr<Impl> impl_;
};

} // namespace mkb
