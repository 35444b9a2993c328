// Scanning suite roots into problems and issues: names, layout, required functions, docstring and MKB_META.
#include "core/catalog/catalog.h"

#include "core/catalog/problem_meta.h"
#include "core/catalog/python_source.h"
#include "core/util/dir_walk.h"
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

const char* const kDuplicateNumber = "duplicate number ";

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

struct ParsedFileName {
    int number = 0;
    std::string slug;
};

/// The catalog number a file stem starts with: two digits (00-99), or three for 100-999 (suites larger than a
/// hundred problems, such as an imported KernelBench-X); a three-digit form with a leading zero ("007") is not a
/// number, so every number has exactly one spelling and "07" and "007" can never both name a problem.
std::optional<int> leadingNumber(std::string_view stem) {
    std::size_t digits = 0;
    while (digits < stem.size() && digits < 4 && std::isdigit(static_cast<unsigned char>(stem[digits]))) {
        ++digits;
    }
    if (digits < 2 || digits > 3 || digits >= stem.size() || stem[digits] != '_' || (digits == 3 && stem[0] == '0')) {
        return std::nullopt;
    }
    return std::stoi(std::string(stem.substr(0, digits)));
}

std::optional<ParsedFileName> parseProblemFileName(const std::string& fileName) {
    static const std::regex pattern("([0-9]{2,3})_([a-z0-9]+(?:_[a-z0-9]+)*)\\.py");
    std::smatch match;
    if (!std::regex_match(fileName, match, pattern)) {
        return std::nullopt;
    }
    auto number = leadingNumber(fileName);
    if (!number) {
        return std::nullopt;
    }
    return ParsedFileName{*number, match[2].str()};
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
    auto bytes = readFile(path, kMaxProblemFileBytes);
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

/// One suite root, walked once: family folders at depth 1, problem files at depth 2, anything deeper is misplaced.
class SuiteScan {
public:
    SuiteScan(const fs::path& root, ScanState& state) : root_(root), suite_(suiteName(root)), state_(state) {}

    void run() {
        if (std::string why = whyNotAFolder(root_); !why.empty()) {
            state_.issues.push_back({root_, "suite root " + why + "; pass a folder that holds family folders"});
            return;
        }
        for (WalkProblem& problem : walkFolder(root_, [this](const WalkEntry& entry) { return visit(entry); })) {
            state_.issues.push_back({std::move(problem.path), std::move(problem.message)});
        }
    }

private:
    bool visit(const WalkEntry& entry) {
        const std::string name = entry.path.filename().string();
        if (isIgnoredName(name)) {
            return false;
        }
        const bool python = isPythonFile(entry.path);
        if (entry.kind == WalkEntryKind::Unreachable) {
            if (python || entry.depth == 1) {
                state_.issues.push_back({entry.path, entry.problem});
            }
            return false;
        }
        const bool folder = entry.kind == WalkEntryKind::Folder;
        if (entry.depth == 1) {
            if (python && !folder) {
                state_.issues.push_back({entry.path, "a .py directly in the suite root; move it into a family folder "
                                                     "(<family>/NN_slug.py)"});
            }
            return folder;
        }
        const fs::path familyFolder = root_ / *entry.path.lexically_relative(root_).begin();
        const std::string family = familyFolder.filename().string();
        if (!isFamilyName(family)) {
            if (python && !folder && reportedBadFamilies_.insert(familyFolder).second) {
                state_.issues.push_back(
                    {familyFolder, "bad family name '" + safeOneLine(family) +
                                       "': family folders match [a-z][a-z0-9_]* (lowercase, digits, '_'); its files "
                                       "were not loaded"});
            }
            return folder;
        }
        if (folder || !python) {
            return folder;
        }
        if (entry.depth > 2) {
            state_.issues.push_back({entry.path, "nested too deep: problems live directly in a family folder "
                                                 "(<family>/NN_slug.py); move it up or prefix its folder with '_'"});
            return false;
        }
        auto parsed = parseProblemFileName(name);
        if (!parsed) {
            state_.issues.push_back({entry.path, "bad file name '" + safeOneLine(name) +
                                                     "': expected NN_slug.py (two digits, or three from 100 on, then "
                                                     "lowercase ASCII words joined by single underscores)"});
            return false;
        }
        state_.filesByNumber[parsed->number].push_back(entry.path);
        if (auto problem = readProblemFile(entry.path, family, *parsed, suite_, state_.issues)) {
            state_.found.push_back(std::move(*problem));
        }
        return false;
    }

    const fs::path root_;
    const std::string suite_;
    ScanState& state_;
    std::set<fs::path> reportedBadFamilies_;
};

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
        SuiteScan(root, state).run();
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
                    others += (others.empty() ? "" : ", ") + safeOneLine(other.string());
                }
            }
            catalog.issues.push_back(
                {path, kDuplicateNumber + twoDigits(number) + ": also used by " + others + "; renumber one of them"});
        }
    }
    for (Problem& problem : state.found) {
        if (!duplicated.count(problem.number)) {
            catalog.problems.push_back(std::move(problem));
        }
    }
    std::sort(catalog.problems.begin(), catalog.problems.end(),
              [](const Problem& a, const Problem& b) { return a.number < b.number; });
    // Messages quote names and literals from the files; whatever they hold, each issue stays one line.
    for (CatalogIssue& issue : catalog.issues) {
        issue.message = safeOneLine(issue.message);
    }
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

