// Writes output files named on the command line safely: resolves links, refuses what is not a regular file or is the
// store, and replaces the file atomically from a temporary file in the destination's real folder.
#include "core/util/output_file.h"

#include "core/util/text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <system_error>

namespace mkb {
namespace {

namespace fs = std::filesystem;

constexpr int kMostLinkHops = 40; // as the kernel's own limit on symbolic links in one lookup

/// Where the bytes will land: the final name behind any symbolic links, in its folder's real (canonical) path.
struct Destination {
    fs::path file;                   // realFolder / name
    std::optional<struct stat> info; // the existing file, when there is one
};

Error failure(const OutputRules& rules, const fs::path& path, const std::string& what) {
    return makeError(rules.label + " " + path.string() + ": " + what);
}

Error systemFailure(const OutputRules& rules, const fs::path& path, const std::string& doing, int error) {
    if (error == ENAMETOOLONG) {
        return failure(rules, path,
                       "the path is too long (" + std::to_string(path.native().size()) + " characters; at most " +
                           std::to_string(PATH_MAX - 1) + " in all and " + std::to_string(NAME_MAX) +
                           " per name); choose a shorter path");
    }
    return failure(rules, path, doing + ": " + std::strerror(error));
}

/// Follows symbolic links from path to the name that is not one (it may not exist yet).
Result<fs::path> finalName(const fs::path& path, const OutputRules& rules) {
    fs::path current = path;
    for (int hop = 0; hop <= kMostLinkHops; ++hop) {
        struct stat info {};
        if (::lstat(current.c_str(), &info) != 0) {
            const int error = errno;
            if (error == ENOENT) {
                return current; // a new file (or a link pointing at one)
            }
            return systemFailure(rules, path, "cannot look at " + current.string(), error);
        }
        if (!S_ISLNK(info.st_mode)) {
            return current;
        }
        std::error_code code;
        const fs::path target = fs::read_symlink(current, code);
        if (code) {
            return failure(rules, path, "cannot read the symbolic link " + current.string() + ": " + code.message());
        }
        current = target.is_absolute() ? target : current.parent_path() / target;
    }
    return failure(rules, path, "too many levels of symbolic links; name the file itself");
}

Result<Destination> destinationOf(const fs::path& path, const OutputRules& rules) {
    if (path.empty()) {
        return makeError(rules.label + " needs a file name");
    }
    // Following every link first: a FIFO, device or folder at the end is refused before anything is created.
    struct stat followed {};
    if (::stat(path.c_str(), &followed) == 0) {
        if (S_ISDIR(followed.st_mode)) {
            return makeError(rules.label + " " + path.string() + " is a directory; name a file (for example " +
                             (path / "report.txt").string() + ")");
        }
        if (!S_ISREG(followed.st_mode)) {
            return makeError(rules.label + " " + path.string() + " is " + fileKindInWords(followed.st_mode) +
                             ", not a regular file; name a regular file" +
                             (rules.label.rfind("--", 0) == 0
                                  ? ", or leave " + rules.label + " out to print to standard output"
                                  : std::string()));
        }
    } else if (errno != ENOENT) {
        return systemFailure(rules, path, "cannot look at it", errno);
    }
    Result<fs::path> name = finalName(path, rules);
    if (!name) {
        return name.error();
    }
    const fs::path filename = name->filename();
    if (filename.empty() || filename == "." || filename == "..") {
        return makeError(rules.label + " " + path.string() + " is a directory; name a file");
    }
    const fs::path folder = name->has_parent_path() ? name->parent_path() : fs::path(".");
    struct stat folderInfo {};
    if (::stat(folder.c_str(), &folderInfo) != 0) {
        const int error = errno;
        if (error == ENOENT) {
            return failure(rules, path, "its folder " + folder.string() + " does not exist; create it first");
        }
        return systemFailure(rules, path, "cannot look at its folder " + folder.string(), error);
    }
    if (!S_ISDIR(folderInfo.st_mode)) {
        return failure(rules, path, folder.string() + " is not a directory");
    }
    std::error_code code;
    const fs::path realFolder = fs::canonical(folder, code);
    if (code) {
        return failure(rules, path, "cannot resolve its folder " + folder.string() + ": " + code.message());
    }
    Destination destination;
    destination.file = realFolder / filename;
    struct stat existing {};
    if (::lstat(destination.file.c_str(), &existing) == 0) {
        if (!S_ISREG(existing.st_mode)) {
            return makeError(rules.label + " " + path.string() + " is " + fileKindInWords(existing.st_mode) +
                             ", not a regular file; name a regular file");
        }
        destination.info = existing;
    } else if (errno != ENOENT) {
        return systemFailure(rules, path, "cannot look at " + destination.file.string(), errno);
    }
    return destination;
}

Status refuseProtected(const fs::path& path, const Destination& destination, const OutputRules& rules) {
    if (rules.refuseSqliteFiles && destination.info) {
        if (const std::string kind = sqliteFileKind(destination.file); !kind.empty()) {
            return makeError(rules.label + " " + path.string() + " is " + kind +
                             " (a project store's, by its first bytes); writing there would destroy it, so it was " +
                             "left untouched: name another file");
        }
    }
    for (const fs::path& guarded : rules.protectedFiles) {
        struct stat info {};
        bool same = false;
        if (::stat(guarded.c_str(), &info) == 0) {
            same =
                destination.info && info.st_dev == destination.info->st_dev && info.st_ino == destination.info->st_ino;
        } else {
            // Not there yet (a store's -wal between writers): compare where it would be.
            std::error_code code;
            const fs::path where = fs::weakly_canonical(fs::absolute(guarded, code), code);
            same = !code && where == destination.file;
        }
        if (same) {
            return makeError(rules.label + " " + path.string() + " is the project store's file " + guarded.string() +
                             " (the same file, also through a link); writing there would destroy the store: name " +
                             "another file");
        }
    }
    return Ok{};
}

/// Writes all of bytes to fd; returns 0 or the errno of the failure.
int writeAll(int fd, std::string_view bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t written = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        done += static_cast<std::size_t>(written);
    }
    return ::fsync(fd) == 0 ? 0 : errno;
}

} // namespace

