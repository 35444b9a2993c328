// The store's internals shared by its implementation files (store.cpp, retiming_store.cpp): Store::Impl, the
// cached-statement wrapper and the timestamp helpers. Not for use outside core/store.
#pragma once

#include "core/store/store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mkb {
namespace store_detail {

namespace fs = std::filesystem;

inline std::string nowUtc() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm parts{};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

inline std::string orNow(const std::string& timestamp) {
    return timestamp.empty() ? nowUtc() : timestamp;
}

inline std::string quoted(const fs::path& path) {
    return path.string();
}

/// A prepared statement; resets itself when it goes out of scope so the cached statement can be reused.
class Statement {
public:
    explicit Statement(sqlite3_stmt* statement) : statement_(statement) {}
    ~Statement() {
        if (statement_) {
            sqlite3_reset(statement_);
            sqlite3_clear_bindings(statement_);
        }
    }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    sqlite3_stmt* get() const { return statement_; }

    void bind(int index, std::int64_t value) { sqlite3_bind_int64(statement_, index, value); }
    void bind(int index, int value) { sqlite3_bind_int64(statement_, index, value); }
    void bind(int index, bool value) { sqlite3_bind_int(statement_, index, value ? 1 : 0); }
    void bind(int index, double value) { sqlite3_bind_double(statement_, index, value); }
    void bind(int index, const std::string& value) {
        sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    }
    void bindNull(int index) { sqlite3_bind_null(statement_, index); }
    template <typename T>
    void bind(int index, const std::optional<T>& value) {
        if (value) {
            bind(index, *value);
        } else {
            bindNull(index);
        }
    }
    /// Empty text becomes NULL (for optional timestamps and ids stored as NULL).
    void bindTextOrNull(int index, const std::string& value) {
        if (value.empty()) {
            bindNull(index);
        } else {
            bind(index, value);
        }
    }

    int step() { return sqlite3_step(statement_); }

    bool isNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
    std::int64_t int64(int column) const { return sqlite3_column_int64(statement_, column); }
    int integer(int column) const { return sqlite3_column_int(statement_, column); }
    bool boolean(int column) const { return sqlite3_column_int(statement_, column) != 0; }
    double real(int column) const { return sqlite3_column_double(statement_, column); }
    std::string text(int column) const {
        const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
        return bytes ? std::string(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                     : std::string();
    }
    /// Reads text into target, reusing its buffer (a reader that refills one record per row allocates nothing then).
    void assignText(int column, std::string& target) const {
        const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
        if (bytes) {
            target.assign(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
        } else {
            target.clear();
        }
    }
    std::optional<std::int64_t> optionalInt64(int column) const {
        return isNull(column) ? std::nullopt : std::optional<std::int64_t>(int64(column));
    }
    std::optional<double> optionalReal(int column) const {
        return isNull(column) ? std::nullopt : std::optional<double>(real(column));
    }
    std::optional<bool> optionalBool(int column) const {
        return isNull(column) ? std::nullopt : std::optional<bool>(boolean(column));
    }

private:
    sqlite3_stmt* statement_;
};

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

    Error failure(const std::string& operation) const {
        return makeError("store " + quoted(path) + ": " + operation + " failed: " + sqlite3_errmsg(db));
    }
    Error failure(const std::string& operation, const std::string& detail) const {
        return makeError("store " + quoted(path) + ": " + operation + ": " + detail);
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
    Result<std::unordered_map<std::int64_t, std::string>> modelNamesById(const std::string& operation) {
        Result<sqlite3_stmt*> prepared = prepare("SELECT id, name FROM models", operation);
        if (!prepared) {
            return prepared.error();
        }
        std::unordered_map<std::int64_t, std::string> names;
        Statement row(*prepared);
        int rc;
        while ((rc = row.step()) == SQLITE_ROW) {
            names.emplace(row.int64(0), row.text(1));
        }
        if (rc != SQLITE_DONE) {
            return failure(operation);
        }
        return names;
    }

    /// Whether each trial's skill is non-blank, as (trial id, non-blank) sorted by trial id.
    Result<std::vector<std::pair<std::int64_t, bool>>> skillsWrittenByTrial(const std::string& operation);

    /// Runs a statement that returns no rows.
    Status run(Statement& statement, const std::string& operation) {
        if (statement.step() != SQLITE_DONE) {
            return failure(operation);
        }
        return Ok{};
    }
};

} // namespace mkb
