// Recognises a store's schema version from its tables, indexes and columns, by building each version in memory from
// the migration steps and comparing.
#include "core/store/schema_match.h"

#include "core/store/migrations.h"

#include <sqlite3.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace mkb::store {
namespace {

using Schema = std::set<std::string>; // "table t", "index i", "column t.c"

Schema schemaOf(sqlite3* db) {
    Schema schema;
    const char* const sql = "SELECT m.type, m.name, coalesce(p.name, '') FROM sqlite_schema AS m "
                            "LEFT JOIN pragma_table_info(m.name) AS p ON m.type = 'table' "
                            "WHERE m.type IN ('table', 'index') AND m.name NOT LIKE 'sqlite_%'";
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
        return schema;
    }
    while (sqlite3_step(statement) == SQLITE_ROW) {
        const auto text = [&](int column) {
            const auto* value = reinterpret_cast<const char*>(sqlite3_column_text(statement, column));
            return std::string(value ? value : "");
        };
        const std::string type = text(0);
        const std::string name = text(1);
        schema.insert(type + " " + name);
        if (type == "table" && !text(2).empty()) {
            schema.insert("column " + name + "." + text(2));
        }
    }
    sqlite3_finalize(statement);
    return schema;
}

/// Every version's schema, index 0 holding version 1's.
const std::vector<Schema>& versionSchemas() {
    static std::vector<Schema> schemas;
    static std::once_flag built;
    std::call_once(built, [] {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK) {
            for (const Migration& step : migrations()) {
                if (!applyMigrations(db, step.version - 1, step.version, "the in-memory schema")) {
                    schemas.clear();
                    break;
                }
                schemas.push_back(schemaOf(db));
            }
        }
        sqlite3_close(db);
    });
    return schemas;
}

} // namespace

std::optional<int> versionOfSchema(sqlite3* db, int stamped) {
    const std::vector<Schema>& versions = versionSchemas();
    Schema known;
    for (const Schema& schema : versions) {
        known.insert(schema.begin(), schema.end());
    }
    Schema ours;
    for (const std::string& object : schemaOf(db)) {
        if (known.count(object) != 0) {
            ours.insert(object);
        }
    }
    if (stamped >= 1 && static_cast<std::size_t>(stamped) <= versions.size() &&
        versions[static_cast<std::size_t>(stamped) - 1] == ours) {
        return stamped;
    }
    for (std::size_t i = versions.size(); i-- > 0;) {
        if (versions[i] == ours) {
            return static_cast<int>(i) + 1;
        }
    }
    return std::nullopt;
}

} // namespace mkb::store
