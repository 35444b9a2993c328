// Which schema version a store's tables and columns are, read from the file itself rather than its user_version: a
// stamp changed by hand must not send `mkb db migrate` into steps the file already took. Internal to core/store.
#pragma once

#include <optional>

struct sqlite3;

namespace mkb::store {

/// The schema version whose workbench tables, indexes and columns the open database holds exactly (objects of its
/// own that no version defines are ignored); nullopt when it matches none. Each version's schema is built once, in
/// memory, from the migration steps. When several versions share one schema, `stamped` wins if it is one of them.
std::optional<int> versionOfSchema(sqlite3* db, int stamped);

} // namespace mkb::store
