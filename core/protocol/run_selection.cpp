// What a run selects before it plans (run_selection.h).
#include "core/protocol/run_selection.h"

#include "core/catalog/dsl_registry.h"
#include "core/util/dir_walk.h"
#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/text.h"
#include "core/wire/grade_request.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace mkb {

namespace fs = std::filesystem;

std::string noProblemMatched(const Catalog& catalog, const std::string& glob, const std::string& verb) {
    if (std::vector<const CatalogIssue*> why = catalog.issuesFor(glob); !why.empty()) {
        return verb + ": --problems '" + safeOneLine(glob) +
               "' names a file that is not a valid problem: " + safeOneLine(why.front()->path.string()) + ": " +
               safeOneLine(why.front()->message) + "; fix it (mkb problems validate DIR lists every issue)";
    }
    return verb + ": no problem matched --problems '" + safeOneLine(glob) + "' in " +
           std::to_string(catalog.problems.size()) + " problems; try mkb problems list";
}

Result<ProblemSelection> selectRunProblems(const std::vector<fs::path>& suites, const std::string& glob,
                                           const std::string& verb) {
    std::vector<fs::path> roots = suites;
    if (roots.empty()) {
        roots.push_back(shippedProblemsDir());
    }
    for (fs::path& root : roots) {
        if (std::string why = whyNotAFolder(root); !why.empty()) {
            return makeError(verb + ": suite folder " + safeOneLine(root.string()) + " " + why + "; pass --suite DIR");
        }
        std::error_code ec;
        root = fs::absolute(root, ec);
    }
    const Catalog catalog = loadCatalog(roots);
    if (const CatalogIssue* duplicate = catalog.duplicateSelectedBy(glob)) {
        return makeError(verb + ": " + safeOneLine(duplicate->path.string()) + ": " + duplicate->message +
                         "; a run cannot go ahead while two files claim one number");
    }
    ProblemSelection selection;
    for (const Problem* problem : catalog.select(glob)) {
        selection.problems.push_back(*problem);
    }
    if (selection.problems.empty()) {
        return makeError(noProblemMatched(catalog, glob, verb));
    }
    selection.malformedLeftOut = catalog.issues.size();
    return selection;
}

void addProblemsOnce(std::vector<Problem>& into, std::vector<Problem> more) {
    for (Problem& problem : more) {
        const bool known =
            std::any_of(into.begin(), into.end(), [&](const Problem& other) { return other.number == problem.number; });
        if (!known) {
            into.push_back(std::move(problem));
        }
    }
    std::sort(into.begin(), into.end(), [](const Problem& a, const Problem& b) { return a.number < b.number; });
}

namespace {

std::vector<std::string> stringList(const nlohmann::json& object, const char* key) {
    std::vector<std::string> out;
    if (object.contains(key) && object[key].is_array()) {
        for (const nlohmann::json& item : object[key]) {
            if (item.is_string()) {
                out.push_back(item.get<std::string>());
            }
        }
    }
    return out;
}

DslDescriptor lenientDescriptor(const std::string& id, const nlohmann::json& json, const fs::path& file) {
    DslDescriptor dsl;
    dsl.id = id;
    dsl.displayName = json.value("display_name", id);
    dsl.importName = json.value("import_name", id);
    dsl.packages = stringList(json, "packages");
    dsl.installHint = json.value("install_hint", std::string());
    dsl.prompt = json.value("prompt", json.value("prompt_fragment", std::string()));
    dsl.descriptorPath = file;
    dsl.docRoot = file.parent_path().parent_path() / "dsl_docs" / id;
    for (const std::string& doc : stringList(json, "doc_pack")) {
        std::error_code ec;
        if (fs::is_regular_file(dsl.docRoot / doc, ec)) {
            dsl.docPack.push_back(doc);
        }
    }
    if (json.contains("compliance") && json["compliance"].is_object()) {
        const nlohmann::json& compliance = json["compliance"];
        dsl.compliance.adapter = compliance.value("adapter", id);
        dsl.compliance.kernelMarkers = stringList(compliance, "kernel_markers");
        dsl.compliance.forbiddenImports = stringList(compliance, "forbidden_imports");
        dsl.compliance.forbiddenPatterns = stringList(compliance, "forbidden_patterns");
    }
    return dsl;
}

} // namespace

Result<RunDsl> loadRunDsl(const std::string& id, const std::vector<fs::path>& extraDirs) {
    auto json = loadDslDescriptor(id, extraDirs);
    if (!json) {
        return json.error();
    }
    fs::path file;
    bool fromExtraDir = false;
    std::error_code ec;
    for (const fs::path& dir : extraDirs) {
        if (fs::is_regular_file(dir / (id + ".json"), ec)) {
            file = dir / (id + ".json");
            fromExtraDir = true;
            break;
        }
    }
    if (file.empty()) {
        file = resourcesDir() / "dsls" / (id + ".json");
    }
    RunDsl dsl;
    dsl.descriptorJson = *json;
    auto strict = parseDslDescriptor(*json, file);
    if (strict) {
        dsl.descriptor = std::move(strict).value();
        return dsl;
    }
    if (!fromExtraDir) {
        return strict.error();
    }
    dsl.descriptor = lenientDescriptor(id, parseJsonInputOrDiscarded(*json), file);
    return dsl;
}

std::function<Result<std::string>(const std::string&)> cachedDescriptorLookup(std::vector<fs::path> extraDirs) {
    struct Cache {
        std::mutex mutex;
        std::map<std::string, Result<std::string>> byId;
    };
    auto cache = std::make_shared<Cache>();
    return [cache, extraDirs = std::move(extraDirs)](const std::string& id) -> Result<std::string> {
        const std::lock_guard<std::mutex> lock(cache->mutex);
        auto& descriptors = cache->byId;
        auto found = descriptors.find(id);
        if (found == descriptors.end()) {
            auto dsl = loadRunDsl(id, extraDirs);
            found = descriptors
                        .emplace(id, dsl ? Result<std::string>(dsl->descriptorJson) : Result<std::string>(dsl.error()))
                        .first;
        }
        return found->second;
    };
}

} // namespace mkb
