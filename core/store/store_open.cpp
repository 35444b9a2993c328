// Opening a store: recognising the file (header, application id, schema version, integrity), the write-ahead log
// checks, creating and migrating it forward, and applying a left-over log (`mkb db recover`).
#include "core/store/store.h"

#include "core/store/migrations.h"
#include "core/store/schema_match.h"
#include "core/store/store_files.h"
#include "core/store/store_impl.h"
#include "core/util/text.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>

namespace mkb {
namespace store_detail {

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

} // namespace store_detail

namespace {

// Stores larger than this skip the full quick_check on open (it reads every page); `mkb db check` still runs it.
constexpr std::uintmax_t kQuickCheckOnOpenLimitBytes = 64ull * 1024 * 1024;
constexpr int kBusyTimeoutMs = 5000;

const char* const kLeftUntouched = "; it was left untouched: move it aside, or name another store with --store";

/// Ends the read transaction that `inspect` opened, whichever way it returns.
struct ReadSnapshot {
    sqlite3* db;
    explicit ReadSnapshot(sqlite3* handle) : db(handle) {}
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;
    ~ReadSnapshot() { sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr); }
};

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

/// "file:/abs/path?immutable=1": SQLite's URI for reading a file that nobody can change, percent-encoding the path.
std::string immutableUri(const fs::path& path) {
    std::error_code code;
    const fs::path absolute = fs::absolute(store::sqliteFilePath(path), code);
    std::string uri = "file:";
    for (const unsigned char c : (code ? path : absolute).string()) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
                           c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            uri += static_cast<char>(c);
        } else {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", c);
            uri += escaped;
        }
    }
    return uri + "?immutable=1";
}

/// A store in a folder SQLite cannot create files in (a read-only folder or mount). A reader of a WAL-mode store with
/// no -shm beside it opens it as immutable (true): SQLite cannot make the -shm it needs, and no writer can be at
/// work, since a writer needs that -shm too. A log with frames cannot be read that way, and a writer cannot work at
/// all; both are refused in words.
Result<bool> checkFolderAccess(const fs::path& path, bool readOnly, const store::Holders& holders) {
    const fs::path real = store::sqliteFilePath(path);
    const std::string why = store::whyFolderUnwritable(real);
    if (why.empty()) {
        return false;
    }
    fs::path shm = real;
    shm += "-shm";
    fs::path wal = real;
    wal += "-wal";
    std::error_code code;
    const bool shmThere = fs::exists(shm, code);
    const std::string folder = real.has_parent_path() ? real.parent_path().string() : std::string(".");
    if (readOnly) {
        const auto fields = store::headerFields(path);
        if (shmThere || !fields || !fields->walMode) {
            return false; // SQLite reads it as it is
        }
        if (holders.walMayHoldFrames()) {
            return makeError("store " + quoted(path) + " has a write-ahead log " + quoted(wal) +
                             " beside it, but SQLite cannot read it without creating " + quoted(shm) + " in " + folder +
                             " (" + why + "); both were left untouched: copy the store and its -wal to a " +
                             "writable folder and open the copy there");
        }
        return true;
    }
    const bool fileWritable = ::access(path.c_str(), W_OK) == 0;
    if (!fileWritable || !shmThere || !fs::exists(wal, code)) {
        return makeError("store " + quoted(path) + " cannot be written: its folder " + folder + " is read-only (" +
                         why + "), and SQLite keeps its -wal and -shm beside it; it was left untouched: copy it " +
                         "to a writable folder, or use a verb that only reads it (report, export, db info)");
    }
    return false;
}

/// Opens path and checks it is a workbench store this build can use, without writing anything to it.
Result<Inspection> inspect(const fs::path& path, OpenMode mode, bool readOnly) {
    if (path.empty()) {
        return makeError("the store path is empty; name a store file with --store PATH (or set MKB_STORE to one)");
    }
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
    } else if (struct stat info{}; ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
        return makeError("store " + quoted(path) + " is " + fileKindInWords(info.st_mode) +
                         ", not a regular file; name a store file (a .sqlite file) instead");
    }
    std::uintmax_t size = 0;
    bool immutable = false;
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
        Result<bool> readAsImmutable = checkFolderAccess(path, readOnly, *holders);
        if (!readAsImmutable) {
            return readAsImmutable.error();
        }
        immutable = *readAsImmutable;
    }

    Inspection inspection;
    inspection.connection = std::make_unique<Connection>();
    int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
    const std::string name = immutable ? immutableUri(path) : path.string();
    flags |= immutable ? SQLITE_OPEN_URI : 0;
    if (sqlite3_open_v2(name.c_str(), &inspection.connection->db, flags, nullptr) != SQLITE_OK) {
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
    // One read transaction covers every question below, so they see one snapshot: another process creating the same
    // store commits its migration steps one by one, and a version read before a step with tables read after it would
    // look like a hand-edited version.
    if (sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
        return corrupt(sqlite3_errmsg(db));
    }
    const ReadSnapshot snapshot{db};
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
    if (*userVersion < latest) {
        if (const std::optional<int> actual = store::versionOfSchema(db, static_cast<int>(*userVersion));
            actual && *actual != *userVersion) {
            return makeError("store " + quoted(path) + " says schema version " + std::to_string(*userVersion) +
                             " (PRAGMA user_version), but its tables are those of version " + std::to_string(*actual) +
                             ": the version was changed by hand, and migrating would fail; it was left untouched: " +
                             "set it back with `sqlite3 " + quoted(path) +
                             " 'PRAGMA user_version = " + std::to_string(*actual) + "'`");
        }
        if (*userVersion < 1) {
            return makeError("store " + quoted(path) + " says schema version " + std::to_string(*userVersion) +
                             " (PRAGMA user_version), which no mkb writes (versions 1 to " + std::to_string(latest) +
                             "), and its tables match no version" + kLeftUntouched);
        }
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

} // namespace mkb
