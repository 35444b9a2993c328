// Selecting problems and DSLs for a run on the command line: the --dsls pair, and core's selection with its exit
// code and the note about malformed files.
#include "app/cli/run_selection.h"

#include "app/cli/command.h"
#include "core/util/text.h"

#include <algorithm>
#include <iostream>

namespace mkb::cli {

namespace fs = std::filesystem;

Result<std::pair<std::string, std::string>> parseDslPair(const std::string& text, const std::string& verb) {
    const std::vector<std::string> pair = splitString(text, ',');
    if (pair.size() != 2 || trimmed(pair[0]).empty() || trimmed(pair[1]).empty()) {
        return makeError(verb + ": --dsls takes two DSL ids separated by a comma, e.g. triton,cuda; got '" +
                         safeOneLine(text) + "'");
    }
    std::pair<std::string, std::string> ids{std::string(trimmed(pair[0])), std::string(trimmed(pair[1]))};
    if (ids.first == ids.second) {
        return makeError(verb + ": --dsls needs two different DSLs, got '" + safeOneLine(ids.first) + "' twice");
    }
    return ids;
}

Result<std::vector<std::string>> parseDslList(const std::string& text, const std::string& verb) {
    std::vector<std::string> ids;
    for (const std::string& part : splitString(text, ',')) {
        ids.emplace_back(trimmed(part));
    }
    const bool blank = std::any_of(ids.begin(), ids.end(), [](const std::string& id) { return id.empty(); });
    if (ids.size() < 2 || blank) {
        return makeError(verb + ": --dsls takes two or more DSL ids separated by commas, e.g. triton,cuda or " +
                         "triton,cuda,numba,pallas; got '" + safeOneLine(text) + "'");
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(i), ids[i]) !=
            ids.begin() + static_cast<std::ptrdiff_t>(i)) {
            return makeError(verb + ": --dsls names '" + safeOneLine(ids[i]) + "' twice; each DSL once");
        }
    }
    return ids;
}

std::vector<Problem> selectProblems(const std::vector<fs::path>& suites, const std::string& glob,
                                    const std::string& verb, SelectionError* error) {
    Result<ProblemSelection> selection = selectRunProblems(suites, glob, verb);
    if (!selection) {
        *error = {kExitBadInput, selection.error().message};
        return {};
    }
    if (selection->malformedLeftOut > 0) {
        std::cerr << "mkb: note: " << selection->malformedLeftOut
                  << " malformed problem files were left out; mkb problems validate DIR lists them\n";
    }
    return std::move(selection->problems);
}

} // namespace mkb::cli
