// Query's stepping and its errors: every failed statement of the store is worded here.
#include "core/store/statement.h"

#include "core/store/verdict_columns.h"

namespace mkb::store_detail {

Error statementFailure(const std::filesystem::path& path, const std::string& operation, sqlite3* db) {
    return makeError("store " + path.string() + ": " + operation + " failed: " + sqlite3_errmsg(db));
}

Error storeFailure(const std::filesystem::path& path, const std::string& operation, const std::string& detail) {
    return makeError("store " + path.string() + ": " + operation + ": " + detail);
}

void Query::bindOne(const Verdict& verdict) {
    if (statement_.get()) {
        bindVerdict(statement_, parameter_ + 1, verdict);
    }
    parameter_ += verdictColumnCount();
}

bool Query::next() {
    if (!statement_.get() || stepError_) {
        return false;
    }
    lastStep_ = statement_.step();
    if (lastStep_ == SQLITE_ROW) {
        return true;
    }
    if (lastStep_ != SQLITE_DONE) {
        stepError_ = statementFailure(*path_, operation_, db_);
    }
    return false;
}

Status Query::status() const {
    if (prepareError_) {
        return *prepareError_;
    }
    if (stepError_) {
        return *stepError_;
    }
    return Ok{};
}

Result<int> Query::run() {
    if (next()) {
        return statementFailure(*path_, operation_, db_); // a row where none was due, worded as any failed step
    }
    if (Status ran = status(); !ran) {
        return ran.error();
    }
    return sqlite3_changes(db_);
}

Result<std::int64_t> Query::returnedId() {
    if (next()) {
        return statement_.int64(0);
    }
    if (Status ran = status(); !ran) {
        return ran.error();
    }
    // A statement that returned no row where one was due: worded as the old step check did.
    return statementFailure(*path_, operation_, db_);
}

bool Query::failedWith(int extendedCode) const {
    return stepError_ && db_ && sqlite3_extended_errcode(db_) == extendedCode;
}

} // namespace mkb::store_detail
