// The store's transactions: BEGIN IMMEDIATE at the outside, a savepoint per nested level, rolled back on an error.
#include "core/store/store.h"

#include "core/store/store_impl.h"

#include <sqlite3.h>

#include <string>

namespace mkb {

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

} // namespace mkb
