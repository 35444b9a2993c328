// The store's internals shared by its implementation files: Store::Impl (the connection, its statement cache and its
// errors) and the timestamp helpers. Not for use outside core/store.
#pragma once

#include "core/store/statement.h"
#include "core/store/store.h"
#include "core/util/utc_time.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mkb {
namespace store_detail {

namespace fs = std::filesystem;

inline std::string orNow(const std::string& timestamp) {
    return timestamp.empty() ? utcNowIso() : timestamp;
}

inline std::string quoted(const fs::path& path) {
    return path.string();
}

/// The first column of the first row of sql on a bare connection (the checks on open, info()); 0 when no row. The
/// error is SQLite's message alone: the caller words it.
Result<std::int64_t> singleInt(sqlite3* db, const char* sql);

} // namespace store_detail

using namespace store_detail;

struct Store::Impl {
    fs::path path;
    sqlite3* db = nullptr;
    int migratedFrom = 0;
    int transactionDepth = 0;
    std::unordered_map<std::string, sqlite3_stmt*> statements;

    ~Impl() {
        for (auto& [sql, statement] : statements) {
            sqlite3_finalize(statement);
        }
        if (db) {
            sqlite3_close_v2(db);
        }
    }

    Error failure(const std::string& operation) const { return statementFailure(path, operation, db); }
    Error failure(const std::string& operation, const std::string& detail) const {
        return storeFailure(path, operation, detail);
    }

    /// A cached prepared statement for sql; the error names the operation.
    Result<sqlite3_stmt*> prepare(const std::string& sql, const std::string& operation) {
        if (auto found = statements.find(sql); found != statements.end()) {
            return found->second;
        }
        sqlite3_stmt* statement = nullptr;
        if (sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr) != SQLITE_OK) {
            return failure(operation);
        }
        statements.emplace(sql, statement);
        return statement;
    }

    /// The cached statement for sql, ready for its parameters; its errors name the operation.
    Query query(const std::string& sql, std::string operation) {
        Result<sqlite3_stmt*> prepared = prepare(sql, operation);
        if (!prepared) {
            return Query(prepared.error());
        }
        return Query(db, path, *prepared, std::move(operation));
    }

    /// Runs an UPDATE or DELETE that must change a row; none changed is an error saying whenNone ("no such trial").
    Status runChangingRow(Query& query, const std::string& operation, const std::string& whenNone) {
        Result<int> changed = query.run();
        if (!changed) {
            return changed.error();
        }
        if (*changed == 0) {
            return failure(operation, whenNone);
        }
        return Ok{};
    }

    Status exec(const std::string& sql, const std::string& operation) {
        char* message = nullptr;
        if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
            std::string text = message ? message : sqlite3_errmsg(db);
            sqlite3_free(message);
            return failure(operation, text);
        }
        return Ok{};
    }

    /// Model names by id, for the bulk trial readers.
    Result<std::unordered_map<std::int64_t, std::string>> modelNamesById(const std::string& operation);
    /// Whether each trial's skill is non-blank, as (trial id, non-blank) sorted by trial id.
    Result<std::vector<std::pair<std::int64_t, bool>>> skillsWrittenByTrial(const std::string& operation);
};

} // namespace mkb
