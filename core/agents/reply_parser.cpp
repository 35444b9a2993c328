// The reply convention, implemented: fences, file names from info strings or the line above, and DONE.
#include "core/agents/reply_parser.h"

#include "core/util/text.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace mkb {

namespace {

constexpr std::string_view kKernelFile = "kernel.py";
constexpr std::string_view kSkillFile = "SKILL.md";

struct Fence {
    char marker = 0;
    std::size_t length = 0;
    std::string_view info;
};

std::string lowered(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::optional<Fence> openingFence(std::string_view line) {
    const std::string_view body = trimmed(line);
    if (body.size() < 3 || (body[0] != '`' && body[0] != '~')) {
        return std::nullopt;
    }
    Fence fence;
    fence.marker = body[0];
    while (fence.length < body.size() && body[fence.length] == fence.marker) {
        ++fence.length;
    }
    if (fence.length < 3) {
        return std::nullopt;
    }
    fence.info = trimmed(body.substr(fence.length));
    return fence;
}

bool closesFence(std::string_view line, const Fence& fence) {
    const std::string_view body = trimmed(line);
    return body.size() >= fence.length &&
           std::all_of(body.begin(), body.end(), [&](char c) { return c == fence.marker; });
}

/// A token that looks like a file name: word characters, dots, dashes and slashes, with an extension.
bool looksLikeFileName(std::string_view token) {
    const std::size_t dot = token.rfind('.');
    if (token.empty() || dot == std::string_view::npos || dot == 0 || dot + 1 >= token.size()) {
        return false;
    }
    for (char c : token) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) {
            return false;
        }
    }
    return std::all_of(token.begin() + static_cast<std::ptrdiff_t>(dot) + 1, token.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

std::string_view stripDecoration(std::string_view text) {
    constexpr std::string_view decoration = " \t#*_`:>-\"'()[]";
    const std::size_t first = text.find_first_not_of(decoration);
    if (first == std::string_view::npos) {
        return {};
    }
    const std::size_t last = text.find_last_not_of(decoration);
    return text.substr(first, last - first + 1);
}

std::vector<std::string_view> words(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t at = 0;
    while (at < text.size()) {
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) {
            ++at;
        }
        const std::size_t start = at;
        while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at]))) {
            ++at;
        }
        if (at > start) {
            out.push_back(text.substr(start, at - start));
        }
    }
    return out;
}

/// The file named by a fence's info string: title=, file= or filename= (quoted or not), or a bare file-name token.
std::optional<std::string> nameFromInfo(std::string_view info) {
    for (std::string_view key : {"title=", "file=", "filename=", "name="}) {
        const std::size_t at = lowered(info).find(key);
        if (at == std::string::npos) {
            continue;
        }
        std::string_view value = info.substr(at + key.size());
        if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
            const char quote = value[0];
            value.remove_prefix(1);
            return std::string(value.substr(0, value.find(quote)));
        }
        return std::string(value.substr(0, value.find_first_of(" \t}")));
    }
    for (std::string_view token : words(info)) {
        token = stripDecoration(token);
        if (const std::size_t colon = token.find(':'); colon != std::string_view::npos) {
            token = token.substr(colon + 1); // "python:kernel.py"
        }
        if (looksLikeFileName(token)) {
            return std::string(token);
        }
    }
    return std::nullopt;
}

/// The file named by the prose line just above a fence: the whole line when it is only a file name (after markdown
/// decoration and a "File:" label are stripped), or kernel.py / SKILL.md mentioned once in a short sentence.
std::optional<std::string> nameFromLineAbove(std::string_view line) {
    std::string_view bare = stripDecoration(line);
    for (std::string_view label : {"file", "filename", "File", "Filename", "FILE"}) {
        if (startsWith(bare, label) && bare.size() > label.size() &&
            (bare[label.size()] == ':' || bare[label.size()] == ' ')) {
            bare = stripDecoration(bare.substr(label.size()));
            break;
        }
    }
    if (looksLikeFileName(bare)) {
        return std::string(bare);
    }
    if (line.size() > 160) {
        return std::nullopt;
    }
    std::optional<std::string> mentioned;
    int mentions = 0;
    for (std::string_view token : words(line)) {
        token = stripDecoration(token);
        while (!token.empty() && (token.back() == ',' || token.back() == '.' || token.back() == ';')) {
            token = stripDecoration(token.substr(0, token.size() - 1));
        }
        const std::string name = lowered(token);
        if (name == lowered(kKernelFile) || name == lowered(kSkillFile)) {
            ++mentions;
            mentioned = std::string(token);
        }
    }
    return mentions == 1 ? mentioned : std::nullopt;
}

bool isDoneLine(std::string_view line) {
    std::string_view bare = stripDecoration(line);
    while (!bare.empty() && (bare.back() == '.' || bare.back() == '!')) {
        bare.remove_suffix(1);
    }
    return bare == "DONE";
}

