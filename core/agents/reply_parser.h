// Reading a chat model's reply: the kernel.py and SKILL.md fenced blocks, the DONE signal, and what makes it malformed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mkb {

/// Why a reply cannot be used. Each of these gets a correction request and costs no submission.
enum class ReplyDefect {
    None,
    Empty,             // nothing but whitespace
    TooLarge,          // over the reply limit
    InvalidUtf8,       // not well-formed UTF-8
    NoCodeBlock,       // neither a kernel.py block nor DONE
    UnnamedCodeBlock,  // code blocks, none named kernel.py or SKILL.md
    TwoKernels,        // more than one kernel.py block
    TwoSkills,         // more than one SKILL.md block
    WrongFileName,     // a block named after some other file
    UnterminatedBlock, // a fence opened and never closed (often a reply cut at max_tokens)
    EmptyKernel,       // a kernel.py block with nothing in it
};

const char* toString(ReplyDefect defect);

/// What a well-formed reply holds.
struct ParsedReply {
    std::optional<std::string> kernel; // the kernel.py block's text
    std::optional<std::string> skill;  // the SKILL.md block's text
    bool done = false;                 // a line reading DONE outside any block
};

struct ReplyParse {
    ReplyDefect defect = ReplyDefect::None;
    std::string detail; // one sentence saying what was wrong (empty when well-formed)
    ParsedReply reply;
};

/// Parses a reply under the convention of resources/prompts/reply_format.md: a fenced block (``` or ~~~, three or
/// more) is a file when its info string carries title=<name> (or file=<name>, quotes allowed), or when the last
/// non-blank line before it names the file (`kernel.py`, **SKILL.md**, "### kernel.py", "File: kernel.py:").
/// Unnamed blocks are ignored when a named one is present. A line reading DONE (optionally in ** or `) outside
/// blocks ends the attempt.
ReplyParse parseReply(std::string_view text, std::size_t maxReplyBytes);

} // namespace mkb