std::vector<const CatalogIssue*> Catalog::issuesFor(const std::string& nameOrNumber) const {
    std::string key(trimmed(nameOrNumber));
    std::vector<const CatalogIssue*> matched;
    if (key.empty()) {
        return matched;
    }
    std::error_code ec;
    const fs::path keyPath = fs::absolute(key, ec).lexically_normal();
    if (key.size() > 3 && key.compare(key.size() - 3, 3, ".py") == 0) {
        key.resize(key.size() - 3);
    }
    std::optional<int> number;
    if (allDigits(key)) {
        number = std::stoi(key);
    } else if ((key[0] == 'p' || key[0] == 'P') && allDigits(key.substr(1))) {
        number = std::stoi(key.substr(1));
    }
    for (const CatalogIssue& issue : issues) {
        const fs::path issuePath = fs::absolute(issue.path, ec).lexically_normal();
        const std::string stem = issue.path.stem().string();
        const std::string family = issue.path.parent_path().filename().string();
        const std::optional<int> stemNumber = leadingNumber(stem);
        const bool numbered = stemNumber.has_value();
        const bool matches =
            issuePath == keyPath ||
            (isPythonFile(issue.path) &&
             ((number && numbered && *stemNumber == *number) || key == stem || key == family + "/" + stem ||
              (key.find('/') != std::string::npos && key.size() > family.size() + stem.size() + 1 &&
               key.compare(key.size() - family.size() - stem.size() - 2, std::string::npos,
                           "/" + family + "/" + stem) == 0) ||
              (numbered && key == stem.substr(stem.find('_') + 1))));
        if (matches) {
            matched.push_back(&issue);
        }
    }
    return matched;
}

const CatalogIssue* Catalog::duplicateSelectedBy(const std::string& glob) const {
    for (const CatalogIssue& issue : issues) {
        if (!startsWith(issue.message, kDuplicateNumber)) {
            continue;
        }
        const std::string stem = issue.path.stem().string();
        const std::string family = issue.path.parent_path().filename().string();
        const std::optional<int> stemNumber = leadingNumber(stem);
        const std::string code = stemNumber ? "p" + twoDigits(*stemNumber) : "p" + stem.substr(0, 2);
        if (globMatch(glob, family + "/" + stem) || globMatch(glob, code) || globMatch(glob, stem) ||
            globMatch(glob, family)) {
            return &issue;
        }
    }
    return nullptr;
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
    for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::string name = it->path().filename().string();
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
