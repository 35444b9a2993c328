// `mkb problems list|show|validate`: browse the problem catalog and check suite folders, without running them.
#include "app/cli/args.h"
#include "app/cli/command.h"

#include "core/catalog/catalog.h"
#include "core/catalog/syntax_check.h"
#include "core/grader_client/grader_process.h"
#include "core/util/dir_walk.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

namespace mkb::cli {
namespace {
namespace fs = std::filesystem;

const char* const kProblemsIntro = R"(usage: mkb problems list [--suite DIR]... [--family F] [--json]
       mkb problems show PROBLEM [--suite DIR]... [--json]
       mkb problems validate DIR [--python PATH] [--json]

Browse the problem catalog. Problem files are read as text and never executed.

  list       one row per problem: number, family, slug, shipped solutions (DSLs with a file
             <family>/_solutions/NN_slug.<dsl>.py, then "none: DSL" for each DSL whose MKB_META
             no_solution says why it can have none), tags and title
  show       a problem's metadata and source; PROBLEM is a number ("7", "07", "p07"),
             "NN_slug", "family/NN_slug", a slug or a path to the file
  validate   checks every file under DIR (a suite root such as a MetaKernelBench checkout's
             problems/) and prints each malformed file as one line "path: message"; each file
             that reads well is then compiled (not run) by Python, so a file Python would refuse
             (a syntax error, a NUL byte, nesting too deep) is refused too; each DSL a valid problem
             can have no solution in is noted as "note: NAME: no DSL solution: reason"

)";

const char* const kProblemsRest =
    R"(exit codes: 0 ok; 1 validate found issues; 2 bad command line; 3 a folder is missing, or the
problem is unknown or malformed (show then prints why the file is not a valid problem).
)";

const OptionTable& problemsOptions() {
    static const OptionTable table = {
        pathOption("suite", "DIR", "a suite root to read").defaultSaid("the shipped problems folder").isRepeatable(),
        textOption("family", "F", "list only this family"),
        flagOption("json", "machine-readable output"),
        pathOption("python", "PATH", "the interpreter validate compiles with").defaultSaid("$MKB_PYTHON, else python3"),
    };
    return table;
}

std::string problemsHelp() {
    return verbHelp(kProblemsIntro, problemsOptions(), kProblemsRest);
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const std::string& item : items) {
        out += (out.empty() ? "" : separator) + item;
    }
    return out;
}

nlohmann::json problemJson(const Problem& problem, bool withSource) {
    nlohmann::json json = {{"number", problem.number},
                           {"code", problem.code()},
                           {"name", problem.name()},
                           {"family", problem.family},
                           {"slug", problem.slug},
                           {"title", problem.title},
                           {"suite", problem.suite},
                           {"path", problem.path.string()},
                           {"fingerprint", problem.fingerprint},
                           {"tags", problem.meta.tags},
                           {"solutions", solutionDsls(problem)},
                           {"no_solution", problem.meta.noSolution}};
    if (problem.meta.quant) {
        json["quant"] = {{"min_cosine", problem.meta.quant->minCosine},
                         {"max_relative_l1", problem.meta.quant->maxRelativeL1},
                         {"max_rmse", problem.meta.quant->maxRmse}};
    } else {
        json["quant"] = nullptr;
    }
    json["outliers"] = problem.meta.outliersJson.empty()
                           ? nlohmann::json(nullptr)
                           : nlohmann::json::parse(problem.meta.outliersJson, nullptr, false);
    json["flops"] = problem.meta.flops ? nlohmann::json(*problem.meta.flops) : nlohmann::json(nullptr);
    json["bytes"] = problem.meta.bytes ? nlohmann::json(*problem.meta.bytes) : nlohmann::json(nullptr);
    if (withSource) {
        json["source"] = problem.source;
    }
    return json;
}

/// A count such as FLOPs or bytes, whole numbers written out in full.
std::string countText(double value) {
    if (value == static_cast<double>(static_cast<long long>(value)) && value < 1e18) {
        return std::to_string(static_cast<long long>(value));
    }
    return nlohmann::json(value).dump();
}

/// The solutions column: the shipped DSLs, then "none: DSL,..." for the DSLs MKB_META says can have no solution.
std::string solutionsText(const Problem& problem) {
    std::string text = joined(solutionDsls(problem), ",");
    std::vector<std::string> without;
    for (const auto& [dsl, reason] : problem.meta.noSolution) {
        without.push_back(dsl);
    }
    if (!without.empty()) {
        text += (text.empty() ? "" : "; ") + std::string("none: ") + joined(without, ",");
    }
    return text.empty() ? "-" : text;
}

nlohmann::json issuesJson(const std::vector<CatalogIssue>& issues) {
    nlohmann::json list = nlohmann::json::array();
    for (const CatalogIssue& issue : issues) {
        list.push_back({{"path", issue.path.string()}, {"message", issue.message}});
    }
    return list;
}

