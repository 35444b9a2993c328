// The store's schema history (DESIGN §9): each step brings the file one version forward inside one transaction.
#include "core/store/migrations.h"

#include <sqlite3.h>

namespace mkb::store {
namespace {

constexpr int kApplicationId = 0x4D4B4257; // 'MKBW'; Store::kApplicationId repeats it for readers of store.h

// The verdict columns as first shipped (version 1). Frozen: a later change is a new migration step.
const char* const kVerdictColumnsV1 = R"(
    imported INTEGER NOT NULL CHECK (imported IN (0, 1)),
    correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
    passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
    speedup REAL NOT NULL,
    stage TEXT NOT NULL,
    infrastructure_error INTEGER NOT NULL,
    timed_out INTEGER NOT NULL,
    error TEXT NOT NULL,
    correct_draws INTEGER NOT NULL,
    total_draws INTEGER NOT NULL,
    mismatch TEXT NOT NULL,
    compliant INTEGER NOT NULL,
    compliance_rule TEXT NOT NULL,
    kernel_median_ms REAL,
    eager_median_ms REAL,
    kernel_iqr_ms REAL,
    throttled INTEGER NOT NULL,
    outliers_correct INTEGER,
    quant_cosine REAL,
    quant_relative_l1 REAL,
    quant_rmse REAL,
    quant_passed INTEGER,
    roofline_bytes REAL,
    roofline_flops REAL,
    roofline_gbps REAL,
    roofline_tflops REAL,
    roofline_iou REAL,
    roofline_mfu REAL,
    eval_seconds REAL NOT NULL,
    device_name TEXT NOT NULL DEFAULT '',
    verdict_json TEXT NOT NULL)";

std::string version1() {
    return std::string(R"(
CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    uuid TEXT NOT NULL UNIQUE,
    compute_capability TEXT NOT NULL DEFAULT '',
    peaks_json TEXT NOT NULL DEFAULT '{}',
    probed_at TEXT NOT NULL
);
CREATE TABLE models (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    driver TEXT NOT NULL DEFAULT '',
    settings_json TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE TABLE problems (
    id INTEGER PRIMARY KEY,
    suite TEXT NOT NULL,
    number INTEGER NOT NULL,
    slug TEXT NOT NULL,
    family TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL DEFAULT '',
    tags_json TEXT NOT NULL DEFAULT '[]',
    meta_json TEXT NOT NULL DEFAULT '{}',
    source TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    UNIQUE (suite, number, fingerprint)
);
CREATE TABLE invocations (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    command_line TEXT NOT NULL DEFAULT '',
    settings_json TEXT NOT NULL DEFAULT '{}',
    grader_fingerprint TEXT NOT NULL DEFAULT '',
    pid INTEGER NOT NULL DEFAULT 0,
    finished_at TEXT
);
CREATE TABLE trials (
    id INTEGER PRIMARY KEY,
    model_id INTEGER NOT NULL REFERENCES models(id),
    suite TEXT NOT NULL,
    problem_number INTEGER NOT NULL,
    problem_slug TEXT NOT NULL DEFAULT '',
    family TEXT NOT NULL DEFAULT '',
    problem_id INTEGER REFERENCES problems(id),
    replicate INTEGER NOT NULL CHECK (replicate >= 1),
    arm TEXT NOT NULL,
    dsl TEXT NOT NULL,
    coordinate TEXT NOT NULL,
    source_trial_id INTEGER REFERENCES trials(id),
    status TEXT NOT NULL
        CHECK (status IN ('running', 'finished', 'skipped', 'infrastructure_error', 'interrupted')),
    error TEXT NOT NULL DEFAULT '',
    skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)),
    timed_out INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    archived_at TEXT,
    input_tokens INTEGER,
    cache_tokens INTEGER,
    output_tokens INTEGER,
    cost_usd REAL,
    agent_seconds REAL,
    problem_fingerprint TEXT NOT NULL DEFAULT '',
    grader_fingerprint TEXT NOT NULL DEFAULT '',
    source_skill_sha256 TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    finished_at TEXT,
    invocation_id INTEGER REFERENCES invocations(id)
);
-- One live trial per cell slot; archived (redone) trials stay beside it forever. Also the lookup index for
-- live trials by (model, problem number, replicate, arm).
CREATE UNIQUE INDEX trials_one_live ON trials (model_id, suite, problem_number, replicate, arm) WHERE archived = 0;
CREATE INDEX trials_by_source ON trials (source_trial_id) WHERE source_trial_id IS NOT NULL;
CREATE INDEX trials_by_invocation ON trials (invocation_id) WHERE invocation_id IS NOT NULL;
CREATE TABLE submissions (
    id INTEGER PRIMARY KEY,
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    idx INTEGER NOT NULL CHECK (idx >= 0),
    kernel_source TEXT NOT NULL,
    submission_eval_seconds REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,)") +
           kVerdictColumnsV1 + R"();
-- Also the index of submissions by trial.
CREATE UNIQUE INDEX submissions_by_trial ON submissions (trial_id, idx);
CREATE TABLE final_verdicts (
    trial_id INTEGER PRIMARY KEY REFERENCES trials(id),
    recorded_at TEXT NOT NULL,)" +
           kVerdictColumnsV1 + R"();
CREATE TABLE skills (
    id INTEGER PRIMARY KEY,
    trial_id INTEGER NOT NULL UNIQUE REFERENCES trials(id),
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
);
)";
}

