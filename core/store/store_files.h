// What a store's files on disk say before SQLite opens them: the path's length, the SQLite header, who holds the
// store open (another process, or this one), and what a write-ahead log beside it holds. Internal to core/store.
#pragma once

#include "core/util/result.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mkb::store {

/// The most characters SQLite takes for a database path once made absolute (its unix VFS's MAX_PATHNAME).
inline constexpr std::size_t kMostStorePathCharacters = 512;
/// The longest store file name: "-journal" must still fit in the file system's 255 bytes per name.
inline constexpr std::size_t kMostStoreNameBytes = 255 - 8;

/// Refuses a store path SQLite or the file system cannot take, naming the path, its length and the limit.
Status checkStorePathLength(const std::filesystem::path& path);

/// Checks an existing non-empty file's SQLite header without SQLite: the magic string, the page size and, when
/// checkLength, that the file holds every page the header claims (only meaningful for a file nobody is writing
/// and with no write-ahead log: a checkpoint in progress, or one a crash cut short, leaves the file short for a
/// while, and the log then holds the pages).
Status checkHeader(const std::filesystem::path& path, std::uintmax_t size, bool checkLength);

/// Where SQLite keeps the file and its -wal, -shm and -journal: the path with symbolic links resolved (SQLite's unix
/// VFS resolves them too); the path itself when it cannot be resolved.
std::filesystem::path sqliteFilePath(const std::filesystem::path& path);

/// Who else may be using a store file right now.
struct Holders {
    bool thisProcess = false;     // a Store of this process has the file open (its descriptors must not be touched)
    bool otherProcess = false;    // another process holds an SQLite lock on the store or on its -shm
    bool rollbackJournal = false; // a -journal beside it: a rollback-mode writer is (or was) mid-transaction
    std::uintmax_t walBytes = 0;  // the size of the -wal beside it (0 when there is none)

    bool live() const { return thisProcess || otherProcess || rollbackJournal; }
    /// A log longer than its 32-byte header may hold frames a reader would apply.
    bool walMayHoldFrames() const { return walBytes > 32; }
};
Holders holdersOf(const std::filesystem::path& path);

/// What a write-ahead log holds, read without SQLite (the frames SQLite would apply: valid salts and checksums, up
/// to the last commit).
struct WalSummary {
    bool validHeader = false;
    std::uint32_t pageSize = 0;
    std::int64_t committedFrames = 0;
    std::optional<std::uint32_t> applicationId; // from the last committed copy of page 1 in the log, if any
};
WalSummary summariseWal(const std::filesystem::path& walPath);

/// The application_id and page size recorded in a database file's header (nullopt when unreadable).
struct HeaderFields {
    std::uint32_t pageSize = 0;
    std::uint32_t applicationId = 0;
    bool walMode = false; // the file format's read and write versions say WAL (2)
};
std::optional<HeaderFields> headerFields(const std::filesystem::path& path);

/// Why SQLite could not create its -wal and -shm beside the file: the folder's errno in words ("Read-only file
/// system", "Permission denied"), or "" when it can.
std::string whyFolderUnwritable(const std::filesystem::path& file);

/// Keeps this process's open stores (by device and inode), so an inspection never opens and closes a descriptor
/// of a file SQLite holds locks on in this process (closing any descriptor drops the process's POSIX locks on it).
void noteOpenStore(const void* owner, const std::filesystem::path& path);
void forgetOpenStore(const void* owner);

} // namespace mkb::store
