// File and string helpers with errors as values.
#include "core/util/text.h"

#include <fnmatch.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace mkb {

Result<std::string> readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return makeError("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        return makeError("error while reading " + path.string());
    }
    return buffer.str();
}

Status writeFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::path temporary = path;
    temporary += ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) {
            return makeError("cannot write " + temporary.string() + ": " + std::strerror(errno));
        }
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.flush();
        if (!out) {
            return makeError("error while writing " + temporary.string() + " (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        return makeError("cannot move " + temporary.string() + " to " + path.string() + ": " + ec.message());
    }
    return Ok{};
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

bool startsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool globMatch(std::string_view pattern, std::string_view text) {
    return ::fnmatch(std::string(pattern).c_str(), std::string(text).c_str(), 0) == 0;
}

} // namespace mkb
