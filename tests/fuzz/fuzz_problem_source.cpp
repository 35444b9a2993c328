// libFuzzer target: a problem file's text through the catalog's reading steps (UTF-8 check, tokenizer, module scan,
// MKB_META literal, ProblemMeta), in the order core/catalog/catalog.cpp's readProblemFile takes them, and then the
// whole static check of `mkb problems validate` (loadCatalog on a suite holding the file as its one problem).
#include "core/catalog/catalog.h"
#include "core/catalog/problem_meta.h"
#include "core/catalog/python_source.h"
#include "core/records/problem.h"
#include "core/util/text.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <unistd.h>

namespace {

/// The static check whole, as validate runs it: every byte of the input, whatever it is, as a suite's one file.
void loadAsSuite(const std::uint8_t* data, std::size_t size) {
    namespace fs = std::filesystem;
    static const fs::path root = fs::temp_directory_path() / ("mkb-fuzz-suite-" + std::to_string(::getpid()));
    fs::create_directories(root / "fam");
    std::ofstream(root / "fam" / "01_case.py", std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    (void)mkb::loadCatalog({root});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    loadAsSuite(data, size);
    std::string_view text(reinterpret_cast<const char*>(data), size);
    // The catalog refuses a file that is not UTF-8 before tokenizing it, and drops a leading byte-order mark.
    if (!mkb::isValidUtf8(text)) {
        return 0;
    }
    if (mkb::startsWith(text, "\xEF\xBB\xBF")) {
        text.remove_prefix(3);
    }
    // The literal parser on its own, so that inputs without `MKB_META =` still reach it.
    (void)mkb::parsePythonLiteralText(text);

    auto lines = mkb::tokenizePython(text);
    if (!lines) {
        return 0;
    }
    mkb::PythonModuleFacts facts = mkb::scanPythonModule(*lines);
    if (facts.hasMeta) {
        auto literal = mkb::parsePythonLiteral(facts.metaValueTokens, 0, facts.metaValueTokens.size());
        if (literal) {
            mkb::ProblemMeta meta;
            (void)mkb::readProblemMeta(*literal, facts.metaLine, meta);
        }
    }
    return 0;
}
