// Reads a store's files without SQLite: path limits, the header, SQLite's locks held by others, and a -wal's frames.
#include "core/store/store_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>
#include <vector>

namespace mkb::store {
namespace {

namespace fs = std::filesystem;

// SQLite's unix locking protocol (os_unix.c): connections lock bytes of the database file from PENDING_BYTE on
// (pending, reserved, then 510 shared bytes), and every connection in WAL mode holds a shared lock on the -shm's
// "dead man switch" byte for as long as it is open.
constexpr off_t kPendingByte = 0x40000000;
constexpr off_t kLockBytes = 2 + 510;
constexpr off_t kShmDeadManSwitch = 120 + 8;

constexpr std::uint32_t kWalMagicLittleEndian = 0x377f0682;
constexpr std::uint32_t kWalMagicBigEndian = 0x377f0683;

const char* const kLeftUntouched = "; it was left untouched: move it aside, or name another store with --store";

std::uint32_t bigEndian(const unsigned char* bytes, int count) {
    std::uint32_t value = 0;
    for (int i = 0; i < count; ++i) {
        value = (value << 8) | bytes[i];
    }
    return value;
}

fs::path besides(const fs::path& path, const char* suffix) {
    fs::path side = path;
    side += suffix;
    return side;
}

/// Whether a process other than this one holds any lock on [start, start + length) of the file.
bool lockedByOtherProcess(const fs::path& path, off_t start, off_t length) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return false;
    }
    struct flock query {};
    query.l_type = F_WRLCK; // conflicts with any lock, shared or exclusive
    query.l_whence = SEEK_SET;
    query.l_start = start;
    query.l_len = length;
    const bool held = ::fcntl(fd, F_GETLK, &query) == 0 && query.l_type != F_UNLCK;
    ::close(fd);
    return held;
}

std::uintmax_t sizeOrZero(const fs::path& path) {
    std::error_code code;
    const std::uintmax_t size = fs::file_size(path, code);
    return code ? 0 : size;
}

using FileKey = std::pair<dev_t, ino_t>;

std::mutex& registryMutex() {
    static std::mutex mutex;
    return mutex;
}
std::map<const void*, FileKey>& registry() {
    static std::map<const void*, FileKey> owners;
    return owners;
}

/// SQLite's WAL checksum (fileformat2 §4.1): 32-bit words in the log's byte order, two running sums.
void walChecksum(bool bigEndianWords, const unsigned char* data, std::size_t size, std::uint32_t sums[2]) {
    for (std::size_t i = 0; i + 8 <= size; i += 8) {
        std::uint32_t first = 0;
        std::uint32_t second = 0;
        if (bigEndianWords) {
            first = bigEndian(data + i, 4);
            second = bigEndian(data + i + 4, 4);
        } else {
            for (int k = 3; k >= 0; --k) {
                first = (first << 8) | data[i + static_cast<std::size_t>(k)];
                second = (second << 8) | data[i + 4 + static_cast<std::size_t>(k)];
            }
        }
        sums[0] += first + sums[1];
        sums[1] += second + sums[0];
    }
}

} // namespace

Status checkStorePathLength(const fs::path& path) {
    std::error_code code;
    const fs::path absolute = fs::absolute(path, code);
    const std::size_t length = (code ? path : absolute).native().size();
    if (length > kMostStorePathCharacters) {
        return makeError("store path " + path.string() + " is too long: " + std::to_string(length) +
                         " characters once made absolute, and SQLite takes at most " +
                         std::to_string(kMostStorePathCharacters) + "; choose a shorter path (or a shorter folder)");
    }
    for (const fs::path& part : absolute) {
        if (part.native().size() > NAME_MAX) {
            return makeError("store path " + path.string() + " has a name of " + std::to_string(part.native().size()) +
                             " bytes, and the file system takes at most " + std::to_string(NAME_MAX) +
                             " per folder or file name; choose a shorter name");
        }
    }
    if (path.filename().native().size() > kMostStoreNameBytes) {
        return makeError("store path " + path.string() + " has a file name of " +
                         std::to_string(path.filename().native().size()) + " bytes; at most " +
                         std::to_string(kMostStoreNameBytes) +
                         " leave room for SQLite's \"-journal\" beside it: " + "choose a shorter name");
    }
    return Ok{};
}

Status checkHeader(const fs::path& path, std::uintmax_t size, bool checkLength) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return makeError("store " + path.string() + " cannot be read (check its permissions)");
    }
    unsigned char header[100] = {};
    file.read(reinterpret_cast<char*>(header), sizeof header);
    static const char kMagic[] = "SQLite format 3"; // 16 bytes with its terminating zero
    if (size < 100 || static_cast<std::size_t>(file.gcount()) < 100 || std::memcmp(header, kMagic, 16) != 0) {
        return makeError("store " + path.string() + " is not an SQLite database (corrupt, or some other file)" +
                         kLeftUntouched);
    }
    std::uint32_t pageSize = bigEndian(header + 16, 2);
    if (pageSize == 1) {
        pageSize = 65536;
    }
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0) {
        return makeError("store " + path.string() + " has a corrupt SQLite header (page size " +
                         std::to_string(pageSize) + ")" + kLeftUntouched);
    }
    if (!checkLength) {
        return Ok{};
    }
    const std::uint32_t changeCounter = bigEndian(header + 24, 4);
    const std::uint32_t pageCount = bigEndian(header + 28, 4);
    const std::uint32_t validFor = bigEndian(header + 92, 4);
    const bool pageCountValid = pageCount > 0 && changeCounter == validFor;
    const std::uintmax_t expected = static_cast<std::uintmax_t>(pageCount) * pageSize;
    if (pageCountValid && size < expected) {
        return makeError("store " + path.string() + " is truncated (" + std::to_string(size) + " bytes, the header " +
                         "says " + std::to_string(pageCount) + " pages of " + std::to_string(pageSize) + ", " +
                         std::to_string(expected) + " bytes)" + kLeftUntouched);
    }
    if (size % pageSize != 0) {
        const std::uintmax_t pages = size / pageSize;
        const std::uintmax_t extra = size % pageSize;
        if (pageCountValid) {
            return makeError("store " + path.string() + " has " + std::to_string(size - expected) +
                             " bytes after its " + std::to_string(pageCount) + " pages of " + std::to_string(pageSize) +
                             " (" + std::to_string(expected) + " bytes): something was appended to it" +
                             kLeftUntouched);
        }
        return makeError("store " + path.string() + " is not a whole number of its " + std::to_string(pageSize) +
                         "-byte pages (" + std::to_string(size) + " bytes: " + std::to_string(pages) + " pages and " +
                         std::to_string(extra) + " bytes more): it was cut short or had bytes appended" +
                         kLeftUntouched);
    }
    return Ok{};
}

