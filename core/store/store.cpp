// The project store's implementation: opening and recognising the file, migrations, and every query of store.h.
#include "core/store/store.h"

#include "core/store/bulk_memory.h"
#include "core/store/migrations.h"
#include "core/store/store_files.h"
#include "core/store/store_impl.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <system_error>
#include <thread>
#include <unordered_map>

namespace mkb {
namespace {

namespace fs = std::filesystem;

// Stores larger than this skip the full quick_check on open (it reads every page); `mkb db check` still runs it.
constexpr std::uintmax_t kQuickCheckOnOpenLimitBytes = 64ull * 1024 * 1024;
constexpr int kBusyTimeoutMs = 5000;

// The tables info() counts, in schema order.
const std::array<const char*, 11> kTables = {"devices",     "models",      "problems",       "invocations",
                                             "trials",      "submissions", "final_verdicts", "skills",
                                             "annotations", "retimings",   "calibrations"};

int verdictColumnCount() {
    return static_cast<int>(store::verdictColumns().size());
}

std::string joinedVerdictColumns(const std::string& prefix) {
    std::string text;
    for (const std::string& column : store::verdictColumns()) {
        text += (text.empty() ? "" : ", ") + prefix + column;
    }
    return text;
}

/// verdictColumns() without verdict_json (the last one), as a lean load reads them.
std::string joinedLeanVerdictColumns(const std::string& prefix) {
    std::string text;
    const std::vector<std::string>& columns = store::verdictColumns();
    for (std::size_t i = 0; i + 1 < columns.size(); ++i) {
        text += (text.empty() ? "" : ", ") + prefix + columns[i];
    }
    return text;
}

std::string placeholders(int count) {
    std::string text;
    for (int i = 0; i < count; ++i) {
        text += i == 0 ? "?" : ", ?";
    }
    return text;
}

/// Binds a verdict to verdictColumns() starting at parameter index first.
void bindVerdict(Statement& statement, int first, const Verdict& verdict) {
    int i = first;
    statement.bind(i++, verdict.imported);
    statement.bind(i++, verdict.correct);
    statement.bind(i++, verdict.passed);
    statement.bind(i++, verdict.speedupVsEager);
    statement.bind(i++, verdict.stage);
    statement.bind(i++, verdict.infrastructureError);
    statement.bind(i++, verdict.timedOut);
    statement.bind(i++, verdict.error);
    statement.bind(i++, verdict.correctDraws);
    statement.bind(i++, verdict.totalDraws);
    statement.bind(i++, verdict.mismatch);
    statement.bind(i++, verdict.compliant);
    statement.bind(i++, verdict.complianceRule);
    statement.bind(i++, verdict.kernelMedianMs);
    statement.bind(i++, verdict.eagerMedianMs);
    statement.bind(i++, verdict.kernelIqrMs);
    statement.bind(i++, verdict.throttled);
    statement.bind(i++, verdict.outliersCorrect);
    if (verdict.quant) {
        statement.bind(i++, verdict.quant->cosine);
        statement.bind(i++, verdict.quant->relativeL1);
        statement.bind(i++, verdict.quant->rmse);
        statement.bind(i++, verdict.quant->passed);
    } else {
        for (int k = 0; k < 4; ++k) {
            statement.bindNull(i++);
        }
    }
    if (verdict.roofline) {
        statement.bind(i++, verdict.roofline->bytes);
        statement.bind(i++, verdict.roofline->flops);
        statement.bind(i++, verdict.roofline->achievedGBps);
        statement.bind(i++, verdict.roofline->achievedTflops);
        statement.bind(i++, verdict.roofline->iou);
        statement.bind(i++, verdict.roofline->mfu);
    } else {
        for (int k = 0; k < 6; ++k) {
            statement.bindNull(i++);
        }
    }
    statement.bind(i++, verdict.evalSeconds);
    statement.bind(i++, verdict.deviceName);
    statement.bind(i++, verdict.speedupCiLow);
    statement.bind(i++, verdict.speedupCiHigh);
    statement.bind(i++, verdict.gpuMedianMs);
    statement.bind(i++, verdict.json);
}

/// Reads a verdict from verdictColumns() starting at result column first; without json the query leaves out the
/// last column (verdict_json).
Verdict readVerdict(const Statement& row, int first, bool withJson = true) {
    Verdict verdict;
    int i = first;
    verdict.imported = row.boolean(i++);
    verdict.correct = row.boolean(i++);
    verdict.passed = row.boolean(i++);
    verdict.speedupVsEager = row.real(i++);
    verdict.stage = row.text(i++);
    verdict.infrastructureError = row.boolean(i++);
    verdict.timedOut = row.boolean(i++);
    verdict.error = row.text(i++);
    verdict.correctDraws = row.integer(i++);
    verdict.totalDraws = row.integer(i++);
    verdict.mismatch = row.text(i++);
    verdict.compliant = row.boolean(i++);
    verdict.complianceRule = row.text(i++);
    verdict.kernelMedianMs = row.optionalReal(i++);
    verdict.eagerMedianMs = row.optionalReal(i++);
    verdict.kernelIqrMs = row.optionalReal(i++);
    verdict.throttled = row.boolean(i++);
    verdict.outliersCorrect = row.optionalBool(i++);
    if (!row.isNull(i)) {
        verdict.quant = QuantMetrics{row.real(i), row.real(i + 1), row.real(i + 2), row.boolean(i + 3)};
    }
    i += 4;
    if (!row.isNull(i)) {
        Roofline roofline;
        roofline.bytes = row.real(i);
        roofline.flops = row.real(i + 1);
        roofline.achievedGBps = row.optionalReal(i + 2);
        roofline.achievedTflops = row.optionalReal(i + 3);
        roofline.iou = row.optionalReal(i + 4);
        roofline.mfu = row.optionalReal(i + 5);
        verdict.roofline = roofline;
    }
    i += 6;
    verdict.evalSeconds = row.real(i++);
    verdict.deviceName = row.text(i++);
    verdict.speedupCiLow = row.optionalReal(i++);
    verdict.speedupCiHigh = row.optionalReal(i++);
    verdict.gpuMedianMs = row.optionalReal(i++);
    if (withJson) {
        verdict.json = row.text(i++);
    }
    return verdict;
}

std::string metaJson(const ProblemMeta& meta) {
    nlohmann::json json = nlohmann::json::object();
    if (meta.quant) {
        json["quant"] = {{"min_cosine", meta.quant->minCosine},
                         {"max_relative_l1", meta.quant->maxRelativeL1},
                         {"max_rmse", meta.quant->maxRmse}};
    }
    if (!meta.outliersJson.empty()) {
        json["outliers"] = meta.outliersJson; // kept as the text the catalog read
    }
    if (meta.flops) {
        json["flops"] = *meta.flops;
    }
    if (meta.bytes) {
        json["bytes"] = *meta.bytes;
    }
    return json.dump();
}

void readMetaJson(const std::string& tagsText, const std::string& metaText, ProblemMeta& meta) {
    const nlohmann::json tags = nlohmann::json::parse(tagsText, nullptr, false);
    if (tags.is_array()) {
        for (const auto& tag : tags) {
            if (tag.is_string()) {
                meta.tags.push_back(tag.get<std::string>());
            }
        }
    }
    const nlohmann::json json = nlohmann::json::parse(metaText, nullptr, false);
    if (!json.is_object()) {
        return;
    }
    if (json.contains("quant") && json["quant"].is_object()) {
        const auto& quant = json["quant"];
        meta.quant = QuantThresholds{quant.value("min_cosine", 0.95), quant.value("max_relative_l1", 0.05),
                                     quant.value("max_rmse", 0.1)};
    }
    if (json.contains("outliers") && json["outliers"].is_string()) {
        meta.outliersJson = json["outliers"].get<std::string>();
    }
    if (json.contains("flops") && json["flops"].is_number()) {
        meta.flops = json["flops"].get<double>();
    }
    if (json.contains("bytes") && json["bytes"].is_number()) {
        meta.bytes = json["bytes"].get<double>();
    }
}

const char* const kLeftUntouched = "; it was left untouched: move it aside, or name another store with --store";

struct Connection {
    sqlite3* db = nullptr;
    ~Connection() {
        if (db) {
            sqlite3_close_v2(db);
        }
    }
    sqlite3* release() {
        sqlite3* taken = db;
        db = nullptr;
        return taken;
    }
};

Result<std::int64_t> singleInt(sqlite3* db, const char* sql) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) {
        return makeError(sqlite3_errmsg(db));
    }
    std::int64_t value = 0;
    const int rc = sqlite3_step(raw);
    if (rc == SQLITE_ROW) {
        value = sqlite3_column_int64(raw, 0);
    } else if (rc != SQLITE_DONE) {
        std::string message = sqlite3_errmsg(db);
        sqlite3_finalize(raw);
        return makeError(message);
    }
    sqlite3_finalize(raw);
    return value;
}

