// What `mkb run`, plan, retime and calibrate select on the command line: the --dsls pair, and core's problem
// selection (core/protocol/run_selection.h) with its exit code; loadRunDsl comes from core with it.
#pragma once

#include "core/protocol/run_selection.h"
#include "core/records/problem.h"
#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace mkb::cli {

/// A selection error with the exit code it maps to (command.h).
struct SelectionError {
    int exitCode = 0;
    std::string message;
};

/// "A,B" → the two trimmed, different ids; the error names the flag value.
Result<std::pair<std::string, std::string>> parseDslPair(const std::string& text, const std::string& verb);

/// "A,B[,C...]" → two or more trimmed, distinct ids in the order given; the error names the flag value. Several DSLs
/// plan every pair of them (core/protocol/planner.h, dslPairsOf).
Result<std::vector<std::string>> parseDslList(const std::string& text, const std::string& verb);

/// Loads the suites (default: the shipped problems) and selects by glob. On failure, *error is set and the
/// result is empty. Malformed problem files are reported on stderr as a note, like mkb plan does.
std::vector<Problem> selectProblems(const std::vector<std::filesystem::path>& suites, const std::string& glob,
                                    const std::string& verb, SelectionError* error);

} // namespace mkb::cli