fs::path sqliteFilePath(const fs::path& path) {
    std::error_code code;
    const fs::path resolved = fs::canonical(path, code);
    return code ? path : resolved;
}

Holders holdersOf(const fs::path& given) {
    const fs::path path = sqliteFilePath(given);
    Holders holders;
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        const std::lock_guard<std::mutex> lock(registryMutex());
        for (const auto& [owner, key] : registry()) {
            holders.thisProcess = holders.thisProcess || key == FileKey{info.st_dev, info.st_ino};
        }
    }
    holders.walBytes = sizeOrZero(besides(path, "-wal"));
    holders.rollbackJournal = sizeOrZero(besides(path, "-journal")) > 0;
    if (!holders.thisProcess) {
        holders.otherProcess = lockedByOtherProcess(path, kPendingByte, kLockBytes) ||
                               lockedByOtherProcess(besides(path, "-shm"), kShmDeadManSwitch, 1);
    }
    return holders;
}

WalSummary summariseWal(const fs::path& walPath) {
    WalSummary summary;
    std::ifstream file(walPath, std::ios::binary);
    unsigned char header[32] = {};
    if (!file.read(reinterpret_cast<char*>(header), sizeof header)) {
        return summary;
    }
    const std::uint32_t magic = bigEndian(header, 4);
    if (magic != kWalMagicLittleEndian && magic != kWalMagicBigEndian) {
        return summary;
    }
    const bool bigEndianWords = magic == kWalMagicBigEndian;
    const std::uint32_t pageSize = bigEndian(header + 8, 4);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0) {
        return summary;
    }
    std::uint32_t sums[2] = {0, 0};
    walChecksum(bigEndianWords, header, 24, sums);
    if (sums[0] != bigEndian(header + 24, 4) || sums[1] != bigEndian(header + 28, 4)) {
        return summary;
    }
    summary.validHeader = true;
    summary.pageSize = pageSize;
    std::vector<unsigned char> frame(24 + pageSize);
    std::int64_t pending = 0;
    std::optional<std::uint32_t> pendingApplicationId;
    while (file.read(reinterpret_cast<char*>(frame.data()), static_cast<std::streamsize>(frame.size()))) {
        const std::uint32_t pageNumber = bigEndian(frame.data(), 4);
        const std::uint32_t commitSize = bigEndian(frame.data() + 4, 4);
        if (pageNumber == 0 || std::memcmp(frame.data() + 8, header + 16, 8) != 0) {
            break; // salts from an earlier generation of the log: SQLite stops here too
        }
        walChecksum(bigEndianWords, frame.data(), 8, sums);
        walChecksum(bigEndianWords, frame.data() + 24, pageSize, sums);
        if (sums[0] != bigEndian(frame.data() + 16, 4) || sums[1] != bigEndian(frame.data() + 20, 4)) {
            break;
        }
        ++pending;
        if (pageNumber == 1) {
            pendingApplicationId = bigEndian(frame.data() + 24 + 68, 4);
        }
        if (commitSize != 0) {
            summary.committedFrames += pending;
            pending = 0;
            if (pendingApplicationId) {
                summary.applicationId = pendingApplicationId;
            }
            pendingApplicationId.reset();
        }
    }
    return summary;
}

std::optional<HeaderFields> headerFields(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    unsigned char header[100] = {};
    if (!file.read(reinterpret_cast<char*>(header), sizeof header)) {
        return std::nullopt;
    }
    HeaderFields fields;
    fields.pageSize = bigEndian(header + 16, 2);
    if (fields.pageSize == 1) {
        fields.pageSize = 65536;
    }
    fields.applicationId = bigEndian(header + 68, 4);
    fields.walMode = header[18] == 2 && header[19] == 2;
    return fields;
}

std::string whyFolderUnwritable(const fs::path& file) {
    const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
    if (::access(folder.c_str(), W_OK | X_OK) == 0) {
        return {};
    }
    return std::strerror(errno);
}

void noteOpenStore(const void* owner, const fs::path& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        return;
    }
    const std::lock_guard<std::mutex> lock(registryMutex());
    registry()[owner] = FileKey{info.st_dev, info.st_ino};
}

void forgetOpenStore(const void* owner) {
    const std::lock_guard<std::mutex> lock(registryMutex());
    registry().erase(owner);
}

} // namespace mkb::store
