// Small fixtures for the store suites: temporary store paths, raw file bytes, old-version files and sample records.
#pragma once

#include "core/store/migrations.h"
#include "core/store/store.h"

#include <QTest>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

namespace storetest {

inline std::string fileBytes(const std::filesystem::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Runs SQL on a file through a plain SQLite connection (no Store), e.g. to fake an old or newer file.
inline bool rawExec(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
              sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

inline long long rawInt(const std::filesystem::path& path, const std::string& sql) {
    sqlite3* db = nullptr;
    sqlite3_stmt* statement = nullptr;
    long long value = -1;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
        value = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return value;
}

/// Writes a store of schema version 1: only the first migration step, as an old build would have left it.
inline bool writeVersion1Store(const std::filesystem::path& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
        sqlite3_close(db);
        return false;
    }
    const bool ok = static_cast<bool>(mkb::store::applyMigrations(db, 0, 1, path.string()));
    sqlite3_close(db);
    return ok;
}

inline std::unique_ptr<mkb::Store> openOrFail(const std::filesystem::path& path) {
    mkb::Result<std::unique_ptr<mkb::Store>> store = mkb::Store::open(path);
    if (!store) {
        qWarning("%s", store.error().message.c_str());
        return nullptr;
    }
    return std::move(store).value();
}

inline mkb::TrialRecord sampleTrial(const std::string& model, int number, int replicate, const std::string& arm) {
    mkb::TrialRecord trial;
    trial.model = model;
    trial.suite = "problems";
    trial.problemNumber = number;
    trial.problemSlug = "softmax_rows";
    trial.family = "reduction";
    trial.replicate = replicate;
    trial.arm = arm;
    trial.dsl = "triton";
    char code[64];
    std::snprintf(code, sizeof code, "p%02d_r%d_%s", number, replicate, arm.c_str());
    trial.coordinate = code;
    trial.problemFingerprint = "pf";
    trial.graderFingerprint = "gf";
    return trial;
}

} // namespace storetest
