// Scanning suite roots into problems and issues: names, layout, required functions, docstring and MKB_META.
#include "core/catalog/catalog.h"

#include "core/catalog/problem_meta.h"
#include "core/catalog/python_source.h"
#include "core/util/sha256.h"
#include "core/util/text.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

namespace mkb {
namespace fs = std::filesystem;
namespace {

bool isIgnoredName(const std::string& name) {
    return !name.empty() && (name[0] == '_' || name[0] == '.');
}

bool isFamilyName(const std::string& name) {
    static const std::regex pattern("[a-z][a-z0-9_]*");
    return std::regex_match(name, pattern);
}

bool isPythonFile(const fs::path& path) {
    return path.extension() == ".py";
}

/// Sorted entries of a folder; unreadable folders give an empty list and an issue.
std::vector<fs::directory_entry> sortedEntries(const fs::path& folder, std::vector<CatalogIssue>& issues) {
    std::vector<fs::directory_entry> entries;
    std::error_code ec;
    fs::directory_iterator it(folder, ec);
    if (ec) {
        issues.push_back({folder, "cannot list this folder (" + ec.message() + "); check its permissions"});
        return entries;
    }
    for (const fs::directory_entry& entry : it) {
        entries.push_back(entry);
    }
    std::sort(entries.begin(), entries.end(),
              [](const fs::directory_entry& a, const fs::directory_entry& b) { return a.path() < b.path(); });
    return entries;
}

/// Every .py file below a folder, skipping parts that start with '_' or '.'.
std::vector<fs::path> pythonFilesBelow(const fs::path& folder, std::vector<CatalogIssue>& issues) {
    std::vector<fs::path> found;
    for (const fs::directory_entry& entry : sortedEntries(folder, issues)) {
        std::string name = entry.path().filename().string();
        if (isIgnoredName(name)) {
            continue;
        }
        std::error_code ec;
        if (entry.is_directory(ec)) {
            auto below = pythonFilesBelow(entry.path(), issues);
            found.insert(found.end(), below.begin(), below.end());
        } else if (isPythonFile(entry.path())) {
            found.push_back(entry.path());
        }
    }
    return found;
}

struct ParsedFileName {
    int number = 0;
    std::string slug;
};

std::optional<ParsedFileName> parseProblemFileName(const std::string& fileName) {
    static const std::regex pattern("([0-9][0-9])_([a-z0-9]+(?:_[a-z0-9]+)*)\\.py");
    std::smatch match;
    if (!std::regex_match(fileName, match, pattern)) {
        return std::nullopt;
    }
    return ParsedFileName{std::stoi(match[1].str()), match[2].str()};
}

std::string suiteName(const fs::path& root) {
    fs::path normal = root.lexically_normal();
    if (normal.filename().empty()) {
        normal = normal.parent_path();
    }
    std::error_code ec;
    fs::path absolute = fs::absolute(normal, ec);
    return (ec ? normal : absolute.lexically_normal()).filename().string();
}

/// Reads one problem file; on any problem, appends issues and returns nothing.
std::optional<Problem> readProblemFile(const fs::path& path, const std::string& family, const ParsedFileName& name,
                                       const std::string& suite, std::vector<CatalogIssue>& issues) {
    auto bytes = readFile(path);
    if (!bytes) {
        issues.push_back({path, bytes.error().message});
        return std::nullopt;
    }
    if (trimmed(*bytes).empty()) {
        issues.push_back({path, "empty file: a problem needs a docstring, make_inputs() and reference()"});
        return std::nullopt;
    }
    std::size_t badOffset = 0;
    if (!isValidUtf8(*bytes, &badOffset)) {
        issues.push_back({path, "not UTF-8: the byte at offset " + std::to_string(badOffset) +
                                    " is not valid UTF-8; save the file as UTF-8"});
        return std::nullopt;
    }
    std::string_view text = *bytes;
    if (startsWith(text, "\xEF\xBB\xBF")) {
        text.remove_prefix(3);
    }
    auto lines = tokenizePython(text);
    if (!lines) {
        issues.push_back({path, "cannot be read as Python: " + lines.error().message});
        return std::nullopt;
    }
    PythonModuleFacts facts = scanPythonModule(*lines);
    const std::size_t issuesBefore = issues.size();
    std::string title(trimmed(facts.docstring));
    if (!facts.hasDocstring) {
        issues.push_back({path, "no module docstring: the first statement must be a one-line string literal, the "
                                "problem's title"});
    } else if (title.empty()) {
        issues.push_back({path, "the module docstring is empty; write the problem's title in it"});
    } else if (title.find('\n') != std::string::npos) {
        issues.push_back({path, "the module docstring spans several lines; the title must be a single line"});
    }
    auto hasFunction = [&](const char* function) {
        return std::find(facts.topLevelFunctions.begin(), facts.topLevelFunctions.end(), function) !=
               facts.topLevelFunctions.end();
    };
    if (!hasFunction("reference")) {
        issues.push_back({path, "missing `def reference(`: define reference(*inputs) at module level"});
    }
    if (!hasFunction("make_inputs")) {
        issues.push_back({path, "missing `def make_inputs(`: define make_inputs(device=\"cuda\") at module level"});
    }
    for (const std::string& problem : facts.metaProblems) {
        issues.push_back({path, "MKB_META " + problem});
    }
    Problem problem;
    if (facts.hasMeta) {
        auto literal = parsePythonLiteral(facts.metaValueTokens, 0, facts.metaValueTokens.size());
        if (!literal) {
            issues.push_back({path, "MKB_META " + literal.error().message});
        } else {
            for (const std::string& problemText : readProblemMeta(*literal, facts.metaLine, problem.meta)) {
                issues.push_back({path, "MKB_META " + problemText});
            }
        }
    }
    if (issues.size() != issuesBefore) {
        return std::nullopt;
    }
    problem.suite = suite;
    problem.number = name.number;
    problem.slug = name.slug;
    problem.family = family;
    problem.title = title;
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    problem.path = (ec ? path : absolute).lexically_normal();
    problem.fingerprint = sha256Hex(*bytes);
    problem.source = std::move(*bytes);
    return problem;
}

/// What scanning gathers: loaded problems, and every well-named file by number (for duplicate checks).
struct ScanState {
    std::vector<Problem> found;
    std::map<int, std::vector<fs::path>> filesByNumber;
    std::vector<CatalogIssue>& issues;
};

void scanFamily(const fs::path& folder, const std::string& suite, ScanState& state) {
    std::vector<CatalogIssue>& issues = state.issues;
    const std::string family = folder.filename().string();
    for (const fs::directory_entry& entry : sortedEntries(folder, issues)) {
        const fs::path& path = entry.path();
        const std::string fileName = path.filename().string();
        if (isIgnoredName(fileName)) {
            continue;
        }
        std::error_code ec;
        if (entry.is_directory(ec)) {
            for (const fs::path& nested : pythonFilesBelow(path, issues)) {
                issues.push_back({nested, "nested too deep: problems live directly in a family folder "
                                          "(<family>/NN_slug.py); move it up or prefix its folder with '_'"});
            }
            continue;
        }
        if (!isPythonFile(path)) {
            continue;
        }
        auto parsed = parseProblemFileName(fileName);
        if (!parsed) {
            issues.push_back({path, "bad file name '" + fileName +
                                        "': expected NN_slug.py (two digits, then lowercase ASCII words joined by "
                                        "single underscores)"});
            continue;
        }
        state.filesByNumber[parsed->number].push_back(path);
        if (auto problem = readProblemFile(path, family, *parsed, suite, issues)) {
            state.found.push_back(std::move(*problem));
        }
    }
}

void scanRoot(const fs::path& root, ScanState& state) {
    std::vector<CatalogIssue>& issues = state.issues;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        issues.push_back({root, fs::exists(root, ec) ? "is not a folder; a suite root holds family folders"
                                                     : "suite root does not exist; check the path"});
        return;
    }
    const std::string suite = suiteName(root);
    for (const fs::directory_entry& entry : sortedEntries(root, issues)) {
        const fs::path& path = entry.path();
        const std::string name = path.filename().string();
        if (isIgnoredName(name)) {
            continue;
        }
        if (entry.is_directory(ec)) {
            if (isFamilyName(name)) {
                scanFamily(path, suite, state);
            } else if (!pythonFilesBelow(path, issues).empty()) {
                issues.push_back({path, "bad family name '" + name +
                                            "': family folders match [a-z][a-z0-9_]* (lowercase, digits, '_'); "
                                            "its files were not loaded"});
            }
        } else if (isPythonFile(path)) {
            issues.push_back({path, "a .py directly in the suite root; move it into a family folder "
                                    "(<family>/NN_slug.py)"});
        }
    }
}

std::string twoDigits(int number) {
    std::string text = std::to_string(number);
    return text.size() < 2 ? "0" + text : text;
}

bool allDigits(std::string_view text) {
    return !text.empty() && text.size() <= 3 &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

} // namespace

Catalog loadCatalog(const std::vector<fs::path>& suiteRoots) {
    Catalog catalog;
    ScanState state{{}, {}, catalog.issues};
    for (const fs::path& root : suiteRoots) {
        scanRoot(root, state);
    }
    std::set<int> duplicated;
    for (const auto& [number, paths] : state.filesByNumber) {
        if (paths.size() < 2) {
            continue;
        }
        duplicated.insert(number);
        for (const fs::path& path : paths) {
            std::string others;
            for (const fs::path& other : paths) {
                if (other != path) {
                    others += (others.empty() ? "" : ", ") + other.string();
                }
            }
            catalog.issues.push_back({path, "duplicate number " + twoDigits(number) + ": also used by " + others +
                                                "; renumber one of them"});
        }
    }
    for (Problem& problem : state.found) {
        if (!duplicated.count(problem.number)) {
            catalog.problems.push_back(std::move(problem));
        }
    }
    std::sort(catalog.problems.begin(), catalog.problems.end(),
              [](const Problem& a, const Problem& b) { return a.number < b.number; });
    return catalog;
}

const Problem* Catalog::findByNumber(int number) const {
    for (const Problem& problem : problems) {
        if (problem.number == number) {
            return &problem;
        }
    }
    return nullptr;
}

const Problem* Catalog::find(const std::string& nameOrNumber) const {
    std::string key(trimmed(nameOrNumber));
    if (key.empty()) {
        return nullptr;
    }
    std::error_code ec;
    if (fs::is_regular_file(key, ec)) {
        for (const Problem& problem : problems) {
            if (fs::equivalent(problem.path, key, ec)) {
                return &problem;
            }
        }
    }
    if (key.size() > 3 && key.compare(key.size() - 3, 3, ".py") == 0) {
        key.resize(key.size() - 3);
    }
    if (allDigits(key)) {
        return findByNumber(std::stoi(key));
    }
    if ((key[0] == 'p' || key[0] == 'P') && allDigits(key.substr(1))) {
        return findByNumber(std::stoi(key.substr(1)));
    }
    if (auto slash = key.rfind('/'); slash != std::string::npos) {
        // "family/NN_slug" or a longer path ending in it.
        std::string stem = key.substr(slash + 1);
        std::string before = key.substr(0, slash);
        std::string family = before.substr(before.rfind('/') == std::string::npos ? 0 : before.rfind('/') + 1);
        for (const Problem& problem : problems) {
            if (problem.name() == family + "/" + stem) {
                return &problem;
            }
        }
        return nullptr;
    }
    for (const Problem& problem : problems) {
        if (twoDigits(problem.number) + "_" + problem.slug == key) {
            return &problem;
        }
    }
    const Problem* bySlug = nullptr;
    for (const Problem& problem : problems) {
        if (problem.slug == key) {
            if (bySlug) {
                return nullptr; // ambiguous
            }
            bySlug = &problem;
        }
    }
    return bySlug;
}

std::vector<const Problem*> Catalog::select(const std::string& glob) const {
    std::vector<const Problem*> selected;
    for (const Problem& problem : problems) {
        const std::string stem = twoDigits(problem.number) + "_" + problem.slug;
        if (globMatch(glob, problem.name()) || globMatch(glob, problem.code()) || globMatch(glob, stem) ||
            globMatch(glob, problem.family)) {
            selected.push_back(&problem);
        }
    }
    return selected;
}

fs::path solutionPath(const Problem& problem, const std::string& dslId) {
    return problem.path.parent_path() / "_solutions" /
           (twoDigits(problem.number) + "_" + problem.slug + "." + dslId + ".py");
}

std::vector<std::string> solutionDsls(const Problem& problem) {
    std::vector<std::string> dsls;
    const fs::path folder = problem.path.parent_path() / "_solutions";
    const std::string prefix = twoDigits(problem.number) + "_" + problem.slug + ".";
    std::error_code ec;
    fs::directory_iterator it(folder, ec);
    if (ec) {
        return dsls;
    }
    for (const fs::directory_entry& entry : it) {
        std::string name = entry.path().filename().string();
        if (name.size() > prefix.size() + 3 && startsWith(name, prefix) &&
            name.compare(name.size() - 3, 3, ".py") == 0) {
            std::string dsl = name.substr(prefix.size(), name.size() - prefix.size() - 3);
            if (!dsl.empty() && dsl.find('.') == std::string::npos) {
                dsls.push_back(dsl);
            }
        }
    }
    std::sort(dsls.begin(), dsls.end());
    return dsls;
}

} // namespace mkb
