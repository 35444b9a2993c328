// The one writer of output files named on a command line (--output, --json, --table): atomic, through symbolic links,
// never over anything that is not a regular file, and never over the project store itself.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// What an output file must not be, and how its errors name it.
struct OutputRules {
    std::string label = "--output";                    // how errors name the option, e.g. "--json"
    std::vector<std::filesystem::path> protectedFiles; // files never written over (compared by device and inode)
    bool refuseSqliteFiles = true; // never write over an SQLite database, -wal or -shm (any store, not only ours)
};

/// What an existing file is when its first bytes are SQLite's ("an SQLite database", "an SQLite write-ahead log
/// (-wal)", "an SQLite shared-memory index (-shm)"), or "" for anything else.
std::string sqliteFileKind(const std::filesystem::path& path);

/// The store file and the files SQLite keeps beside it (-wal, -shm, -journal): what no output may replace.
std::vector<std::filesystem::path> storeFiles(const std::filesystem::path& storePath);

/// Checks, before any work is done, that writeOutputFile(path, ..., rules) could replace path: it is not a folder,
/// FIFO, socket or device (also behind a symbolic link), not one of rules.protectedFiles (also through a symbolic or
/// hard link), not an SQLite database, -wal or -shm by its first bytes (when rules.refuseSqliteFiles: another
/// project's store), and its folder exists. Each error is one line naming the option, the path and what to do.
Status checkOutputPath(const std::filesystem::path& path, const OutputRules& rules = {});

/// Writes bytes to path atomically: a temporary file in the real folder of the destination, flushed, then renamed over
/// it, so a reader sees the old file or the new one and a failed write leaves the old one in place. When path is a
/// symbolic link, its target is written and the link stays. The file keeps its permissions (a new one gets the
/// umask's). Refuses what checkOutputPath refuses.
Status writeOutputFile(const std::filesystem::path& path, std::string_view bytes, const OutputRules& rules = {});

} // namespace mkb
