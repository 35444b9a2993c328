// Rows of the project store that are not trials: devices, models, invocations and skill annotations, as plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mkb {

/// A GPU the grader ran on, with the peaks measured when it was probed.
struct DeviceRecord {
    std::int64_t id = 0;
    std::string name;              // e.g. "NVIDIA H200"
    std::string uuid;              // "GPU-…"; unique in the store, saving the same UUID again updates the row
    std::string computeCapability; // e.g. "9.0"
    std::string peaksJson;         // measured peaks as a JSON object, e.g. {"gbps": 4100, "tflops_bf16": 800}
    std::string probedAt;          // ISO 8601 UTC
};

/// A model (agent) that attempts problems; settings never hold secrets.
struct ModelRecord {
    std::int64_t id = 0;
    std::string name;         // unique in the store
    std::string driver;       // "chat" or "command"
    std::string settingsJson; // driver settings without API keys
    std::string createdAt;    // ISO 8601 UTC
};

/// One run of `mkb run` (or of the workbench's run launcher) that wrote trials.
struct InvocationRecord {
    std::int64_t id = 0;
    std::string startedAt;         // ISO 8601 UTC; filled with the current time when empty
    std::string commandLine;       // the full command line, as typed
    std::string settingsJson;      // the effective settings of the run
    std::string graderFingerprint; // SHA-256 of the grader package the run used
    std::int64_t pid = 0;
    std::string finishedAt; // empty while running (or when the process died)
};

/// What an annotation says about a claim in a skill.
enum class AnnotationTag { Supported, Unsupported, Contradicted, Other };

const char* toString(AnnotationTag tag);
std::optional<AnnotationTag> annotationTagFromString(const std::string& text);

/// A reader's judgement of one claim in a skill: a character range of the skill text, the quoted text and a tag.
struct AnnotationRecord {
    std::int64_t id = 0;
    std::int64_t skillId = 0;
    std::int64_t rangeStart = 0; // first character (UTF-8 byte offset into the skill text)
    std::int64_t rangeEnd = 0;   // one past the last character
    std::string quotedText;      // the text of the range when the annotation was made
    AnnotationTag tag = AnnotationTag::Other;
    std::string note;
    std::string createdAt; // ISO 8601 UTC; filled with the current time when empty
};

} // namespace mkb