ReplyParse defective(ReplyDefect defect, std::string detail) {
    ReplyParse parse;
    parse.defect = defect;
    parse.detail = std::move(detail);
    return parse;
}

} // namespace

const char* toString(ReplyDefect defect) {
    switch (defect) {
    case ReplyDefect::None:
        return "well-formed";
    case ReplyDefect::Empty:
        return "empty reply";
    case ReplyDefect::TooLarge:
        return "reply too large";
    case ReplyDefect::InvalidUtf8:
        return "invalid UTF-8";
    case ReplyDefect::NoCodeBlock:
        return "no code block";
    case ReplyDefect::UnnamedCodeBlock:
        return "unnamed code block";
    case ReplyDefect::TwoKernels:
        return "two kernel.py blocks";
    case ReplyDefect::TwoSkills:
        return "two SKILL.md blocks";
    case ReplyDefect::WrongFileName:
        return "wrong file name";
    case ReplyDefect::UnterminatedBlock:
        return "unterminated code block";
    case ReplyDefect::EmptyKernel:
        return "empty kernel.py";
    }
    return "malformed reply";
}

ReplyParse parseReply(std::string_view text, std::size_t maxReplyBytes) {
    if (text.size() > maxReplyBytes) {
        return defective(ReplyDefect::TooLarge, "the reply has " + std::to_string(text.size()) +
                                                    " bytes, more than the limit of " + std::to_string(maxReplyBytes));
    }
    std::size_t badOffset = 0;
    if (!isValidUtf8(text, &badOffset)) {
        return defective(ReplyDefect::InvalidUtf8,
                         "the reply is not valid UTF-8 (first bad byte at offset " + std::to_string(badOffset) + ")");
    }
    if (trimmed(text).empty()) {
        return defective(ReplyDefect::Empty, "the reply was empty");
    }

    std::string normalised(text);
    normalised.erase(std::remove(normalised.begin(), normalised.end(), '\r'), normalised.end());
    const std::vector<std::string> lines = splitString(normalised, '\n');

    ReplyParse parse;
    int kernels = 0;
    int skills = 0;
    int unnamedBlocks = 0;
    std::vector<std::string> wrongNames;
    std::string_view lastProse;
    for (std::size_t index = 0; index < lines.size(); ++index) {
        const std::string& line = lines[index];
        const std::optional<Fence> fence = openingFence(line);
        if (!fence) {
            if (!trimmed(line).empty()) {
                lastProse = line;
                parse.reply.done = parse.reply.done || isDoneLine(line);
            }
            continue;
        }
        std::optional<std::string> name = nameFromInfo(fence->info);
        if (!name && !lastProse.empty()) {
            name = nameFromLineAbove(lastProse);
        }
        std::string content;
        bool closed = false;
        for (++index; index < lines.size(); ++index) {
            if (closesFence(lines[index], *fence)) {
                closed = true;
                break;
            }
            content += lines[index];
            content += '\n';
        }
        if (!closed) {
            return defective(ReplyDefect::UnterminatedBlock,
                             "a code block opened with " + std::string(fence->length, fence->marker) +
                                 " was never closed (was the reply cut short by the token limit?)");
        }
        lastProse = {};
        if (!name) {
            ++unnamedBlocks;
        } else if (lowered(*name) == lowered(kKernelFile)) {
            ++kernels;
            parse.reply.kernel = std::move(content);
        } else if (lowered(*name) == lowered(kSkillFile)) {
            ++skills;
            parse.reply.skill = std::move(content);
        } else {
            wrongNames.push_back(*name);
        }
    }

    if (kernels > 1) {
        return defective(ReplyDefect::TwoKernels, "the reply holds " + std::to_string(kernels) +
                                                      " kernel.py blocks; send exactly one, with the whole file");
    }
    if (skills > 1) {
        return defective(ReplyDefect::TwoSkills, "the reply holds " + std::to_string(skills) +
                                                     " SKILL.md blocks; send exactly one, with the whole file");
    }
    if (!wrongNames.empty()) {
        std::string names;
        for (const std::string& name : wrongNames) {
            names += (names.empty() ? "" : ", ") + name;
        }
        return defective(ReplyDefect::WrongFileName,
                         "the reply holds blocks named " + names + "; only kernel.py and SKILL.md are read");
    }
    if (parse.reply.kernel && trimmed(*parse.reply.kernel).empty()) {
        return defective(ReplyDefect::EmptyKernel, "the kernel.py block is empty");
    }
    if (!parse.reply.kernel && !parse.reply.skill && !parse.reply.done) {
        if (unnamedBlocks > 0) {
            return defective(ReplyDefect::UnnamedCodeBlock,
                             "the reply holds code blocks but none is named kernel.py or SKILL.md");
        }
        return defective(ReplyDefect::NoCodeBlock, "the reply holds no kernel.py block and does not say DONE");
    }
    return parse;
}

} // namespace mkb
