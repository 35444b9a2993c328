// File and string helpers with errors as values.
#include "core/util/text.h"

#include "core/util/output_file.h"

#include <fnmatch.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace mkb {

std::string fileKindInWords(unsigned int mode) {
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a folder";
    case S_IFIFO:
        return "a FIFO (named pipe)";
    case S_IFSOCK:
        return "a socket";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFLNK:
        return "a symbolic link";
    default:
        return "not a regular file";
    }
}

std::string errnoInWords(int error) {
    if (error == ELOOP) {
        return "it is a symbolic link that never resolves (it points back at itself, or round a loop of links); fix "
               "or remove the link";
    }
    return std::strerror(error);
}

namespace {

std::string limitInWords(std::size_t bytes) {
    std::string text = std::to_string(bytes) + " bytes";
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
        text += " (" + std::to_string(bytes >> 20) + " MiB)";
    }
    return text;
}

std::string overLimit(const std::string& shown, std::size_t maxBytes, const std::string& size) {
    return "cannot read " + shown + ": it is " + size + ", over the limit of " + limitInWords(maxBytes) +
           " for this input; check that it is the right file";
}

/// Closes a descriptor when the read is done, whichever way it ends.
struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

} // namespace

Result<std::string> readFile(const std::filesystem::path& path, std::size_t maxBytes) {
    const std::string shown = safeOneLine(path.string());
    auto notRegular = [&](unsigned int mode) {
        return makeError("cannot read " + shown + ": it is " + fileKindInWords(mode) +
                         ", not a regular file; pass a regular file");
    };
    // Looking first means a device or FIFO is never even opened; fstat below closes the race with a swap.
    struct stat before {};
    if (::stat(path.c_str(), &before) != 0) {
        return makeError("cannot read " + shown + ": " + errnoInWords(errno));
    }
    if (!S_ISREG(before.st_mode)) {
        return notRegular(before.st_mode);
    }
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
    if (file.fd < 0) {
        return makeError("cannot read " + shown + ": " + errnoInWords(errno));
    }
    struct stat opened {};
    if (::fstat(file.fd, &opened) != 0) {
        return makeError("cannot read " + shown + ": " + std::strerror(errno));
    }
    if (!S_ISREG(opened.st_mode)) {
        return notRegular(opened.st_mode);
    }
    if (opened.st_size > 0 && static_cast<std::uintmax_t>(opened.st_size) > maxBytes) {
        return makeError(overLimit(shown, maxBytes, std::to_string(opened.st_size) + " bytes"));
    }
    // Read to the end rather than st_size bytes: /proc files report size 0, and a file may grow while we read.
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(opened.st_size));
    char chunk[65536];
    while (true) {
        const ssize_t got = ::read(file.fd, chunk, sizeof chunk);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return makeError("error while reading " + shown + ": " + std::strerror(errno));
        }
        if (got == 0) {
            break;
        }
        if (bytes.size() + static_cast<std::size_t>(got) > maxBytes) {
            return makeError(overLimit(shown, maxBytes, "more than " + std::to_string(maxBytes) + " bytes"));
        }
        bytes.append(chunk, static_cast<std::size_t>(got));
    }
    return bytes;
}

Status writeFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
    // One writer for every file the workbench replaces: atomic, through symbolic links, never over a folder or FIFO.
    OutputRules rules;
    rules.label = "destination";
    rules.refuseSqliteFiles = false; // the workbench's own files (kernels, skills, shards) whatever their bytes
    return writeOutputFile(path, bytes, rules);
}

bool isValidUtf8(std::string_view bytes, std::size_t* badOffset) {
    const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t n = bytes.size();
    std::size_t i = 0;
    auto fail = [&](std::size_t at) {
        if (badOffset) {
            *badOffset = at;
        }
        return false;
    };
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t extra = 0;
        std::uint32_t codePoint = 0;
        if ((c & 0xE0) == 0xC0) {
            extra = 1;
            codePoint = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            codePoint = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3;
            codePoint = c & 0x07;
        } else {
            return fail(i);
        }
        for (std::size_t k = 1; k <= extra; ++k) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) {
                return fail(i);
            }
            codePoint = (codePoint << 6) | (s[i + k] & 0x3F);
        }
        bool overlong = (extra == 1 && codePoint < 0x80) || (extra == 2 && codePoint < 0x800) ||
                        (extra == 3 && codePoint < 0x10000);
        if (overlong || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF)) {
            return fail(i);
        }
        i += extra + 1;
    }
    return true;
}

std::vector<std::string> splitString(std::string_view text, char separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
        std::size_t end = text.find(separator, start);
        parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) {
            break;
        }
        start = end + 1;
    }
    return parts;
}

std::string_view trimmed(std::string_view text) {
    const char* whitespace = " \t\r\n\f\v";
    std::size_t begin = text.find_first_not_of(whitespace);
    if (begin == std::string_view::npos) {
        return {};
    }
    std::size_t end = text.find_last_not_of(whitespace);
    return text.substr(begin, end - begin + 1);
}

bool startsWith(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

bool globMatch(std::string_view pattern, std::string_view text) {
    return ::fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

std::string safeOneLine(std::string_view text) {
    static const char* const kHex = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    auto hexEscape = [&](unsigned char byte) {
        out += "\\x";
        out += kHex[byte >> 4];
        out += kHex[byte & 0xF];
    };
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            switch (c) {
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    hexEscape(c);
                } else {
                    out += static_cast<char>(c);
                }
            }
            ++i;
            continue;
        }
        // A multi-byte character: copy it when it is well-formed and not a control or line separator.
        std::size_t length = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        const std::string_view character = text.substr(i, length);
        if (length == 0 || character.size() < length || !isValidUtf8(character)) {
            hexEscape(c);
            ++i;
            continue;
        }
        const bool c1Control = length == 2 && c == 0xC2 && static_cast<unsigned char>(character[1]) < 0xA0;
        const bool lineSeparator = character == "\xE2\x80\xA8" || character == "\xE2\x80\xA9";
        if (c1Control || lineSeparator) {
            for (char byte : character) {
                hexEscape(static_cast<unsigned char>(byte));
            }
        } else {
            out += character;
        }
        i += length;
    }
    return out;
}

} // namespace mkb
