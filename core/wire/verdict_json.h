// The grader's verdict JSON ↔ mkb::Verdict: strict on the four rewards, tolerant of missing optional fields.
#pragma once

#include "core/records/verdict.h"
#include "core/util/result.h"

#include <string>

namespace mkb {

/// Parses a verdict object. `imported`, `correct`, `passed` (booleans) and `speedup_vs_eager` (a number) must be
/// present with those types; other fields may be missing or null, but a present field of the wrong type is an
/// error naming it. Verdict::json keeps the object's text. Bare NaN/Infinity (as Python's json writes) read as null.
Result<Verdict> verdictFromJson(const std::string& verdictObjectText);

/// A verdict for a failure of the grading machinery (not the candidate's fault): all rewards 0,
/// infrastructureError set, the given one-line message and stage, and a matching Verdict::json.
Verdict infrastructureVerdict(const std::string& message, const std::string& stage, bool timedOut = false);

/// The verdict as protocol JSON (the same field names the grader writes).
std::string verdictToJson(const Verdict& verdict);

/// Replaces bare NaN, Infinity and -Infinity tokens outside strings by null, so strict JSON parsers accept the text.
std::string withNonFiniteAsNull(const std::string& jsonText);

} // namespace mkb
