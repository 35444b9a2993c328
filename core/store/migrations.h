// The store's schema history: an ordered list of forward migration steps, one per schema version.
#pragma once

#include "core/util/result.h"

#include <string>
#include <vector>

struct sqlite3;

namespace mkb::store {

/// One step of the schema history. A shipped step never changes; a new schema is a new step at the end.
struct Migration {
    int version;             // PRAGMA user_version after this step
    std::string description; // one line for `mkb db migrate`
    std::string sql;         // statements run inside the step's transaction
};

/// Every step, in order; step i brings the file to version i + 1.
const std::vector<Migration>& migrations();

/// The version this build writes: the last step's version.
int latestVersion();

/// Runs the steps after fromVersion up to and including toVersion, each in its own transaction that also sets
/// PRAGMA user_version and application_id. fileLabel names the file in errors.
Status applyMigrations(sqlite3* db, int fromVersion, int toVersion, const std::string& fileLabel);

/// The names of the verdict columns shared by `submissions` and `final_verdicts`, in schema order (defined with their
/// binders and readers in verdict_columns.cpp).
const std::vector<std::string>& verdictColumns();

} // namespace mkb::store