std::string sqliteFileKind(const fs::path& path) {
    unsigned char head[56] = {};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return {};
    }
    const ssize_t got = ::read(fd, head, sizeof head);
    ::close(fd);
    if (got >= 16 && std::memcmp(head, "SQLite format 3", 16) == 0) {
        return "an SQLite database";
    }
    const std::uint32_t magic = (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) |
                                (std::uint32_t{head[2]} << 8) | std::uint32_t{head[3]};
    if (got >= 32 && (magic == 0x377f0682 || magic == 0x377f0683)) {
        return "an SQLite write-ahead log (-wal)";
    }
    // A -shm starts with two copies of its 48-byte header, each opening with version 3007000 in native byte order.
    std::uint32_t first = 0;
    std::uint32_t second = 0;
    std::memcpy(&first, head, 4);
    std::memcpy(&second, head + 48, 4);
    if (got >= 52 && first == 3007000 && second == 3007000) {
        return "an SQLite shared-memory index (-shm)";
    }
    return {};
}

std::vector<fs::path> storeFiles(const fs::path& storePath) {
    std::vector<fs::path> files{storePath};
    std::error_code code;
    const fs::path real = fs::canonical(storePath, code); // SQLite keeps the side files beside a link's target
    for (const fs::path& base :
         code || real == storePath ? std::vector<fs::path>{storePath} : std::vector<fs::path>{storePath, real}) {
        for (const char* suffix : {"-wal", "-shm", "-journal"}) {
            fs::path side = base;
            side += suffix;
            files.push_back(side);
        }
    }
    return files;
}

Status checkOutputPath(const fs::path& path, const OutputRules& rules) {
    Result<Destination> destination = destinationOf(path, rules);
    if (!destination) {
        return destination.error();
    }
    return refuseProtected(path, *destination, rules);
}

Status writeOutputFile(const fs::path& path, std::string_view bytes, const OutputRules& rules) {
    Result<Destination> destination = destinationOf(path, rules);
    if (!destination) {
        return destination.error();
    }
    if (Status allowed = refuseProtected(path, *destination, rules); !allowed) {
        return allowed;
    }
    // A short name of our own, so a long file name cannot push the temporary one over NAME_MAX.
    static std::atomic<unsigned> counter{0};
    const fs::path folder = destination->file.parent_path();
    fs::path temporary;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        temporary = folder / (".mkb-output-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp");
        fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) {
            return systemFailure(rules, path, "cannot create a temporary file in " + folder.string(), errno);
        }
    }
    if (fd < 0) {
        return failure(rules, path, "cannot create a temporary file in " + folder.string());
    }
    int error = writeAll(fd, bytes);
    if (error == 0 && destination->info && ::fchmod(fd, destination->info->st_mode & 07777) != 0) {
        error = errno;
    }
    if (::close(fd) != 0 && error == 0) {
        error = errno;
    }
    if (error != 0) {
        ::unlink(temporary.c_str());
        return failure(rules, path,
                       std::string("writing failed (") + std::strerror(error) + "); " +
                           (destination->info ? "the file was left as it was" : "nothing was written"));
    }
    if (::rename(temporary.c_str(), destination->file.c_str()) != 0) {
        error = errno;
        ::unlink(temporary.c_str());
        return systemFailure(rules, path, "cannot replace " + destination->file.string(), error);
    }
    return Ok{};
}

} // namespace mkb