/// PRAGMA quick_check(1): the first problem found, as one line; empty when the file is healthy.
std::string firstQuickCheckProblem(sqlite3* db) {
    sqlite3_stmt* raw = nullptr;
    std::string firstProblem;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &raw, nullptr) != SQLITE_OK) {
        firstProblem = sqlite3_errmsg(db);
    } else {
        const int rc = sqlite3_step(raw);
        if (rc == SQLITE_ROW) {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
            if (!text || std::string(text) != "ok") {
                firstProblem = text ? text : "unknown problem";
            }
        } else {
            firstProblem = sqlite3_errmsg(db);
        }
        sqlite3_finalize(raw);
    }
    for (char& c : firstProblem) {
        c = c == '\n' ? ' ' : c; // SQLite's report spans lines; errors are one line
    }
    return firstProblem;
}

/// PRAGMA journal_mode = WAL, waiting out another process that is switching the same new file at the same moment
/// (the switch needs the file to itself, and SQLite's busy handler does not cover it).
Result<std::string> switchToWal(sqlite3* db) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
        sqlite3_stmt* raw = nullptr;
        int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &raw, nullptr);
        std::string mode;
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(raw);
            if (rc == SQLITE_ROW) {
                mode = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
            }
        }
        sqlite3_finalize(raw);
        if (rc == SQLITE_ROW) {
            return mode;
        }
        if ((rc & 0xFF) != SQLITE_BUSY && (rc & 0xFF) != SQLITE_LOCKED) {
            return makeError(sqlite3_errmsg(db));
        }
        if (std::chrono::steady_clock::now() > deadline) {
            return makeError("another process kept the store busy for " + std::to_string(kBusyTimeoutMs / 1000) +
                             " s; try again");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

/// What inspecting a file found: an open connection, whether it is brand new, and its schema version.
struct Inspection {
    std::unique_ptr<Connection> connection;
    bool fresh = false; // no schema yet: created now, a 0-byte file, or an SQLite file with no tables
    int version = 0;
};

/// Looks at an existing file before SQLite opens it: its header and, while nobody is writing it, its length. A file
/// in use by a live connection (another process, this one, or a rollback-mode writer) is left to SQLite's locking:
/// a checkpoint in progress leaves the file shorter than its header says until it ends, and that is no damage. A
/// failing look is repeated, so a writer that started or finished between two looks is not taken for damage.
Result<store::Holders> examineExisting(const fs::path& path, std::uintmax_t& size) {
    constexpr int kLooks = 5;
    for (int look = 1;; ++look) {
        const store::Holders holders = store::holdersOf(path);
        std::error_code code;
        size = fs::file_size(path, code);
        if (code) {
            return makeError("store " + quoted(path) + " cannot be read: " + code.message());
        }
        if (size == 0 || holders.live()) {
            return holders;
        }
        Status header = store::checkHeader(path, size, /*checkLength=*/!holders.walMayHoldFrames());
        if (header) {
            return holders;
        }
        if (look == kLooks) {
            return header.error();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20 * look));
    }
}

/// Refuses a write-ahead log beside the store that no live connection holds when it is certainly another database's:
/// SQLite would apply it and overwrite the store. A log that may be the store's own is normal (a writer was killed,
/// or two connections closed at the same moment and neither could checkpoint): a writer applies it, a read-only open
/// reads it without applying, checkpointing or deleting it.
Status checkUnheldWal(const fs::path& path) {
    fs::path walPath = store::sqliteFilePath(path);
    walPath += "-wal";
    const store::WalSummary wal = store::summariseWal(walPath);
    if (wal.committedFrames == 0) {
        return Ok{}; // nothing SQLite would apply
    }
    std::string foreign;
    if (const auto fields = store::headerFields(path); fields && fields->pageSize != wal.pageSize) {
        foreign =
            "its pages are " + std::to_string(wal.pageSize) + " bytes, the store's " + std::to_string(fields->pageSize);
    } else if (wal.applicationId && *wal.applicationId != static_cast<std::uint32_t>(Store::kApplicationId)) {
        char id[16];
        std::snprintf(id, sizeof id, "0x%08X", *wal.applicationId);
        foreign = std::string("it holds the first page of another application's database, application_id ") + id;
    }
    if (!foreign.empty()) {
        return makeError("store " + quoted(path) + ": the write-ahead log " + quoted(walPath) +
                         " beside it is not this store's (" + foreign +
                         "), and applying it would destroy the store; both were left untouched: move " +
                         quoted(walPath) + " aside, then try again");
    }
    return Ok{};
}

/// Opens path and checks it is a workbench store this build can use, without writing anything to it.
Result<Inspection> inspect(const fs::path& path, OpenMode mode, bool readOnly) {
    if (Status length = store::checkStorePathLength(path); !length) {
        return length.error();
    }
    std::error_code code;
    const bool exists = fs::exists(path, code);
    if (code && code != std::errc::no_such_file_or_directory) {
        return makeError("store " + quoted(path) + " cannot be looked at: " + code.message());
    }
    if (!exists) {
        if (mode != OpenMode::CreateIfMissing || readOnly) {
            return makeError("store " + quoted(path) + " does not exist (create it with `mkb db init --store " +
                             quoted(path) + "`)");
        }
        if (path.has_parent_path()) {
            fs::create_directories(path.parent_path(), code);
            if (code) {
                return makeError("store " + quoted(path) + ": cannot create its folder " + quoted(path.parent_path()) +
                                 ": " + code.message());
            }
        }
    } else if (fs::is_directory(path, code)) {
        return makeError("store " + quoted(path) + " is a folder, not a store file (name a .sqlite file instead)");
    }
    std::uintmax_t size = 0;
    if (exists) {
        Result<store::Holders> holders = examineExisting(path, size);
        if (!holders) {
            return holders.error();
        }
        if (!holders->live() && holders->walMayHoldFrames()) {
            if (Status wal = checkUnheldWal(path); !wal) {
                return wal.error();
            }
        }
    }

    Inspection inspection;
    inspection.connection = std::make_unique<Connection>();
    int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path.c_str(), &inspection.connection->db, flags, nullptr) != SQLITE_OK) {
        const std::string message =
            inspection.connection->db ? sqlite3_errmsg(inspection.connection->db) : "out of memory";
        return makeError("store " + quoted(path) + " cannot be opened: " + message);
    }
    sqlite3* db = inspection.connection->db;
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    if (!exists || size == 0) {
        inspection.fresh = true;
        return inspection;
    }

    const auto corrupt = [&](const std::string& detail) {
        return makeError("store " + quoted(path) + " is corrupt or not a database (" + detail + ")" + kLeftUntouched);
    };
    Result<std::int64_t> tables = singleInt(db, "SELECT count(*) FROM sqlite_schema");
    if (!tables) {
        return corrupt(tables.error().message);
    }
    Result<std::int64_t> applicationId = singleInt(db, "PRAGMA application_id");
    Result<std::int64_t> userVersion = singleInt(db, "PRAGMA user_version");
    if (!applicationId || !userVersion) {
        return corrupt(!applicationId ? applicationId.error().message : userVersion.error().message);
    }
    if (*tables == 0 && *applicationId == 0 && *userVersion == 0) {
        inspection.fresh = true;
        return inspection;
    }
    if (*applicationId != Store::kApplicationId) {
        char id[16];
        std::snprintf(id, sizeof id, "0x%08llX", static_cast<unsigned long long>(*applicationId & 0xFFFFFFFF));
        return makeError("store " + quoted(path) + " is an SQLite database of another application (application_id " +
                         id + "), not a workbench store" + kLeftUntouched);
    }
    const int latest = store::latestVersion();
    if (*userVersion > latest) {
        return makeError("store " + quoted(path) + " has schema version " + std::to_string(*userVersion) +
                         ", newer than this build's version " + std::to_string(latest) +
                         "; it was left untouched: open it with a newer mkb");
    }
    if (readOnly && mode == OpenMode::ReadExisting && *userVersion < latest) {
        return makeError("store " + quoted(path) + " has schema version " + std::to_string(*userVersion) +
                         ", older than this build's " + std::to_string(latest) +
                         "; a read-only open does not migrate it: run `mkb db migrate --store " + quoted(path) +
                         "` once, then try again");
    }
    // A reader skips the page check (reports and exports stay cheap); writers and the store's own inspection
    // (`mkb db info`, `db check`, `db migrate`) run it.
    const bool checkPages = mode != OpenMode::ReadExisting;
    if (checkPages && size <= kQuickCheckOnOpenLimitBytes) {
        if (const std::string firstProblem = firstQuickCheckProblem(db); !firstProblem.empty()) {
            return corrupt("integrity check: " + firstProblem);
        }
    }
    inspection.version = static_cast<int>(*userVersion);
    return inspection;
}

} // namespace

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    store::noteOpenStore(this, impl_->path);
}
Store::~Store() {
    store::forgetOpenStore(this);
}

