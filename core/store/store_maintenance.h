// The project store's upkeep as plain functions over its path (what `mkb db` does): create or open, inspect, check
// and migrate; each says what happened and leaves the wording to its caller.
#pragma once

#include "core/store/store.h"
#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <vector>

namespace mkb {

/// What opening a store to create it found there.
enum class StoreInitKind {
    Created,          // no file was there: a new store was written
    InitialisedEmpty, // an empty file was there and was made a store
    Migrated,         // an older store was there and was migrated forward
    AlreadyCurrent,   // a store of this build's schema was there and was left as it is
};

struct StoreInit {
    StoreInitKind kind = StoreInitKind::Created;
    int fromVersion = 0; // Migrated: the version the file had
    int toVersion = 0;   // the version it has now (this build's)
};

/// Creates the store at path (with its folders), or opens an existing one and migrates it forward when older; a file
/// that is not a store is refused and never overwritten.
Result<StoreInit> initStore(const std::filesystem::path& path);

/// The store's version, size, journal mode and rows per table, opened read-only (an older store is shown as it is).
Result<StoreInfo> inspectStore(const std::filesystem::path& path);

/// SQLite's integrity check and a foreign key check, opened read-only: one line per problem, none when healthy.
Result<std::vector<std::string>> checkStore(const std::filesystem::path& path);

struct StoreMigration {
    int fromVersion = 0;
    int toVersion = 0;
    bool changed() const { return fromVersion != toVersion; }
};

/// Brings an older store forward to this build's schema; a current store is not opened for writing at all.
Result<StoreMigration> migrateStore(const std::filesystem::path& path);

} // namespace mkb
