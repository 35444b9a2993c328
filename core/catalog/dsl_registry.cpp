// Reading and validating DSL descriptors; every error names the descriptor file and the field.
#include "core/catalog/dsl_registry.h"

#include "core/util/json_input.h"
#include "core/util/paths.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>

namespace mkb {
namespace fs = std::filesystem;
namespace {

class FieldReader {
public:
    FieldReader(const nlohmann::json& object, const fs::path& file) : object_(object), file_(file) {}

    Error error(const std::string& field, const std::string& message) const {
        return makeError(safeOneLine(file_.string() + ": field '" + field + "': " + message));
    }

    Result<std::string> text(const std::string& field, bool allowEmpty = false) const {
        auto found = object_.find(field);
        if (found == object_.end()) {
            return error(prefix_ + field, "missing");
        }
        if (!found->is_string()) {
            return error(prefix_ + field, "must be a string");
        }
        std::string value = found->get<std::string>();
        if (!allowEmpty && trimmed(value).empty()) {
            return error(prefix_ + field, "must not be empty");
        }
        return value;
    }

    Result<std::vector<std::string>> texts(const std::string& field, bool allowEmpty) const {
        auto found = object_.find(field);
        if (found == object_.end()) {
            return error(prefix_ + field, "missing");
        }
        if (!found->is_array()) {
            return error(prefix_ + field, "must be a list of strings");
        }
        std::vector<std::string> values;
        for (std::size_t i = 0; i < found->size(); ++i) {
            const nlohmann::json& item = (*found)[i];
            if (!item.is_string() || trimmed(item.get<std::string>()).empty()) {
                return error(prefix_ + field + "[" + std::to_string(i) + "]", "must be a non-empty string");
            }
            values.push_back(item.get<std::string>());
        }
        if (!allowEmpty && values.empty()) {
            return error(prefix_ + field, "must list at least one entry");
        }
        return values;
    }

    Status onlyKnownKeys(const std::vector<std::string>& known) const {
        for (const auto& [key, value] : object_.items()) {
            if (std::find(known.begin(), known.end(), key) == known.end()) {
                return error(prefix_ + key, "unknown field (see docs/dsl-descriptor.md)");
            }
        }
        return Ok{};
    }

