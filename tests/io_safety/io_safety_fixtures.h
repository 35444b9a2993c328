// Fixtures for the hostile-input suites: running mkb, file bytes, a store with rows, and write-ahead logs made the way
// a crashed writer or a stray copy leaves them.
#pragma once

#include "core/store/store.h"
#include "support/testpaths.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace iosafety {

namespace fs = std::filesystem;

struct CliRun {
    int exitCode = -1; // -1: did not finish in time or crashed
    QString out;
    QString err;
};

/// Runs mkb with MKB_STORE unset; stdoutFile, when given, receives its standard output (e.g. /dev/full).
inline CliRun runMkb(const QStringList& arguments, const QString& stdoutFile = {}, int timeoutMs = 60000) {
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove("MKB_STORE");
    process.setProcessEnvironment(environment);
    if (!stdoutFile.isEmpty()) {
        process.setStandardOutputFile(stdoutFile);
    }
    process.start(QString::fromStdString(mkbtest::cliPath()), arguments);
    if (!process.waitForFinished(timeoutMs) || process.exitStatus() != QProcess::NormalExit) {
        process.kill();
        process.waitForFinished(5000);
        return {};
    }
    return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
            QString::fromUtf8(process.readAllStandardError())};
}

inline bool isOneLine(const QString& text) {
    return text.endsWith('\n') && text.count('\n') == 1;
}

inline std::string fileBytes(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

inline void writeBytes(const fs::path& path, const std::string& bytes) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline fs::path besides(const fs::path& path, const char* suffix) {
    fs::path side = path;
    side += suffix;
    return side;
}

inline bool exec(sqlite3* db, const std::string& sql) {
    return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
}

/// A closed workbench store holding `models` models and `problems` problems with sizeable sources (several MB for a
/// few hundred), written through the Store API.
inline bool writeStore(const fs::path& path, int models, int problems, int sourceBytes = 4000) {
    auto store = mkb::Store::open(path);
    if (!store) {
        return false;
    }
    return static_cast<bool>((*store)->transaction([&]() -> mkb::Status {
        for (int i = 0; i < models; ++i) {
            if (auto id = (*store)->ensureModel("model-" + std::to_string(i), "reference", "{}"); !id) {
                return id.error();
            }
        }
        for (int i = 1; i <= problems; ++i) {
            mkb::Problem problem;
            problem.suite = "bulk";
            problem.number = i;
            problem.slug = "p" + std::to_string(i);
            problem.family = "bulk";
            problem.source = std::string(static_cast<std::size_t>(sourceBytes), char('a' + i % 26));
            problem.fingerprint = "fp" + std::to_string(i);
            if (auto id = (*store)->upsertProblem(problem); !id) {
                return id.error();
            }
        }
        return mkb::Ok{};
    }));
}

/// Rows of a table, read through a plain read-only SQLite connection; -1 when it cannot be read.
inline long long rowCount(const fs::path& path, const std::string& table) {
    sqlite3* db = nullptr;
    sqlite3_stmt* statement = nullptr;
    long long rows = -1;
    const std::string sql = "SELECT count(*) FROM " + table;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
        rows = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return rows;
}

/// Runs sql on the database at source with checkpoints off and, while that connection still holds the changes in
/// its write-ahead log, copies the log to walCopy: what a process killed before closing leaves behind.
inline bool copyLiveWal(const fs::path& source, const std::string& sql, const fs::path& walCopy,
                        const fs::path& databaseCopy = {}) {
    sqlite3* db = nullptr;
    bool ok = sqlite3_open(source.c_str(), &db) == SQLITE_OK && exec(db, "PRAGMA journal_mode = WAL") &&
              exec(db, "PRAGMA wal_autocheckpoint = 0") && exec(db, sql);
    std::error_code code;
    if (ok && !databaseCopy.empty()) {
        ok = fs::copy_file(source, databaseCopy, fs::copy_options::overwrite_existing, code);
    }
    if (ok) {
        ok = fs::copy_file(besides(source, "-wal"), walCopy, fs::copy_options::overwrite_existing, code);
    }
    sqlite3_close(db);
    return ok;
}

} // namespace iosafety