const char* const kVersion2 = R"(
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY,
    skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
    range_start INTEGER NOT NULL CHECK (range_start >= 0),
    range_end INTEGER NOT NULL CHECK (range_end >= range_start),
    quoted_text TEXT NOT NULL DEFAULT '',
    tag TEXT NOT NULL CHECK (tag IN ('supported', 'unsupported', 'contradicted', 'other')),
    note TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX annotations_by_skill ON annotations (skill_id, range_start);
)";

// Imported trials remember what they came from, so importing the same record twice finds the first copy.
const char* const kVersion3 = R"(
ALTER TABLE trials ADD COLUMN origin TEXT NOT NULL DEFAULT '';
CREATE INDEX trials_by_origin ON trials (origin) WHERE origin != '';
)";

// Paired re-timings of cells (DESIGN §5.5) and per-device calibrations. A cell holds one live re-timing; a new one
// archives the old (nothing is overwritten). Kernel hashes, device and grader fingerprint decide staleness.
const char* const kVersion4 = R"(
CREATE TABLE retimings (
    id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    suite TEXT NOT NULL,
    problem_number INTEGER NOT NULL,
    replicate INTEGER NOT NULL CHECK (replicate >= 1),
    source_dsl TEXT NOT NULL,
    target_dsl TEXT NOT NULL,
    source_trial_id INTEGER REFERENCES trials(id),
    base_trial_id INTEGER REFERENCES trials(id),
    skill_trial_id INTEGER REFERENCES trials(id),
    device TEXT NOT NULL,
    device_name TEXT NOT NULL DEFAULT '',
    grader_fingerprint TEXT NOT NULL,
    source_sha256 TEXT NOT NULL DEFAULT '',
    base_sha256 TEXT NOT NULL DEFAULT '',
    skill_sha256 TEXT NOT NULL DEFAULT '',
    rounds INTEGER NOT NULL DEFAULT 0,
    stop TEXT NOT NULL DEFAULT '',
    result_json TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    archived_at TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX retimings_one_live ON retimings (model, suite, problem_number, replicate, source_dsl, target_dsl)
    WHERE archived = 0;
CREATE TABLE calibrations (
    id INTEGER PRIMARY KEY,
    device TEXT NOT NULL,
    device_name TEXT NOT NULL DEFAULT '',
    grader_fingerprint TEXT NOT NULL,
    selection TEXT NOT NULL DEFAULT '',
    methods_json TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    archived_at TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX calibrations_one_live ON calibrations (device_name, device, grader_fingerprint) WHERE archived = 0;
)";

// The grader's speedup CI and GPU-activity time as columns of both verdict tables, so loaded verdicts carry them;
// verdicts stored before keep them in their JSON, from which this step backfills (numbers only, else NULL).
std::string version5() {
    std::string sql;
    for (const char* table : {"submissions", "final_verdicts"}) {
        const std::string name = table;
        sql += "ALTER TABLE " + name + " ADD COLUMN speedup_ci_low REAL;\n";
        sql += "ALTER TABLE " + name + " ADD COLUMN speedup_ci_high REAL;\n";
        sql += "ALTER TABLE " + name + " ADD COLUMN gpu_median_ms REAL;\n";
        std::string sets;
        for (const char* column : {"speedup_ci_low", "speedup_ci_high", "gpu_median_ms"}) {
            const std::string path = std::string("'$.") + column + "'";
            sets += std::string(sets.empty() ? "" : ", ") + column + " = CASE WHEN json_type(verdict_json, " + path +
                    ") IN ('real', 'integer') THEN json_extract(verdict_json, " + path + ") END";
        }
        sql += "UPDATE " + name + " SET " + sets +
               " WHERE (instr(verdict_json, '\"speedup_ci_') > 0 OR instr(verdict_json, '\"gpu_median_ms\"') > 0)"
               " AND json_valid(verdict_json);\n";
    }
    return sql;
}

// The implementation boundary each verdict was graded under (DESIGN §5.2), a column of both verdict tables. Verdicts
// stored before were judged by the old full-size eager_compute rule, which is neither boundary: they become "legacy"
// unless their JSON names mkb or strict; imported MetaKernelBench results were graded under its own rule, "mkb".
std::string version6() {
    std::string sql;
    for (const char* table : {"submissions", "final_verdicts"}) {
        const std::string name = table;
        sql += "ALTER TABLE " + name + " ADD COLUMN boundary TEXT NOT NULL DEFAULT 'legacy';\n";
        sql += "UPDATE " + name +
               " SET boundary = json_extract(verdict_json, '$.boundary') WHERE instr(verdict_json, "
               "'\"boundary\"') > 0 AND json_valid(verdict_json) AND json_extract(verdict_json, '$.boundary') IN "
               "('mkb', 'strict');\n";
        sql += "UPDATE " + name +
               " SET boundary = 'mkb' WHERE trial_id IN (SELECT id FROM trials WHERE origin LIKE "
               "'mkb-import:%');\n";
    }
    return sql;
}

// The device each verdict was graded on ("cuda:1", "cpu:0"; DESIGN §11), a column of both verdict tables: a run over
// several devices records which one judged each kernel. Verdicts stored before keep "" (unknown).
const char* const kVersion7 = R"(
ALTER TABLE submissions ADD COLUMN device TEXT NOT NULL DEFAULT '';
ALTER TABLE final_verdicts ADD COLUMN device TEXT NOT NULL DEFAULT '';
)";