    void setPrefix(std::string prefix) { prefix_ = std::move(prefix); }

private:
    const nlohmann::json& object_;
    const fs::path& file_;
    std::string prefix_;
};

Status checkRegexes(const FieldReader& reader, const std::string& field, const std::vector<std::string>& patterns) {
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        try {
            std::regex compiled(patterns[i], std::regex::ECMAScript);
        } catch (const std::regex_error& failure) {
            return reader.error(field + "[" + std::to_string(i) + "]",
                                "not a valid regular expression ('" + patterns[i] + "')");
        }
    }
    return Ok{};
}

bool isModuleName(const std::string& name) {
    static const std::regex pattern("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
    return std::regex_match(name, pattern);
}

#define MKB_TRY_ASSIGN(target, expression)                                                                             \
    do {                                                                                                               \
        auto mkbTryResult = (expression);                                                                              \
        if (!mkbTryResult) {                                                                                           \
            return mkbTryResult.error();                                                                               \
        }                                                                                                              \
        target = std::move(*mkbTryResult);                                                                             \
    } while (false)

} // namespace

std::vector<fs::path> DslDescriptor::docPackPaths() const {
    std::vector<fs::path> paths;
    for (const std::string& relative : docPack) {
        paths.push_back(docRoot / relative);
    }
    return paths;
}

const DslDescriptor* DslRegistry::find(const std::string& id) const {
    for (const DslDescriptor& dsl : dsls) {
        if (dsl.id == id) {
            return &dsl;
        }
    }
    return nullptr;
}

std::vector<std::string> DslRegistry::ids() const {
    std::vector<std::string> result;
    for (const DslDescriptor& dsl : dsls) {
        result.push_back(dsl.id);
    }
    return result;
}

const std::vector<std::string>& knownDslAdapters() {
    static const std::vector<std::string> adapters = {"cuda", "cutedsl", "numba", "pallas", "tirx", "triton"};
    return adapters;
}

Result<DslDescriptor> parseDslDescriptor(std::string_view json, const fs::path& file) {
    nlohmann::json root = parseJsonInputOrDiscarded<nlohmann::json>(json);
    if (root.is_discarded()) {
        return makeError(safeOneLine(file.string()) + ": not valid JSON; check commas, quotes and brackets");
    }
    if (!root.is_object()) {
        return makeError(safeOneLine(file.string()) + ": must hold a JSON object");
    }
    FieldReader reader(root, file);
    if (auto status = reader.onlyKnownKeys(
            {"id", "display_name", "import_name", "packages", "install_hint", "prompt", "doc_pack", "compliance"});
        !status) {
        return status.error();
    }
    DslDescriptor dsl;
    MKB_TRY_ASSIGN(dsl.id, reader.text("id"));
    static const std::regex idPattern("[a-z][a-z0-9_]*");
    if (!std::regex_match(dsl.id, idPattern)) {
        return reader.error("id", "'" + dsl.id + "' must match [a-z][a-z0-9_]*");
    }
    if (dsl.id != file.stem().string()) {
        return reader.error("id", "'" + dsl.id + "' must equal the file name '" + file.stem().string() + "'");
    }
    MKB_TRY_ASSIGN(dsl.displayName, reader.text("display_name"));
    MKB_TRY_ASSIGN(dsl.importName, reader.text("import_name"));
    if (!isModuleName(dsl.importName)) {
        return reader.error("import_name", "'" + dsl.importName + "' is not a Python module name");
    }
    MKB_TRY_ASSIGN(dsl.packages, reader.texts("packages", true));
    MKB_TRY_ASSIGN(dsl.installHint, reader.text("install_hint", true));
    MKB_TRY_ASSIGN(dsl.prompt, reader.text("prompt"));
    if (dsl.prompt.find("solve(*inputs)") == std::string::npos) {
        return reader.error("prompt",
                            "must tell candidates to define `solve(*inputs)`, the entry point the grader calls");
    }
    MKB_TRY_ASSIGN(dsl.docPack, reader.texts("doc_pack", true));
    dsl.descriptorPath = file;
    dsl.docRoot = (file.parent_path() / ".." / "dsl_docs" / dsl.id).lexically_normal();
    for (std::size_t i = 0; i < dsl.docPack.size(); ++i) {
        const fs::path relative(dsl.docPack[i]);
        const std::string field = "doc_pack[" + std::to_string(i) + "]";
        if (relative.is_absolute() ||
            std::any_of(relative.begin(), relative.end(), [](const fs::path& part) { return part == ".."; })) {
            return reader.error(field, "'" + dsl.docPack[i] + "' must be a path inside " + dsl.docRoot.string());
        }
        if (relative.extension() != ".md") {
            return reader.error(field, "'" + dsl.docPack[i] + "' must be a .md file");
        }
        std::error_code ec;
        if (!fs::is_regular_file(dsl.docRoot / relative, ec)) {
            return reader.error(field, "file " + (dsl.docRoot / relative).string() + " does not exist");
        }
    }
    auto compliance = root.find("compliance");
    if (compliance == root.end()) {
        return reader.error("compliance", "missing");
    }
    if (!compliance->is_object()) {
        return reader.error("compliance", "must be an object");
    }
    FieldReader rules(*compliance, file);
    rules.setPrefix("compliance.");
    if (auto status = rules.onlyKnownKeys({"adapter", "kernel_markers", "forbidden_imports", "forbidden_patterns"});
        !status) {
        return status.error();
    }
    MKB_TRY_ASSIGN(dsl.compliance.adapter, rules.text("adapter"));
    const auto& adapters = knownDslAdapters();
    if (std::find(adapters.begin(), adapters.end(), dsl.compliance.adapter) == adapters.end()) {
        return reader.error("compliance.adapter", "'" + dsl.compliance.adapter +
                                                      "' is not one of cuda, cutedsl, numba, pallas, tirx, triton");
    }
    MKB_TRY_ASSIGN(dsl.compliance.kernelMarkers, rules.texts("kernel_markers", false));
    MKB_TRY_ASSIGN(dsl.compliance.forbiddenImports, rules.texts("forbidden_imports", true));
    MKB_TRY_ASSIGN(dsl.compliance.forbiddenPatterns, rules.texts("forbidden_patterns", true));
    if (auto status = checkRegexes(reader, "compliance.kernel_markers", dsl.compliance.kernelMarkers); !status) {
        return status.error();
    }
    if (auto status = checkRegexes(reader, "compliance.forbidden_patterns", dsl.compliance.forbiddenPatterns);
        !status) {
        return status.error();
    }
    for (std::size_t i = 0; i < dsl.compliance.forbiddenImports.size(); ++i) {
        const std::string& module = dsl.compliance.forbiddenImports[i];
        const std::string field = "compliance.forbidden_imports[" + std::to_string(i) + "]";
        if (!isModuleName(module)) {
            return reader.error(field, "'" + module + "' is not a Python module name");
        }
        if (module == dsl.importName || startsWith(dsl.importName, module + ".")) {
            return reader.error(field, "'" + module + "' forbids the DSL's own import_name '" + dsl.importName + "'");
        }
    }
    return dsl;
}

Result<DslRegistry> loadDslRegistry(const std::vector<fs::path>& descriptorDirs) {
    DslRegistry registry;
    for (const fs::path& folder : descriptorDirs) {
        std::error_code ec;
        if (!fs::is_directory(folder, ec)) {
            return makeError(safeOneLine(folder.string()) +
                             ": DSL descriptor folder does not exist; check the path or set "
                             "MKB_DATA_DIR");
        }
        std::vector<fs::path> files;
        for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
            if (it->path().extension() == ".json" && !startsWith(it->path().filename().string(), ".")) {
                files.push_back(it->path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const fs::path& file : files) {
            auto bytes = readFile(file);
            if (!bytes) {
                return bytes.error();
            }
            auto dsl = parseDslDescriptor(*bytes, file);
            if (!dsl) {
                return dsl.error();
            }
            if (const DslDescriptor* earlier = registry.find(dsl->id)) {
                return makeError(safeOneLine(file.string()) + ": field 'id': '" + safeOneLine(dsl->id) +
                                 "' is already defined by " + safeOneLine(earlier->descriptorPath.string()));
            }
            registry.dsls.push_back(std::move(*dsl));
        }
    }
    std::sort(registry.dsls.begin(), registry.dsls.end(),
              [](const DslDescriptor& a, const DslDescriptor& b) { return a.id < b.id; });
    return registry;
}

Result<DslRegistry> loadDslRegistry() {
    return loadDslRegistry({resourcesDir() / "dsls"});
}

} // namespace mkb
