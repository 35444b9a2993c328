// The store's one way to run SQL: a cached prepared statement that resets itself, and Query, which binds a parameter
// list, steps rows, reads typed columns and turns SQLite's errors into errors naming the file and the operation.
// Not for use outside core/store.
#pragma once

#include "core/records/verdict.h"
#include "core/util/result.h"

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mkb::store_detail {

/// "store PATH: OPERATION failed: SQLite's message", the error of every failed statement.
Error statementFailure(const std::filesystem::path& path, const std::string& operation, sqlite3* db);
/// "store PATH: OPERATION: detail", an error the store words itself.
Error storeFailure(const std::filesystem::path& path, const std::string& operation, const std::string& detail);

/// Binds SQL NULL (Query::bind(Null{})).
struct Null {};

/// A prepared statement from the connection's cache; resets itself when it goes out of scope so that it can be reused.
class Statement {
public:
    explicit Statement(sqlite3_stmt* statement = nullptr) : statement_(statement) {}
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
    void bind(int index, Null) { sqlite3_bind_null(statement_, index); }
    template <typename T>
    void bind(int index, const std::optional<T>& value) {
        if (value) {
            bind(index, *value);
        } else {
            bind(index, Null{});
        }
    }

    int step() { return sqlite3_step(statement_); }

    bool isNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
    std::int64_t int64(int column) const { return sqlite3_column_int64(statement_, column); }
    int integer(int column) const { return sqlite3_column_int(statement_, column); }
    bool boolean(int column) const { return sqlite3_column_int(statement_, column) != 0; }
    double real(int column) const { return sqlite3_column_double(statement_, column); }
    /// The column's text without copying it; valid until the next step.
    std::string_view view(int column) const {
        const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
        return bytes ? std::string_view(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
                     : std::string_view();
    }
    std::string text(int column) const { return std::string(view(column)); }
    /// Reads text into target, reusing its buffer (a reader that refills one record per row allocates nothing then).
    void assignText(int column, std::string& target) const { target.assign(view(column)); }
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

/// Empty text as NULL (optional timestamps stored as NULL).
inline std::optional<std::string> nullIfEmpty(const std::string& text) {
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

/// One statement of the cache with its parameters bound, stepped by one of its terminal calls (forEach, rows,
/// firstRow, run, returnedId) or row by row (next, row, status). Every failure is an error naming the store's file
/// and the operation; a statement that could not be prepared fails its first terminal call with that error.
class Query {
public:
    /// A query whose statement could not be prepared.
    explicit Query(Error prepareError) : prepareError_(std::move(prepareError)) {}
    Query(sqlite3* db, const std::filesystem::path& path, sqlite3_stmt* statement, std::string operation)
        : db_(db), path_(&path), statement_(statement), operation_(std::move(operation)) {}
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;

    /// Binds the values to the next parameters in order: integers, booleans, reals, text, Null, optionals (NULL when
    /// empty), and a Verdict (its verdictColumns(), all of them).
    template <typename... Values>
    Query& bind(const Values&... values) {
        (bindOne(values), ...);
        return *this;
    }

    /// Steps every row, handing each to onRow (called with const Statement&).
    template <typename OnRow>
    Status forEach(OnRow&& onRow) {
        while (next()) {
            onRow(statement_);
        }
        return status();
    }
    /// Every row, each made into a record by readRow (called with const Statement&).
    template <typename ReadRow>
    auto rows(ReadRow&& readRow) -> Result<std::vector<decltype(readRow(std::declval<const Statement&>()))>> {
        std::vector<decltype(readRow(std::declval<const Statement&>()))> records;
        if (Status read = forEach([&](const Statement& row) { records.push_back(readRow(row)); }); !read) {
            return read.error();
        }
        return records;
    }
    /// The first row made into a record by readRow; nullopt when there is none.
    template <typename ReadRow>
    auto firstRow(ReadRow&& readRow) -> Result<std::optional<decltype(readRow(std::declval<const Statement&>()))>> {
        using Record = decltype(readRow(std::declval<const Statement&>()));
        if (next()) {
            return std::optional<Record>(readRow(statement_));
        }
        if (Status read = status(); !read) {
            return read.error();
        }
        return std::optional<Record>();
    }
    /// Runs a statement that returns no rows; how many rows it changed.
    Result<int> run();
    /// Runs a statement that returns one integer row (INSERT ... RETURNING id, SELECT count(*)); that integer.
    Result<std::int64_t> returnedId();

    /// Steps to the next row: true while there is one. After false, status() says whether the rows ended or failed.
    bool next();
    /// The row next() stepped to.
    const Statement& row() const { return statement_; }
    /// Ok unless preparing or the last step failed (stopping before the last row is no failure).
    Status status() const;
    /// True when the last step failed with this extended result code (SQLITE_CONSTRAINT_UNIQUE, …).
    bool failedWith(int extendedCode) const;

private:
    template <typename T>
    void bindOne(const T& value) {
        if (statement_.get()) {
            statement_.bind(++parameter_, value);
        }
    }
    void bindOne(const Verdict& verdict);

    std::optional<Error> prepareError_;
    sqlite3* db_ = nullptr;
    const std::filesystem::path* path_ = nullptr;
    Statement statement_;
    std::string operation_;
    int parameter_ = 0;
    int lastStep_ = SQLITE_OK;
    std::optional<Error> stepError_; // worded when the step failed, before the statement is reset
};

} // namespace mkb::store_detail