// Paired re-timings of a trial's consecutive submissions (before -> after; DESIGN §5.5): one live record per pair,
// a new one archives the old; the two kernels' hashes, the device and the grader fingerprint decide staleness.
const char* const kVersion9 = R"(
CREATE TABLE transition_retimings (
    id INTEGER PRIMARY KEY,
    trial_id INTEGER REFERENCES trials(id),
    model TEXT NOT NULL,
    suite TEXT NOT NULL,
    problem_number INTEGER NOT NULL,
    replicate INTEGER NOT NULL CHECK (replicate >= 1),
    arm TEXT NOT NULL,
    before_index INTEGER NOT NULL,
    after_index INTEGER NOT NULL CHECK (after_index > before_index),
    device TEXT NOT NULL,
    device_name TEXT NOT NULL DEFAULT '',
    grader_fingerprint TEXT NOT NULL,
    before_sha256 TEXT NOT NULL DEFAULT '',
    after_sha256 TEXT NOT NULL DEFAULT '',
    ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
    rounds INTEGER NOT NULL DEFAULT 0,
    stop TEXT NOT NULL DEFAULT '',
    result_json TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    archived_at TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX transition_retimings_one_live
    ON transition_retimings (model, suite, problem_number, replicate, arm, before_index, after_index)
    WHERE archived = 0;
)";