/// The suite roots named by --suite, or the shipped folder; a missing root is bad input.
Result<std::vector<fs::path>> suiteRoots(const ParsedOptions& args) {
    std::vector<fs::path> roots;
    for (const std::string& suite : args.all("suite")) {
        roots.emplace_back(suite);
    }
    if (roots.empty()) {
        roots.push_back(shippedProblemsDir());
    }
    for (const fs::path& root : roots) {
        if (std::string why = whyNotAFolder(root); !why.empty()) {
            return makeError("suite folder '" + safeOneLine(root.string()) + "' " + why +
                             "; pass an existing folder to --suite");
        }
    }
    return roots;
}

void noteSkippedFiles(const Catalog& catalog, const std::vector<fs::path>& roots) {
    if (catalog.issues.empty()) {
        return;
    }
    std::cerr << "mkb: note: " << catalog.issues.size() << " malformed file(s) skipped; `mkb problems validate "
              << safeOneLine(roots.front().string()) << "` lists them\n";
}

int listProblems(const ParsedOptions& args) {
    auto roots = suiteRoots(args);
    if (!roots) {
        return fail(kExitBadInput, roots.error().message);
    }
    Catalog catalog = loadCatalog(*roots);
    const std::string family = args.text("family");
    std::vector<const Problem*> shown;
    for (const Problem& problem : catalog.problems) {
        if (family.empty() || problem.family == family) {
            shown.push_back(&problem);
        }
    }
    if (args.flag("json")) {
        nlohmann::json list = nlohmann::json::array();
        for (const Problem* problem : shown) {
            list.push_back(problemJson(*problem, false));
        }
        std::cout << nlohmann::json{{"problems", list}, {"issues", issuesJson(catalog.issues)}}.dump(2) << '\n';
        return kExitOk;
    }
    std::size_t familyWidth = 6, slugWidth = 4, solutionWidth = 9, tagWidth = 4;
    for (const Problem* problem : shown) {
        familyWidth = std::max(familyWidth, problem->family.size());
        slugWidth = std::max(slugWidth, problem->slug.size());
        solutionWidth = std::max(solutionWidth, solutionsText(*problem).size());
        tagWidth = std::max(tagWidth, joined(problem->meta.tags, ",").size());
    }
    auto row = [&](const std::string& number, const std::string& familyText, const std::string& slug,
                   const std::string& solutions, const std::string& tags, const std::string& title) {
        std::printf("%-3s %-*s %-*s %-*s %-*s %s\n", number.c_str(), static_cast<int>(familyWidth), familyText.c_str(),
                    static_cast<int>(slugWidth), slug.c_str(), static_cast<int>(solutionWidth), solutions.c_str(),
                    static_cast<int>(tagWidth), tags.c_str(), title.c_str());
    };
    row("NN", "family", "slug", "solutions", "tags", "title");
    for (const Problem* problem : shown) {
        row(problem->code().substr(1), problem->family, problem->slug, solutionsText(*problem),
            joined(problem->meta.tags, ","), problem->title);
    }
    std::fflush(stdout);
    std::cout << shown.size() << " problem(s)\n";
    noteSkippedFiles(catalog, *roots);
    return kExitOk;
}

int showProblem(const ParsedOptions& args) {
    if (args.positionals.size() != 1) {
        return fail(kExitUsage, "problems show takes one PROBLEM (a number, NN_slug or family/NN_slug); see --help");
    }
    auto roots = suiteRoots(args);
    if (!roots) {
        return fail(kExitBadInput, roots.error().message);
    }
    Catalog catalog = loadCatalog(*roots);
    const std::string& wanted = args.positionals[0];
    const Problem* problem = catalog.find(wanted);
    if (!problem) {
        const std::string rootText = safeOneLine(roots->front().string());
        if (std::vector<const CatalogIssue*> why = catalog.issuesFor(wanted); !why.empty()) {
            std::string more = why.size() > 1 ? " (and " + std::to_string(why.size() - 1) + " more issue(s))" : "";
            return fail(kExitBadInput, "'" + safeOneLine(wanted) +
                                           "' is not a valid problem: " + safeOneLine(why.front()->path.string()) +
                                           ": " + safeOneLine(why.front()->message) + more +
                                           "; `mkb problems validate " + rootText + "` lists every issue");
        }
        return fail(kExitBadInput, "unknown problem '" + safeOneLine(wanted) + "': nothing in " + rootText +
                                       " has that number or name; `mkb problems list` shows the names");
    }
    if (args.flag("json")) {
        std::cout << problemJson(*problem, true).dump(2) << '\n';
        return kExitOk;
    }
    std::vector<std::string> solutions = solutionDsls(*problem);
    std::cout << "name:        " << problem->name() << " (" << problem->code() << ")\n"
              << "title:       " << problem->title << '\n'
              << "path:        " << problem->path.string() << '\n'
              << "fingerprint: " << problem->fingerprint << '\n'
              << "tags:        " << (problem->meta.tags.empty() ? "-" : joined(problem->meta.tags, ", ")) << '\n'
              << "solutions:   " << (solutions.empty() ? "-" : joined(solutions, ", ")) << '\n';
    if (problem->meta.quant) {
        std::cout << "quant:       min_cosine " << problem->meta.quant->minCosine << ", max_relative_l1 "
                  << problem->meta.quant->maxRelativeL1 << ", max_rmse " << problem->meta.quant->maxRmse << '\n';
    }
    for (const auto& [dsl, reason] : problem->meta.noSolution) {
        std::cout << "no " << dsl << " solution: " << safeOneLine(reason) << '\n';
    }
    if (!problem->meta.outliersJson.empty()) {
        std::cout << "outliers:    " << problem->meta.outliersJson << '\n';
    }
    if (problem->meta.flops) {
        std::cout << "flops:       " << countText(*problem->meta.flops) << '\n';
    }
    if (problem->meta.bytes) {
        std::cout << "bytes:       " << countText(*problem->meta.bytes) << '\n';
    }
    std::cout << "\n" << problem->source;
    if (!problem->source.empty() && problem->source.back() != '\n') {
        std::cout << '\n';
    }
    return kExitOk;
}

