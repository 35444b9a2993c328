// Compiling problem files in a Python child: one interpreter for all the files, one JSON line back per file.
#include "core/catalog/syntax_check.h"

#include "core/util/child_process.h"
#include "core/util/json_input.h"
#include "core/util/text.h"

#include <set>

namespace mkb {
namespace {

// Reads each path given on the command line as bytes, as Python itself reads a source file, and compiles it.
// It prints {"i": index, "error": null | "...", "line": N | null} per file, flushed, so that when the interpreter
// dies on a file the files before it keep their answers and that file is the first without one.
const char* const kCompileScript = R"PY(
import json, sys
for i, path in enumerate(sys.argv[1:]):
    error, line = None, None
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as caught:
        error, line = f"{type(caught).__name__}: {caught.msg}", caught.lineno
    except (ValueError, MemoryError, RecursionError, OverflowError) as caught:
        error = f"{type(caught).__name__}: {caught}"
    print(json.dumps({"i": i, "error": error, "line": line}), flush=True)
)PY";

constexpr double kTimeoutS = 120;

} // namespace

Result<std::vector<CatalogIssue>> pythonSyntaxIssues(const std::vector<std::filesystem::path>& files,
                                                     const std::string& python) {
    std::vector<CatalogIssue> issues;
    if (files.empty()) {
        return issues;
    }
    std::vector<std::string> argv = {python, "-I", "-S", "-c", kCompileScript};
    for (const std::filesystem::path& file : files) {
        argv.push_back(file.string());
    }
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.whatToDo = "name a Python through --python or MKB_PYTHON";
    Result<ChildOutput> ran = runChild(spec, kTimeoutS);
    if (!ran) {
        return makeError("the Python syntax check could not start: " + ran.error().message);
    }
    std::set<std::size_t> answered;
    for (const std::string& line : splitString(ran->out, '\n')) {
        nlohmann::json answer = parseJsonInputOrDiscarded(line);
        if (!answer.is_object() || !answer.contains("i") || !answer["i"].is_number_unsigned()) {
            continue;
        }
        const std::size_t index = answer["i"].get<std::size_t>();
        if (index >= files.size() || !answered.insert(index).second) {
            continue;
        }
        if (answer.value("error", nlohmann::json()).is_string()) {
            std::string message = "Python cannot compile it: " + answer["error"].get<std::string>();
            if (answer.value("line", nlohmann::json()).is_number_integer()) {
                message += " (line " + std::to_string(answer["line"].get<long long>()) + ")";
            }
            issues.push_back({files[index], message});
        }
    }
    if (answered.size() < files.size()) {
        // The interpreter stopped early: the first file without an answer is the one it was compiling.
        std::size_t first = 0;
        while (answered.count(first) != 0) {
            ++first;
        }
        const std::string how =
            ran->timedOut ? "took longer than " + std::to_string(int(kTimeoutS)) + " s"
                          : "stopped with exit code " + std::to_string(ran->status.exited() ? ran->status.code : -1);
        issues.push_back({files[first], "Python's compiler " + how + " on this file; it cannot be a problem file" +
                                            (files.size() - answered.size() > 1
                                                 ? " (" + std::to_string(files.size() - answered.size() - 1) +
                                                       " file(s) after it were not checked)"
                                                 : "")});
    }
    return issues;
}

} // namespace mkb
