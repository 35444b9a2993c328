// The store's housekeeping: what `mkb db info` prints (schema version, sizes, row counts) and `mkb db check`'s
// integrity and foreign key checks.
#include "core/store/store.h"

#include "core/store/store_files.h"
#include "core/store/store_impl.h"

#include <sqlite3.h>

#include <array>
#include <string>
#include <system_error>
#include <vector>

namespace mkb {
namespace {

// The tables info() counts, in schema order.
const std::array<const char*, 13> kTables = {
    "devices", "models",      "problems",  "invocations",  "trials",     "submissions",         "final_verdicts",
    "skills",  "annotations", "retimings", "calibrations", "regradings", "transition_retimings"};

} // namespace

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