int validateSuite(const ParsedOptions& args) {
    if (args.positionals.size() != 1) {
        return fail(kExitUsage, "problems validate takes one DIR (a suite root with family folders); see --help");
    }
    const fs::path root(args.positionals[0]);
    if (std::string why = whyNotAFolder(root); !why.empty()) {
        return fail(kExitBadInput,
                    "folder '" + safeOneLine(root.string()) + "' " + why + "; pass a suite root such as problems/");
    }
    Catalog catalog = loadCatalog({root});
    std::vector<fs::path> readable;
    for (const Problem& problem : catalog.problems) {
        readable.push_back(problem.path);
    }
    Result<std::vector<CatalogIssue>> compiled = pythonSyntaxIssues(readable, graderPythonFrom(args.value("python")));
    if (!compiled) {
        std::cerr << "mkb: warning: " << safeOneLine(compiled.error().message)
                  << "; the files were only read, not compiled (name an interpreter with --python)\n";
    } else {
        std::set<fs::path> refused;
        for (const CatalogIssue& issue : *compiled) {
            refused.insert(issue.path);
            catalog.issues.push_back(issue);
        }
        catalog.problems.erase(std::remove_if(catalog.problems.begin(), catalog.problems.end(),
                                              [&](const Problem& problem) { return refused.count(problem.path) != 0; }),
                               catalog.problems.end());
    }
    nlohmann::json withoutSolutions = nlohmann::json::array();
    for (const Problem& problem : catalog.problems) {
        for (const auto& [dsl, reason] : problem.meta.noSolution) {
            withoutSolutions.push_back({{"problem", problem.name()}, {"dsl", dsl}, {"reason", reason}});
        }
    }
    if (args.flag("json")) {
        nlohmann::json report = {{"root", root.string()},
                                 {"problems", catalog.problems.size()},
                                 {"issues", issuesJson(catalog.issues)},
                                 {"no_solution", withoutSolutions}};
        std::cout << report.dump(2) << '\n';
    } else {
        for (const CatalogIssue& issue : catalog.issues) {
            std::cout << safeOneLine(issue.path.string()) << ": " << safeOneLine(issue.message) << '\n';
        }
        for (const nlohmann::json& note : withoutSolutions) {
            std::cout << "note: " << note["problem"].get<std::string>() << ": no " << note["dsl"].get<std::string>()
                      << " solution: " << safeOneLine(note["reason"].get<std::string>()) << '\n';
        }
        std::cout << catalog.problems.size() << " valid problem(s), " << catalog.issues.size() << " issue(s) in "
                  << safeOneLine(root.string()) << '\n';
    }
    return catalog.issues.empty() ? kExitOk : kExitFailed;
}

int runProblems(const std::vector<std::string>& rawArgs) {
    if (rawArgs.empty()) {
        return fail(kExitUsage, "problems needs an action: list, show or validate (mkb problems --help)");
    }
    const std::string action = rawArgs[0];
    std::vector<std::string> rest(rawArgs.begin() + 1, rawArgs.end());
    OptionTable accepted = selectOptions(problemsOptions(), {"suite", "family", "json"});
    if (action == "validate") {
        accepted = selectOptions(problemsOptions(), {"python", "json"});
    } else if (action == "show") {
        accepted = selectOptions(problemsOptions(), {"suite", "json"});
    } else if (action != "list") {
        if (action == "--help" || action == "-h") {
            std::cout << problemsHelp();
            return kExitOk;
        }
        return fail(kExitUsage, "unknown action 'problems " + safeOneLine(action) + "'; use list, show or validate");
    }
    auto args = parseOptions(accepted, rest);
    if (!args) {
        return fail(kExitUsage, args.error().message);
    }
    if (args->help) {
        std::cout << problemsHelp();
        return kExitOk;
    }
    if (action == "list") {
        if (!args->positionals.empty()) {
            return fail(kExitUsage, "problems list takes no positional arguments (got '" +
                                        safeOneLine(args->positionals[0]) + "'); use --suite DIR");
        }
        return listProblems(*args);
    }
    return action == "show" ? showProblem(*args) : validateSuite(*args);
}

const bool registered = registerCommand(
    {"problems", "list, show and validate problems (never executes them)", problemsHelp(), runProblems});

} // namespace
} // namespace mkb::cli