int Store::latestSchemaVersion() {
    return store::latestVersion();
}

Result<int> Store::fileSchemaVersion(const fs::path& path) {
    Result<Inspection> inspection = inspect(path, OpenMode::Inspect, /*readOnly=*/true);
    if (!inspection) {
        return inspection.error();
    }
    return inspection->version;
}

Result<Store::LogRecovery> Store::recoverWriteAheadLog(const fs::path& path) {
    if (Status length = store::checkStorePathLength(path); !length) {
        return length.error();
    }
    std::error_code code;
    if (!fs::is_regular_file(path, code)) {
        return makeError("store " + quoted(path) + " does not exist or is not a file; name the store whose " +
                         "write-ahead log to apply");
    }
    const store::Holders holders = store::holdersOf(path);
    if (holders.live()) {
        return makeError("store " + quoted(path) + " is open in a running process, so its write-ahead log is in use " +
                         "and not left over; nothing was changed: let that process finish, then try again");
    }
    fs::path walPath = store::sqliteFilePath(path);
    walPath += "-wal";
    const store::WalSummary wal = store::summariseWal(walPath);
    if (!holders.walMayHoldFrames() || wal.committedFrames == 0) {
        return LogRecovery{};
    }
    if (Status usable = checkUnheldWal(path); !usable) {
        return usable.error();
    }
    fs::path copy = path;
    copy += ".before-recover";
    for (int n = 2; fs::exists(copy, code); ++n) {
        copy = path;
        copy += ".before-recover-" + std::to_string(n);
    }
    fs::path walCopy = copy;
    walCopy += "-wal";
    if (!fs::copy_file(path, copy, code) || !fs::copy_file(walPath, walCopy, code)) {
        const std::string why = code.message();
        fs::remove(copy, code);
        fs::remove(walCopy, code);
        return makeError("store " + quoted(path) + ": cannot copy it to " + quoted(copy) + " before applying its " +
                         "write-ahead log (" + why + "); nothing was changed: free some space and try again");
    }
    {
        // A writer's open lets SQLite replay the log; its close, the last connection's, checkpoints it into the store.
        Result<std::unique_ptr<Store>> opened = open(path, OpenMode::MustExist);
        if (!opened) {
            return makeError(opened.error().message + " (the store and its log as they were are in " + quoted(copy) +
                             " and " + quoted(walCopy) + ")");
        }
        // Copied in now, not only at close: a reader that opens meanwhile would keep the close from checkpointing.
        int logFrames = 0;
        int copiedFrames = 0;
        const int rc = sqlite3_wal_checkpoint_v2((*opened)->handle(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, &logFrames,
                                                 &copiedFrames);
        if (rc != SQLITE_OK || copiedFrames < logFrames) {
            return makeError("store " + quoted(path) + ": its write-ahead log was replayed but not yet copied into " +
                             "the file (" + sqlite3_errmsg((*opened)->handle()) + "; another process is reading " +
                             "it); the next writer finishes the copy (the store as it was is in " + quoted(copy) + ")");
        }
    }
    return LogRecovery{wal.committedFrames, copy};
}

Result<std::unique_ptr<Store>> Store::open(const fs::path& path, OpenMode mode) {
    // Readers open read-only: they never migrate, checkpoint or delete a write-ahead log.
    const bool readOnly = mode == OpenMode::ReadExisting || mode == OpenMode::Inspect;
    Result<Inspection> inspection = inspect(path, mode, readOnly);
    if (!inspection) {
        return inspection.error();
    }
    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->db = inspection->connection->release();
    impl->migratedFrom = inspection->version;

    // Foreign keys must be switched on outside a transaction; WAL lets readers (the GUI) and one writer share it.
    if (Status pragmas = impl->exec("PRAGMA foreign_keys = ON", "switching foreign keys on"); !pragmas) {
        return pragmas.error();
    }
    Result<std::int64_t> foreignKeys = singleInt(impl->db, "PRAGMA foreign_keys");
    if (!foreignKeys || *foreignKeys != 1) {
        return impl->failure("switching foreign keys on", "this SQLite build does not support them");
    }
    if (readOnly) {
        if (inspection->fresh) {
            return makeError("store " + quoted(path) + " holds no workbench schema yet (an empty file); `mkb db init " +
                             "--store " + quoted(path) + "` initialises it");
        }
        return std::unique_ptr<Store>(new Store(std::move(impl)));
    }
    Result<std::string> journalMode = switchToWal(impl->db);
    if (!journalMode) {
        return impl->failure("switching to WAL journal mode", journalMode.error().message);
    }
    if (*journalMode != "wal") {
        return impl->failure("switching to WAL journal mode",
                             "SQLite answered '" + *journalMode + "' (is the store on a network file system?)");
    }
    if (Status pragmas = impl->exec("PRAGMA synchronous = NORMAL", "setting synchronous mode"); !pragmas) {
        return pragmas.error();
    }
    if (inspection->version < store::latestVersion()) {
        if (Status migrated =
                store::applyMigrations(impl->db, inspection->version, store::latestVersion(), quoted(path));
            !migrated) {
            return migrated.error();
        }
    }
    return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const fs::path& Store::path() const {
    return impl_->path;
}
int Store::migratedFromVersion() const {
    return impl_->migratedFrom;
}
sqlite3* Store::handle() {
    return impl_->db;
}

Status Store::transaction(const std::function<Status()>& work) {
    const int depth = impl_->transactionDepth;
    const std::string savepoint = "mkb_nested_" + std::to_string(depth);
    if (Status begun = impl_->exec(depth == 0 ? "BEGIN IMMEDIATE" : "SAVEPOINT " + savepoint, "starting a transaction");
        !begun) {
        return begun;
    }
    const auto rollback = [&] {
        if (depth == 0) {
            sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
        } else {
            const std::string sql = "ROLLBACK TO " + savepoint + "; RELEASE " + savepoint;
            sqlite3_exec(impl_->db, sql.c_str(), nullptr, nullptr, nullptr);
        }
    };
    ++impl_->transactionDepth;
    Status result = Ok{};
    try {
        result = work();
    } catch (...) {
        --impl_->transactionDepth;
        rollback();
        throw;
    }
    --impl_->transactionDepth;
    if (!result) {
        rollback();
        return result;
    }
    if (Status committed = impl_->exec(depth == 0 ? "COMMIT" : "RELEASE " + savepoint, "committing a transaction");
        !committed) {
        rollback();
        return committed;
    }
    return Ok{};
}

// ---- problems -------------------------------------------------------------------------------------------------

Result<std::int64_t> Store::upsertProblem(const Problem& problem) {
    const std::string operation = "saving problem " + problem.suite + "/" + problem.code();
    Result<sqlite3_stmt*> prepared = impl_->prepare(
        "INSERT INTO problems (suite, number, slug, family, title, path, tags_json, meta_json, source, fingerprint, "
        "first_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (suite, number, fingerprint) DO UPDATE SET slug = excluded.slug, family = excluded.family, "
        "title = excluded.title, path = excluded.path, tags_json = excluded.tags_json, meta_json = excluded.meta_json "
        "RETURNING id",
        operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, problem.suite);
    statement.bind(2, problem.number);
    statement.bind(3, problem.slug);
    statement.bind(4, problem.family);
    statement.bind(5, problem.title);
    statement.bind(6, problem.path.string());
    statement.bind(7, nlohmann::json(problem.meta.tags).dump());
    statement.bind(8, metaJson(problem.meta));
    statement.bind(9, problem.source);
    statement.bind(10, problem.fingerprint);
    statement.bind(11, nowUtc());
    if (statement.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Result<std::vector<Problem>> Store::problems() {
    const std::string operation = "loading problems";
    Result<sqlite3_stmt*> prepared = impl_->prepare("SELECT suite, number, slug, family, title, path, tags_json, "
                                                    "meta_json, source, fingerprint FROM problems "
                                                    "ORDER BY suite, number, id",
                                                    operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    std::vector<Problem> problems;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        Problem problem;
        problem.suite = row.text(0);
        problem.number = row.integer(1);
        problem.slug = row.text(2);
        problem.family = row.text(3);
        problem.title = row.text(4);
        problem.path = row.text(5);
        readMetaJson(row.text(6), row.text(7), problem.meta);
        problem.source = row.text(8);
        problem.fingerprint = row.text(9);
        problems.push_back(std::move(problem));
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return problems;
}

// ---- devices and models ---------------------------------------------------------------------------------------

Result<std::int64_t> Store::saveDevice(const DeviceRecord& device) {
    const std::string operation = "saving device " + device.uuid;
    if (device.uuid.empty()) {
        return impl_->failure("saving device '" + device.name + "'", "the device has no UUID");
    }
    Result<sqlite3_stmt*> prepared = impl_->prepare(
        "INSERT INTO devices (name, uuid, compute_capability, peaks_json, probed_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, compute_capability = excluded.compute_capability, "
        "peaks_json = excluded.peaks_json, probed_at = excluded.probed_at RETURNING id",
        operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, device.name);
    statement.bind(2, device.uuid);
    statement.bind(3, device.computeCapability);
    statement.bind(4, device.peaksJson.empty() ? std::string("{}") : device.peaksJson);
    statement.bind(5, orNow(device.probedAt));
    if (statement.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Result<std::vector<DeviceRecord>> Store::devices() {
    const std::string operation = "loading devices";
    Result<sqlite3_stmt*> prepared = impl_->prepare(
        "SELECT id, name, uuid, compute_capability, peaks_json, probed_at FROM devices ORDER BY id", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    std::vector<DeviceRecord> devices;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        devices.push_back({row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4), row.text(5)});
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return devices;
}

Result<std::int64_t> Store::ensureModel(const std::string& name, const std::string& driver,
                                        const std::string& settingsJson) {
    const std::string operation = "saving model '" + name + "'";
    if (name.empty()) {
        return impl_->failure("saving a model", "the model has no name");
    }
    Result<sqlite3_stmt*> prepared = impl_->prepare(
        "INSERT INTO models (name, driver, settings_json, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET driver = excluded.driver, settings_json = excluded.settings_json "
        "RETURNING id",
        operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, name);
    statement.bind(2, driver);
    statement.bind(3, settingsJson.empty() ? std::string("{}") : settingsJson);
    statement.bind(4, nowUtc());
    if (statement.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Result<std::vector<ModelRecord>> Store::models() {
    const std::string operation = "loading models";
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT id, name, driver, settings_json, created_at FROM models ORDER BY id", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    std::vector<ModelRecord> models;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        models.push_back({row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4)});
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return models;
}

// ---- invocations ----------------------------------------------------------------------------------------------

Result<std::int64_t> Store::beginInvocation(const InvocationRecord& invocation) {
    const std::string operation = "recording an invocation";
    Result<sqlite3_stmt*> prepared = impl_->prepare(
        "INSERT INTO invocations (started_at, command_line, settings_json, grader_fingerprint, pid, finished_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, orNow(invocation.startedAt));
    statement.bind(2, invocation.commandLine);
    statement.bind(3, invocation.settingsJson.empty() ? std::string("{}") : invocation.settingsJson);
    statement.bind(4, invocation.graderFingerprint);
    statement.bind(5, invocation.pid);
    statement.bindTextOrNull(6, invocation.finishedAt);
    if (statement.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Status Store::finishInvocation(std::int64_t invocationId, const std::string& finishedAt) {
    const std::string operation = "finishing invocation #" + std::to_string(invocationId);
    Result<sqlite3_stmt*> prepared = impl_->prepare("UPDATE invocations SET finished_at = ? WHERE id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, orNow(finishedAt));
    statement.bind(2, invocationId);
    if (Status done = impl_->run(statement, operation); !done) {
        return done;
    }
    if (sqlite3_changes(impl_->db) == 0) {
        return impl_->failure(operation, "no such invocation");
    }
    return Ok{};
}

Result<std::vector<InvocationRecord>> Store::invocations() {
    const std::string operation = "loading invocations";
    Result<sqlite3_stmt*> prepared = impl_->prepare("SELECT id, started_at, command_line, settings_json, "
                                                    "grader_fingerprint, pid, finished_at FROM invocations ORDER BY id",
                                                    operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    std::vector<InvocationRecord> invocations;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        invocations.push_back(
            {row.int64(0), row.text(1), row.text(2), row.text(3), row.text(4), row.int64(5), row.text(6)});
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return invocations;
}

// ---- trials ---------------------------------------------------------------------------------------------------

Result<std::int64_t> Store::insertTrial(const TrialRecord& trial) {
    const std::string operation = "inserting trial " + trial.coordinate + " of model '" + trial.model + "'";
    if (trial.model.empty()) {
        return impl_->failure(operation, "the trial names no model");
    }
    std::int64_t trialId = 0;
    Status inserted = transaction([&]() -> Status {
        Result<sqlite3_stmt*> ensure = impl_->prepare(
            "INSERT INTO models (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", operation);
        if (!ensure) {
            return ensure.error();
        }
        {
            Statement statement(*ensure);
            statement.bind(1, trial.model);
            statement.bind(2, nowUtc());
            if (Status done = impl_->run(statement, operation); !done) {
                return done;
            }
        }
        Result<sqlite3_stmt*> prepared = impl_->prepare(
            "INSERT INTO trials (model_id, suite, problem_number, problem_slug, family, problem_id, replicate, arm, "
            "dsl, coordinate, source_trial_id, status, error, skipped, timed_out, archived, archived_at, "
            "input_tokens, cache_tokens, output_tokens, cost_usd, agent_seconds, problem_fingerprint, "
            "grader_fingerprint, source_skill_sha256, started_at, finished_at, invocation_id, origin) "
            "VALUES ((SELECT id FROM models WHERE name = ?1), ?2, ?3, ?4, ?5, "
            "(SELECT id FROM problems WHERE suite = ?2 AND number = ?3 AND fingerprint = ?22), "
            "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, "
            "?28) "
            "RETURNING id",
            operation);
        if (!prepared) {
            return prepared.error();
        }
        Statement statement(*prepared);
        statement.bind(1, trial.model);
        statement.bind(2, trial.suite);
        statement.bind(3, trial.problemNumber);
        statement.bind(4, trial.problemSlug);
        statement.bind(5, trial.family);
        statement.bind(6, trial.replicate);
        statement.bind(7, trial.arm);
        statement.bind(8, trial.dsl);
        statement.bind(9, trial.coordinate);
        statement.bind(10, trial.sourceTrialId);
        statement.bind(11, std::string(toString(trial.status)));
        statement.bind(12, trial.error);
        statement.bind(13, trial.skipped);
        statement.bind(14, trial.timedOut);
        statement.bind(15, trial.archived);
        statement.bindTextOrNull(16, trial.archived ? orNow(trial.archivedAt) : std::string());
        statement.bind(17, trial.usage.inputTokens);
        statement.bind(18, trial.usage.cacheTokens);
        statement.bind(19, trial.usage.outputTokens);
        statement.bind(20, trial.usage.costUsd);
        statement.bind(21, trial.usage.agentSeconds);
        statement.bind(22, trial.problemFingerprint);
        statement.bind(23, trial.graderFingerprint);
        statement.bind(24, trial.sourceSkillSha256);
        statement.bind(25, orNow(trial.startedAt));
        statement.bindTextOrNull(26, trial.finishedAt);
        if (trial.invocationId != 0) {
            statement.bind(27, trial.invocationId);
        } else {
            statement.bindNull(27);
        }
        statement.bind(28, trial.origin);
        if (statement.step() != SQLITE_ROW) {
            if (sqlite3_extended_errcode(impl_->db) == SQLITE_CONSTRAINT_UNIQUE) {
                return impl_->failure(operation, "a live trial already holds model '" + trial.model + "', problem " +
                                                     trial.suite + "/" + std::to_string(trial.problemNumber) +
                                                     ", replicate " + std::to_string(trial.replicate) + ", arm " +
                                                     trial.arm + " (archive it first)");
            }
            return impl_->failure(operation);
        }
        trialId = statement.int64(0);
        return Ok{};
    });
    if (!inserted) {
        return inserted.error();
    }
    return trialId;
}

Status Store::updateTrialStatus(std::int64_t trialId, TrialStatus status, const std::string& error) {
    const std::string operation = "updating the status of trial #" + std::to_string(trialId);
    Result<sqlite3_stmt*> prepared = impl_->prepare("UPDATE trials SET status = ?, error = ? WHERE id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, std::string(toString(status)));
    statement.bind(2, error);
    statement.bind(3, trialId);
    if (Status done = impl_->run(statement, operation); !done) {
        return done;
    }
    if (sqlite3_changes(impl_->db) == 0) {
        return impl_->failure(operation, "no such trial");
    }
    return Ok{};
}

Status Store::finishTrial(std::int64_t trialId, const TrialOutcome& outcome) {
    return writeTrialOutcome(trialId, outcome, /*historyImport=*/false);
}

Result<std::int64_t> Store::insertFinishedTrial(const TrialRecord& trial, const TrialOutcome& outcome) {
    std::int64_t trialId = 0;
    Status written = transaction([&]() -> Status {
        Result<std::int64_t> inserted = insertTrial(trial);
        if (!inserted) {
            return inserted.error();
        }
        trialId = *inserted;
        return writeTrialOutcome(trialId, outcome, /*historyImport=*/true);
    });
    if (!written) {
        return written.error();
    }
    return trialId;
}

Status Store::writeTrialOutcome(std::int64_t trialId, const TrialOutcome& outcome, bool historyImport) {
    const std::string operation = "finishing trial #" + std::to_string(trialId);
    return transaction([&]() -> Status {
        Result<sqlite3_stmt*> check = impl_->prepare(
            "SELECT archived, EXISTS (SELECT 1 FROM final_verdicts WHERE trial_id = ?1) FROM trials WHERE id = ?1",
            operation);
        if (!check) {
            return check.error();
        }
        {
            Statement row(*check);
            row.bind(1, trialId);
            const int rc = row.step();
            if (rc == SQLITE_DONE) {
                return impl_->failure(operation, "no such trial");
            }
            if (rc != SQLITE_ROW) {
                return impl_->failure(operation);
            }
            if (row.boolean(0) && !historyImport) {
                return impl_->failure(operation, "the trial is archived; insert a new trial instead");
            }
            if (row.boolean(1)) {
                return impl_->failure(operation, "the trial already holds a final verdict; archive it and insert a "
                                                 "new trial to redo it");
            }
        }
        Result<sqlite3_stmt*> update = impl_->prepare(
            "UPDATE trials SET status = ?, error = ?, timed_out = ?, skipped = ?, input_tokens = ?, cache_tokens = ?, "
            "output_tokens = ?, cost_usd = ?, agent_seconds = ?, finished_at = ? WHERE id = ?",
            operation);
        if (!update) {
            return update.error();
        }
        const std::string finishedAt = orNow(outcome.finishedAt);
        {
            Statement statement(*update);
            statement.bind(1, std::string(toString(outcome.status)));
            statement.bind(2, outcome.error);
            statement.bind(3, outcome.timedOut);
            statement.bind(4, outcome.skipped);
            statement.bind(5, outcome.usage.inputTokens);
            statement.bind(6, outcome.usage.cacheTokens);
            statement.bind(7, outcome.usage.outputTokens);
            statement.bind(8, outcome.usage.costUsd);
            statement.bind(9, outcome.usage.agentSeconds);
            statement.bind(10, finishedAt);
            statement.bind(11, trialId);
            if (Status done = impl_->run(statement, operation); !done) {
                return done;
            }
        }
        if (outcome.verdict) {
            const int columns = verdictColumnCount();
            Result<sqlite3_stmt*> insert =
                impl_->prepare("INSERT INTO final_verdicts (trial_id, recorded_at, " + joinedVerdictColumns("") +
                                   ") VALUES (?, ?, " + placeholders(columns) + ")",
                               operation);
            if (!insert) {
                return insert.error();
            }
            Statement statement(*insert);
            statement.bind(1, trialId);
            statement.bind(2, finishedAt);
            bindVerdict(statement, 3, *outcome.verdict);
            if (Status done = impl_->run(statement, operation + " (its final verdict)"); !done) {
                return done;
            }
        }
        if (outcome.skillText) {
            Result<sqlite3_stmt*> insert = impl_->prepare(
                "INSERT INTO skills (trial_id, text, sha256, created_at) VALUES (?, ?, ?, ?)", operation);
            if (!insert) {
                return insert.error();
            }
            Statement statement(*insert);
            statement.bind(1, trialId);
            statement.bind(2, *outcome.skillText);
            statement.bind(3, sha256Hex(*outcome.skillText));
            statement.bind(4, finishedAt);
            if (Status done = impl_->run(statement, operation + " (its skill)"); !done) {
                return done;
            }
        }
        return Ok{};
    });
}

Status Store::archiveTrial(std::int64_t trialId) {
    const std::string operation = "archiving trial #" + std::to_string(trialId);
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("UPDATE trials SET archived = 1, archived_at = ? WHERE id = ? AND archived = 0", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, nowUtc());
    statement.bind(2, trialId);
    if (Status done = impl_->run(statement, operation); !done) {
        return done;
    }
    if (sqlite3_changes(impl_->db) == 0) {
        Result<std::int64_t> exists =
            singleInt(impl_->db, ("SELECT count(*) FROM trials WHERE id = " + std::to_string(trialId)).c_str());
        if (!exists || *exists == 0) {
            return impl_->failure(operation, "no such trial");
        }
        // Already archived: archiving is idempotent and keeps the first archived_at.
    }
    return Ok{};
}

Result<std::optional<LiveTrialRef>> Store::liveTrialAt(const std::string& model, const std::string& suite,
                                                       int problemNumber, int replicate, const std::string& arm) {
    const std::string operation = "looking up the live trial of model '" + model + "', problem " + suite + "/" +
                                  std::to_string(problemNumber) + ", replicate " + std::to_string(replicate) +
                                  ", arm " + arm;
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT t.id, t.origin, t.source_trial_id FROM trials t JOIN models m ON m.id = t.model_id "
                       "WHERE m.name = ? AND t.suite = ? AND t.problem_number = ? AND t.replicate = ? AND t.arm = ? "
                       "AND t.archived = 0",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, model);
    row.bind(2, suite);
    row.bind(3, problemNumber);
    row.bind(4, replicate);
    row.bind(5, arm);
    const int rc = row.step();
    if (rc == SQLITE_DONE) {
        return std::optional<LiveTrialRef>();
    }
    if (rc != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return std::optional<LiveTrialRef>(LiveTrialRef{row.int64(0), row.text(1), row.optionalInt64(2)});
}

Result<bool> Store::hasArchivedOrigin(const std::string& model, const std::string& suite, const std::string& origin) {
    const std::string operation = "looking up archived trials of model '" + model + "'";
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT EXISTS (SELECT 1 FROM trials t JOIN models m ON m.id = t.model_id "
                       "WHERE t.origin = ? AND t.origin != '' AND m.name = ? AND t.suite = ? AND t.archived = 1)",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, origin);
    row.bind(2, model);
    row.bind(3, suite);
    if (row.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return row.boolean(0);
}

Status Store::setSourceTrial(std::int64_t trialId, std::int64_t sourceTrialId) {
    const std::string operation =
        "linking trial #" + std::to_string(trialId) + " to its source trial #" + std::to_string(sourceTrialId);
    Result<sqlite3_stmt*> prepared = impl_->prepare("UPDATE trials SET source_trial_id = ? WHERE id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, sourceTrialId);
    statement.bind(2, trialId);
    if (Status done = impl_->run(statement, operation); !done) {
        return done;
    }
    if (sqlite3_changes(impl_->db) == 0) {
        return impl_->failure(operation, "no such trial");
    }
    return Ok{};
}

namespace {

const std::string& trialSelect() {
    static const std::string sql =
        "SELECT t.id, m.name, t.suite, t.problem_number, t.problem_slug, t.family, t.replicate, t.arm, t.dsl, "
        "t.coordinate, t.source_trial_id, t.status, t.error, t.skipped, t.timed_out, t.archived, t.archived_at, "
        "t.input_tokens, t.cache_tokens, t.output_tokens, t.cost_usd, t.agent_seconds, t.problem_fingerprint, "
        "t.grader_fingerprint, t.source_skill_sha256, t.started_at, t.finished_at, t.invocation_id, "
        "s.text, fv.trial_id, " +
        joinedVerdictColumns("fv.") +
        ", t.origin FROM trials t JOIN models m ON m.id = t.model_id "
        "LEFT JOIN final_verdicts fv ON fv.trial_id = t.id LEFT JOIN skills s ON s.trial_id = t.id ";
    return sql;
}

/// The lean load reads three tables one after the other, each in its own row order, and merges them by trial id:
/// cheaper than looking up a verdict and a skill for every trial row. No provenance columns, no verdict JSON; the skill
/// text is only looked at, never copied.
const std::string& leanTrialSelect() {
    static const std::string sql =
        "SELECT t.id, t.model_id, t.suite, t.problem_number, t.problem_slug, t.family, t.replicate, t.arm, t.dsl, "
        "t.coordinate, t.source_trial_id, t.status, t.error, t.skipped, t.timed_out, t.archived, "
        "t.input_tokens, t.cache_tokens, t.output_tokens, t.cost_usd, t.agent_seconds, t.started_at, t.finished_at, "
        "t.invocation_id FROM trials t ";
    return sql;
}

const std::string& leanVerdictSelect() {
    static const std::string sql =
        "SELECT trial_id, " + joinedLeanVerdictColumns("") + " FROM final_verdicts ORDER BY trial_id";
    return sql;
}

/// A SKILL.md counts as written when it holds more than white space (the one definition; analysis reads the flag).
bool nonBlank(const Statement& row, int column) {
    const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(row.get(), column));
    return bytes &&
           !trimmed(std::string_view(bytes, static_cast<std::size_t>(sqlite3_column_bytes(row.get(), column)))).empty();
}

/// The columns both selects start with (0..15); column 1 is read by the caller (the model's name or id).
void readTrialCore(const Statement& row, TrialRecord& trial) {
    trial.id = row.int64(0);
    trial.suite = row.text(2);
    trial.problemNumber = row.integer(3);
    trial.problemSlug = row.text(4);
    trial.family = row.text(5);
    trial.replicate = row.integer(6);
    trial.arm = row.text(7);
    trial.dsl = row.text(8);
    trial.coordinate = row.text(9);
    trial.sourceTrialId = row.optionalInt64(10);
    const auto* status = reinterpret_cast<const char*>(sqlite3_column_text(row.get(), 11));
    trial.status = trialStatusFromString(status ? status : "").value_or(TrialStatus::InfrastructureError);
    trial.error = row.text(12);
    trial.skipped = row.boolean(13);
    trial.timedOut = row.boolean(14);
    trial.archived = row.boolean(15);
}

/// Fills trial in place from trialSelect() (records are large; building them where they live saves a move per row).
void readTrial(const Statement& row, TrialRecord& trial) {
    readTrialCore(row, trial);
    trial.model = row.text(1);
    trial.archivedAt = row.text(16);
    trial.usage.inputTokens = row.optionalInt64(17);
    trial.usage.cacheTokens = row.optionalInt64(18);
    trial.usage.outputTokens = row.optionalInt64(19);
    trial.usage.costUsd = row.optionalReal(20);
    trial.usage.agentSeconds = row.optionalReal(21);
    trial.problemFingerprint = row.text(22);
    trial.graderFingerprint = row.text(23);
    trial.sourceSkillSha256 = row.text(24);
    trial.startedAt = row.text(25);
    trial.finishedAt = row.text(26);
    trial.invocationId = row.isNull(27) ? 0 : row.int64(27);
    if (!row.isNull(28)) {
        trial.skillText = row.text(28);
        trial.skillWritten = !trimmed(*trial.skillText).empty();
    }
    if (!row.isNull(29)) {
        trial.finalVerdict = readVerdict(row, 30);
    }
    trial.origin = row.text(30 + verdictColumnCount());
}

/// Fills trial in place from leanTrialSelect(); the model's name comes from modelNames by id.
void readLeanTrial(const Statement& row, const std::unordered_map<std::int64_t, std::string>& modelNames,
                   TrialRecord& trial) {
    readTrialCore(row, trial);
    if (auto found = modelNames.find(row.int64(1)); found != modelNames.end()) {
        trial.model = found->second;
    }
    trial.lean = true;
    trial.usage.inputTokens = row.optionalInt64(16);
    trial.usage.cacheTokens = row.optionalInt64(17);
    trial.usage.outputTokens = row.optionalInt64(18);
    trial.usage.costUsd = row.optionalReal(19);
    trial.usage.agentSeconds = row.optionalReal(20);
    trial.startedAt = row.text(21);
    trial.finishedAt = row.text(22);
    trial.invocationId = row.isNull(23) ? 0 : row.int64(23);
}

/// TrialDetail::Metrics: only the trial columns the metrics and the report's filters read (usage last, optional).
/// The WHERE clause of the bulk trial readers: ?1 the model's name or NULL, ?2 the suite or NULL.
std::string trialFilterWhere(const TrialFilter& filter) {
    return std::string("WHERE (?1 IS NULL OR t.model_id = (SELECT id FROM models WHERE name = ?1)) ") +
           "AND (?2 IS NULL OR t.suite = ?2) " + (filter.includeArchived ? "" : "AND t.archived = 0 ");
}

std::string metricsTrialSelect(const MetricColumns& columns) {
    return std::string("SELECT t.id, t.model_id, t.problem_number, t.problem_slug, t.family, t.replicate, t.arm, "
                       "t.dsl, t.status, t.skipped, t.archived") +
           (columns.usage ? ", t.input_tokens, t.cache_tokens, t.output_tokens, t.cost_usd, t.agent_seconds" : "") +
           " FROM trials t ";
}

/// TrialDetail::Metrics: only the verdict columns analysis::attemptFromTrial reads, in trial id order (the speedup CI
/// always: the R@t borderline count reads it).
std::string metricsVerdictSelect(const MetricColumns& columns) {
    return std::string("SELECT trial_id, passed, speedup, speedup_ci_low, speedup_ci_high") +
           (columns.verdictDetail ? ", imported, correct, compliant, outliers_correct, quant_cosine, quant_passed, "
                                    "roofline_bytes, roofline_flops, roofline_iou, roofline_mfu, device_name, "
                                    "gpu_median_ms"
                                  : "") +
           " FROM final_verdicts ORDER BY trial_id";
}

/// Fills trial in place from metricsTrialSelect(); the model's name comes from modelNames by id. Every field the
/// select covers is overwritten, so one record may be refilled row after row (Store::visitTrials does).
void readMetricsTrial(const Statement& row, const std::unordered_map<std::int64_t, std::string>& modelNames,
                      const MetricColumns& columns, TrialRecord& trial) {
    trial.id = row.int64(0);
    if (auto found = modelNames.find(row.int64(1)); found != modelNames.end()) {
        trial.model = found->second;
    } else {
        trial.model.clear();
    }
    trial.problemNumber = row.integer(2);
    row.assignText(3, trial.problemSlug);
    row.assignText(4, trial.family);
    trial.replicate = row.integer(5);
    row.assignText(6, trial.arm);
    row.assignText(7, trial.dsl);
    const auto* status = reinterpret_cast<const char*>(sqlite3_column_text(row.get(), 8));
    trial.status = trialStatusFromString(status ? status : "").value_or(TrialStatus::InfrastructureError);
    trial.skipped = row.boolean(9);
    trial.archived = row.boolean(10);
    trial.lean = true;
    if (columns.usage) {
        trial.usage.inputTokens = row.optionalInt64(11);
        trial.usage.cacheTokens = row.optionalInt64(12);
        trial.usage.outputTokens = row.optionalInt64(13);
        trial.usage.costUsd = row.optionalReal(14);
        trial.usage.agentSeconds = row.optionalReal(15);
    }
}

/// The verdict fields of metricsVerdictSelect() starting at column first; the others keep their defaults.
Verdict readMetricsVerdict(const Statement& row, int first, const MetricColumns& columns) {
    Verdict verdict;
    verdict.passed = row.boolean(first);
    verdict.speedupVsEager = row.real(first + 1);
    verdict.speedupCiLow = row.optionalReal(first + 2);
    verdict.speedupCiHigh = row.optionalReal(first + 3);
    if (!columns.verdictDetail) {
        return verdict;
    }
    const int i = first + 4;
    verdict.imported = row.boolean(i);
    verdict.correct = row.boolean(i + 1);
    verdict.compliant = row.boolean(i + 2);
    verdict.outliersCorrect = row.optionalBool(i + 3);
    if (!row.isNull(i + 4)) {
        verdict.quant = QuantMetrics{row.real(i + 4), 0.0, 0.0, row.boolean(i + 5)};
    }
    if (!row.isNull(i + 6)) {
        Roofline roofline;
        roofline.bytes = row.real(i + 6);
        roofline.flops = row.real(i + 7);
        roofline.iou = row.optionalReal(i + 8);
        roofline.mfu = row.optionalReal(i + 9);
        verdict.roofline = roofline;
    }
    verdict.deviceName = row.text(i + 10);
    verdict.gpuMedianMs = row.optionalReal(i + 11);
    return verdict;
}

/// The trial with this id in trials sorted by id, or null.
TrialRecord* trialWithId(std::vector<TrialRecord>& trials, std::int64_t id) {
    auto found = std::lower_bound(trials.begin(), trials.end(), id,
                                  [](const TrialRecord& trial, std::int64_t wanted) { return trial.id < wanted; });
    return found != trials.end() && found->id == id ? &*found : nullptr;
}

} // namespace

Result<std::vector<TrialRecord>> Store::loadTrials(const TrialFilter& filter, TrialDetail detail,
                                                   const MetricColumns& columns) {
    if (detail != TrialDetail::Full) {
        return loadLeanTrials(filter, detail, columns);
    }
    const std::string operation = "loading trials";
    const std::string where = std::string("WHERE (?1 IS NULL OR m.name = ?1) AND (?2 IS NULL OR t.suite = ?2) ") +
                              (filter.includeArchived ? "" : "AND t.archived = 0 ");
    const std::string sql = trialSelect() + where + "ORDER BY t.id";
    const std::string countSql = "SELECT count(*) FROM trials t JOIN models m ON m.id = t.model_id " + where;
    Result<sqlite3_stmt*> prepared = impl_->prepare(sql, operation);
    if (!prepared) {
        return prepared.error();
    }
    Result<sqlite3_stmt*> counting = impl_->prepare(countSql, operation);
    if (!counting) {
        return counting.error();
    }
    std::vector<TrialRecord> trials;
    {
        // Reserving up front avoids moving 100k large records through repeated reallocations.
        Statement count(*counting);
        count.bind(1, filter.model);
        count.bind(2, filter.suite);
        if (count.step() != SQLITE_ROW) {
            return impl_->failure(operation);
        }
        trials.reserve(static_cast<std::size_t>(count.int64(0)));
        adviseHugePages(trials.data(), trials.capacity() * sizeof(TrialRecord));
    }
    Statement row(*prepared);
    row.bind(1, filter.model);
    row.bind(2, filter.suite);
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        readTrial(row, trials.emplace_back());
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return trials;
}

Result<std::vector<TrialRecord>> Store::loadLeanTrials(const TrialFilter& filter, TrialDetail detail,
                                                       const MetricColumns& columns) {
    const bool metricsOnly = detail == TrialDetail::Metrics;
    const std::string operation = "loading trials";
    auto names = impl_->modelNamesById(operation);
    if (!names) {
        return names.error();
    }
    const std::unordered_map<std::int64_t, std::string>& modelNames = *names;
    const std::string where = trialFilterWhere(filter);
    std::vector<TrialRecord> trials;
    {
        // Reserving up front avoids moving 100k large records through repeated reallocations.
        Result<std::size_t> count = countTrials(filter);
        if (!count) {
            return count.error();
        }
        trials.reserve(*count);
        adviseHugePages(trials.data(), trials.capacity() * sizeof(TrialRecord));
    }
    {
        Result<sqlite3_stmt*> prepared = impl_->prepare(
            (metricsOnly ? metricsTrialSelect(columns) : leanTrialSelect()) + where + "ORDER BY t.id", operation);
        if (!prepared) {
            return prepared.error();
        }
        Statement row(*prepared);
        row.bind(1, filter.model);
        row.bind(2, filter.suite);
        int rc;
        while ((rc = row.step()) == SQLITE_ROW) {
            if (metricsOnly) {
                readMetricsTrial(row, modelNames, columns, trials.emplace_back());
            } else {
                readLeanTrial(row, modelNames, trials.emplace_back());
            }
        }
        if (rc != SQLITE_DONE) {
            return impl_->failure(operation);
        }
    }
    if (trials.empty()) {
        return trials;
    }
    {
        // Final verdicts in trial id order, merged with the trials (also in id order).
        Result<sqlite3_stmt*> prepared = impl_->prepare(
            metricsOnly ? metricsVerdictSelect(columns) : leanVerdictSelect(), operation + " (final verdicts)");
        if (!prepared) {
            return prepared.error();
        }
        Statement row(*prepared);
        std::size_t next = 0;
        int rc;
        while ((rc = row.step()) == SQLITE_ROW) {
            const std::int64_t trialId = row.int64(0);
            while (next < trials.size() && trials[next].id < trialId) {
                ++next;
            }
            if (next == trials.size()) {
                break; // the remaining verdicts belong to trials left out
            }
            if (trials[next].id == trialId) {
                trials[next].finalVerdict =
                    metricsOnly ? readMetricsVerdict(row, 1, columns) : readVerdict(row, 1, /*withJson=*/false);
            }
        }
        if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
            return impl_->failure(operation + " (final verdicts)");
        }
    }
    if (!metricsOnly || columns.skillWritten) {
        auto skills = impl_->skillsWrittenByTrial(operation);
        if (!skills) {
            return skills.error();
        }
        for (const auto& [trialId, written] : *skills) {
            if (TrialRecord* trial = trialWithId(trials, trialId)) {
                trial->skillWritten = written;
            }
        }
    }
    return trials;
}

Result<std::vector<std::pair<std::int64_t, bool>>> Store::Impl::skillsWrittenByTrial(const std::string& operation) {
    Result<sqlite3_stmt*> prepared = prepare("SELECT trial_id, text FROM skills", operation + " (skills)");
    if (!prepared) {
        return prepared.error();
    }
    std::vector<std::pair<std::int64_t, bool>> written;
    Statement row(*prepared);
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        written.emplace_back(row.int64(0), nonBlank(row, 1));
    }
    if (rc != SQLITE_DONE) {
        return failure(operation + " (skills)");
    }
    std::sort(written.begin(), written.end());
    return written;
}

Result<std::size_t> Store::countTrials(const TrialFilter& filter) {
    const std::string operation = "counting trials";
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT count(*) FROM trials t " + trialFilterWhere(filter), operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement count(*prepared);
    count.bind(1, filter.model);
    count.bind(2, filter.suite);
    if (count.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return static_cast<std::size_t>(count.int64(0));
}

Status Store::visitTrials(const TrialFilter& filter, const MetricColumns& columns,
                          const std::function<void(const TrialRecord&)>& visit) {
    const std::string operation = "reading trials";
    auto names = impl_->modelNamesById(operation);
    if (!names) {
        return names.error();
    }
    const std::unordered_map<std::int64_t, std::string>& modelNames = *names;
    std::vector<std::pair<std::int64_t, bool>> skillWritten; // (trial id, non-blank), sorted by trial id
    if (columns.skillWritten) {
        auto skills = impl_->skillsWrittenByTrial(operation);
        if (!skills) {
            return skills.error();
        }
        skillWritten = std::move(skills).value();
    }
    const std::string where = trialFilterWhere(filter);
    Result<sqlite3_stmt*> trialsPrepared =
        impl_->prepare(metricsTrialSelect(columns) + where + "ORDER BY t.id", operation);
    if (!trialsPrepared) {
        return trialsPrepared.error();
    }
    Result<sqlite3_stmt*> verdictsPrepared =
        impl_->prepare(metricsVerdictSelect(columns), operation + " (final verdicts)");
    if (!verdictsPrepared) {
        return verdictsPrepared.error();
    }
    // Two scans in trial id order, merged row by row: trials, and final verdicts (keyed by trial id).
    Statement row(*trialsPrepared);
    row.bind(1, filter.model);
    row.bind(2, filter.suite);
    Statement verdictRow(*verdictsPrepared);
    int verdictRc = verdictRow.step();
    auto nextSkill = skillWritten.begin();
    TrialRecord trial; // refilled row after row: its strings keep their buffers
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        readMetricsTrial(row, modelNames, columns, trial);
        while (verdictRc == SQLITE_ROW && verdictRow.int64(0) < trial.id) {
            verdictRc = verdictRow.step();
        }
        if (verdictRc == SQLITE_ROW && verdictRow.int64(0) == trial.id) {
            trial.finalVerdict = readMetricsVerdict(verdictRow, 1, columns);
        } else {
            trial.finalVerdict.reset();
        }
        while (nextSkill != skillWritten.end() && nextSkill->first < trial.id) {
            ++nextSkill;
        }
        trial.skillWritten = nextSkill != skillWritten.end() && nextSkill->first == trial.id && nextSkill->second;
        visit(trial);
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    if (verdictRc != SQLITE_DONE && verdictRc != SQLITE_ROW) {
        return impl_->failure(operation + " (final verdicts)");
    }
    return Ok{};
}

Result<TrialRecord> Store::loadTrial(std::int64_t trialId) {
    const std::string operation = "loading trial #" + std::to_string(trialId);
    Result<sqlite3_stmt*> prepared = impl_->prepare(trialSelect() + "WHERE t.id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, trialId);
    const int rc = row.step();
    if (rc == SQLITE_ROW) {
        TrialRecord trial;
        readTrial(row, trial);
        return trial;
    }
    if (rc == SQLITE_DONE) {
        return impl_->failure(operation, "no such trial");
    }
    return impl_->failure(operation);
}

// ---- submissions, skills, annotations -------------------------------------------------------------------------

Result<std::int64_t> Store::addSubmission(const SubmissionRecord& submission) {
    const std::string operation =
        "saving submission " + std::to_string(submission.index) + " of trial #" + std::to_string(submission.trialId);
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("INSERT INTO submissions (trial_id, idx, kernel_source, submission_eval_seconds, created_at, " +
                           joinedVerdictColumns("") + ") VALUES (?, ?, ?, ?, ?, " + placeholders(verdictColumnCount()) +
                           ") RETURNING id",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, submission.trialId);
    statement.bind(2, submission.index);
    statement.bind(3, submission.kernelSource);
    statement.bind(4, submission.evalSeconds);
    statement.bind(5, orNow(submission.createdAt));
    bindVerdict(statement, 6, submission.verdict);
    if (statement.step() != SQLITE_ROW) {
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Result<std::vector<SubmissionRecord>> Store::submissions(std::int64_t trialId) {
    const std::string operation = "loading the submissions of trial #" + std::to_string(trialId);
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT id, trial_id, idx, kernel_source, submission_eval_seconds, created_at, " +
                           joinedVerdictColumns("") + " FROM submissions WHERE trial_id = ? ORDER BY idx",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, trialId);
    std::vector<SubmissionRecord> submissions;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        SubmissionRecord submission;
        submission.id = row.int64(0);
        submission.trialId = row.int64(1);
        submission.index = row.integer(2);
        submission.kernelSource = row.text(3);
        submission.evalSeconds = row.real(4);
        submission.createdAt = row.text(5);
        submission.verdict = readVerdict(row, 6);
        submissions.push_back(std::move(submission));
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return submissions;
}

Result<std::optional<SkillRecord>> Store::skillOfTrial(std::int64_t trialId) {
    const std::string operation = "loading the skill of trial #" + std::to_string(trialId);
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT id, trial_id, text, sha256 FROM skills WHERE trial_id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, trialId);
    const int rc = row.step();
    if (rc == SQLITE_ROW) {
        return std::optional<SkillRecord>(SkillRecord{row.int64(0), row.int64(1), row.text(2), row.text(3)});
    }
    if (rc == SQLITE_DONE) {
        return std::optional<SkillRecord>();
    }
    return impl_->failure(operation);
}

Result<std::int64_t> Store::addAnnotation(const AnnotationRecord& annotation) {
    const std::string operation = "saving an annotation of skill #" + std::to_string(annotation.skillId);
    if (annotation.rangeStart < 0 || annotation.rangeEnd < annotation.rangeStart) {
        return impl_->failure(operation, "bad character range " + std::to_string(annotation.rangeStart) + ".." +
                                             std::to_string(annotation.rangeEnd));
    }
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("INSERT INTO annotations (skill_id, range_start, range_end, quoted_text, tag, note, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, annotation.skillId);
    statement.bind(2, annotation.rangeStart);
    statement.bind(3, annotation.rangeEnd);
    statement.bind(4, annotation.quotedText);
    statement.bind(5, std::string(toString(annotation.tag)));
    statement.bind(6, annotation.note);
    statement.bind(7, orNow(annotation.createdAt));
    if (statement.step() != SQLITE_ROW) {
        if (sqlite3_extended_errcode(impl_->db) == SQLITE_CONSTRAINT_FOREIGNKEY) {
            return impl_->failure(operation, "no such skill");
        }
        return impl_->failure(operation);
    }
    return statement.int64(0);
}

Result<std::vector<AnnotationRecord>> Store::annotations(std::int64_t skillId) {
    const std::string operation = "loading the annotations of skill #" + std::to_string(skillId);
    Result<sqlite3_stmt*> prepared =
        impl_->prepare("SELECT id, skill_id, range_start, range_end, quoted_text, tag, note, created_at "
                       "FROM annotations WHERE skill_id = ? ORDER BY range_start, id",
                       operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement row(*prepared);
    row.bind(1, skillId);
    std::vector<AnnotationRecord> annotations;
    int rc;
    while ((rc = row.step()) == SQLITE_ROW) {
        AnnotationRecord annotation;
        annotation.id = row.int64(0);
        annotation.skillId = row.int64(1);
        annotation.rangeStart = row.int64(2);
        annotation.rangeEnd = row.int64(3);
        annotation.quotedText = row.text(4);
        annotation.tag = annotationTagFromString(row.text(5)).value_or(AnnotationTag::Other);
        annotation.note = row.text(6);
        annotation.createdAt = row.text(7);
        annotations.push_back(std::move(annotation));
    }
    if (rc != SQLITE_DONE) {
        return impl_->failure(operation);
    }
    return annotations;
}

Status Store::deleteAnnotation(std::int64_t annotationId) {
    const std::string operation = "deleting annotation #" + std::to_string(annotationId);
    Result<sqlite3_stmt*> prepared = impl_->prepare("DELETE FROM annotations WHERE id = ?", operation);
    if (!prepared) {
        return prepared.error();
    }
    Statement statement(*prepared);
    statement.bind(1, annotationId);
    if (Status done = impl_->run(statement, operation); !done) {
        return done;
    }
    if (sqlite3_changes(impl_->db) == 0) {
        return impl_->failure(operation, "no such annotation");
    }
    return Ok{};
}

// ---- housekeeping ---------------------------------------------------------------------------------------------

Result<StoreInfo> Store::info() {
    StoreInfo info;
    info.path = impl_->path;
    info.migratedFromVersion = impl_->migratedFrom;
    Result<std::int64_t> version = singleInt(impl_->db, "PRAGMA user_version");
    if (!version) {
        return impl_->failure("reading the schema version", version.error().message);
    }
    info.schemaVersion = static_cast<int>(*version);
    std::error_code code;
    info.fileSizeBytes = fs::file_size(impl_->path, code);
    fs::path walPath = store::sqliteFilePath(impl_->path);
    walPath += "-wal";
    info.walPendingPages = store::summariseWal(walPath).committedFrames;
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(impl_->db, "PRAGMA journal_mode", -1, &raw, nullptr) == SQLITE_OK &&
        sqlite3_step(raw) == SQLITE_ROW) {
        info.journalMode = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
    }
    sqlite3_finalize(raw);
    for (const char* table : kTables) {
        // A store opened read-only may be older than this build: count only the tables its schema has.
        const std::string present =
            std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '") + table + "'";
        if (Result<std::int64_t> has = singleInt(impl_->db, present.c_str()); has && *has == 0) {
            continue;
        }
        Result<std::int64_t> rows = singleInt(impl_->db, (std::string("SELECT count(*) FROM ") + table).c_str());
        if (!rows) {
            return impl_->failure(std::string("counting ") + table, rows.error().message);
        }
        info.rowCounts.emplace_back(table, *rows);
    }
    Result<std::int64_t> live = singleInt(impl_->db, "SELECT count(*) FROM trials WHERE archived = 0");
    Result<std::int64_t> archived = singleInt(impl_->db, "SELECT count(*) FROM trials WHERE archived = 1");
    if (!live || !archived) {
        return impl_->failure("counting trials", (!live ? live : archived).error().message);
    }
    info.liveTrials = *live;
    info.archivedTrials = *archived;
    return info;
}

Result<std::vector<std::string>> Store::integrityCheck() {
    std::vector<std::string> problems;
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(impl_->db, "PRAGMA integrity_check", -1, &raw, nullptr) != SQLITE_OK) {
        return impl_->failure("checking integrity");
    }
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
        if (text && std::string(text) != "ok") {
            problems.emplace_back(text);
        }
    }
    sqlite3_finalize(raw);
    if (rc != SQLITE_DONE) {
        problems.push_back(std::string("integrity check stopped: ") + sqlite3_errmsg(impl_->db));
        return problems;
    }
    if (sqlite3_prepare_v2(impl_->db, "PRAGMA foreign_key_check", -1, &raw, nullptr) != SQLITE_OK) {
        return impl_->failure("checking foreign keys");
    }
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        const auto* table = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
        const auto* parent = reinterpret_cast<const char*>(sqlite3_column_text(raw, 2));
        problems.push_back(std::string(table ? table : "?") + " row " + std::to_string(sqlite3_column_int64(raw, 1)) +
                           " refers to a missing row of " + (parent ? parent : "?"));
    }
    sqlite3_finalize(raw);
    if (rc != SQLITE_DONE) {
        problems.push_back(std::string("foreign key check stopped: ") + sqlite3_errmsg(impl_->db));
    }
    return problems;
}

} // namespace mkb