// Our grader's verdicts on stored submissions graded again (`mkb regrade`), beside the verdicts the submissions came
// with (an imported corpus's "kbx" ones): one row per submission, boundary, grader and problem, never replacing the
// submission's own verdict. The kernel graded is kept, since an imported round is adapted to our contract first.
std::string version8() {
    return std::string(R"(
CREATE TABLE regradings (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES submissions(id),
    grader_fingerprint TEXT NOT NULL,
    problem_fingerprint TEXT NOT NULL,
    kernel_sha256 TEXT NOT NULL,
    kernel_source TEXT NOT NULL,
    created_at TEXT NOT NULL,)") +
           kVerdictColumnsV1 + R"(,
    speedup_ci_low REAL,
    speedup_ci_high REAL,
    gpu_median_ms REAL,
    boundary TEXT NOT NULL DEFAULT 'legacy',
    device TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX regradings_once ON regradings (submission_id, boundary, grader_fingerprint, problem_fingerprint);
)";
}

Status exec(sqlite3* db, const std::string& sql, const std::string& what, const std::string& fileLabel) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : sqlite3_errmsg(db);
        sqlite3_free(message);
        return makeError("store " + fileLabel + ": " + what + " failed: " + text);
    }
    return Ok{};
}

/// PRAGMA user_version as the open transaction sees it (-1 when it cannot be read).
int versionUnderLock(sqlite3* db) {
    sqlite3_stmt* statement = nullptr;
    int version = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
        version = sqlite3_column_int(statement, 0);
    }
    sqlite3_finalize(statement);
    return version;
}

} // namespace

const std::vector<Migration>& migrations() {
    static const std::vector<Migration> steps = {
        {1, "devices, models, problems, invocations, trials, submissions, final verdicts, skills", version1()},
        {2, "skill annotations", kVersion2},
        {3, "trial origin (imported trials)", kVersion3},
        {4, "paired re-timings of cells and per-device calibrations", kVersion4},
        {5, "speedup CI and GPU median time columns of the verdicts", version5()},
        {6, "the implementation boundary of each verdict (mkb, strict, legacy)", version6()},
        {7, "the device each verdict was graded on", kVersion7},
        {8, "our verdicts on stored submissions graded again (mkb regrade)", version8()},
        {9, "paired re-timings of consecutive submissions (before -> after)", kVersion9},
    };
    return steps;
}

int latestVersion() {
    return migrations().back().version;
}

Status applyMigrations(sqlite3* db, int fromVersion, int toVersion, const std::string& fileLabel) {
    for (const Migration& step : migrations()) {
        if (step.version <= fromVersion || step.version > toVersion) {
            continue;
        }
        const std::string what = "migration to schema version " + std::to_string(step.version);
        if (Status begun = exec(db, "BEGIN IMMEDIATE", what, fileLabel); !begun) {
            return begun;
        }
        // Another process may have created or migrated the same file while this one waited for the write lock: the
        // version read under the lock decides, so two processes creating one store never both run a step.
        if (versionUnderLock(db) >= step.version) {
            if (Status released = exec(db, "COMMIT", what, fileLabel); !released) {
                return released;
            }
            continue;
        }
        const std::string sql = step.sql + "\nPRAGMA application_id = " + std::to_string(kApplicationId) +
                                ";\nPRAGMA user_version = " + std::to_string(step.version) + ";\n";
        Status applied = exec(db, sql, what, fileLabel);
        if (applied) {
            applied = exec(db, "COMMIT", what, fileLabel);
        }
        if (!applied) {
            sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
            return applied;
        }
    }
    return Ok{};
}

} // namespace mkb::store
