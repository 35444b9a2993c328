// The DSL registry: descriptors of the kernel languages (resources/dsls/<id>.json), loaded and validated.
#pragma once

#include "core/util/result.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mkb {

/// What the compliance checker enforces for a DSL (docs/dsl-descriptor.md).
struct DslCompliance {
    std::string adapter;                        // triton, cuda, cutedsl, tirx, numba, pallas: how launches are observed
    std::vector<std::string> kernelMarkers;     // regexes; at least one must match kernel.py
    std::vector<std::string> forbiddenImports;  // module names kernel.py must not import (or their submodules)
    std::vector<std::string> forbiddenPatterns; // regexes that must not match kernel.py
};

struct DslDescriptor {
    std::string id;                    // "triton"; equals the descriptor's file stem
    std::string displayName;           // "Triton"
    std::string importName;            // the Python module whose presence means the DSL is installed
    std::vector<std::string> packages; // pip package names a user must install
    std::string installHint;           // "pip install triton"
    std::string prompt;                // the prompt fragment: how kernels are written and launched
    std::vector<std::string> docPack;  // .md paths relative to docRoot
    DslCompliance compliance;
    std::filesystem::path descriptorPath; // the .json file it was read from
    std::filesystem::path docRoot;        // <descriptor folder>/../dsl_docs/<id>

    /// The doc pack as absolute paths.
    std::vector<std::filesystem::path> docPackPaths() const;
};

struct DslRegistry {
    std::vector<DslDescriptor> dsls; // sorted by id

    const DslDescriptor* find(const std::string& id) const;
    std::vector<std::string> ids() const;
};

/// The adapters the grader knows.
const std::vector<std::string>& knownDslAdapters();

/// Parses and validates one descriptor. `file` names it in errors ("<file>: field 'x': ...") and fixes the expected
/// id (its stem) and the doc root; doc pack files must exist.
Result<DslDescriptor> parseDslDescriptor(std::string_view json, const std::filesystem::path& file);

/// Loads every <id>.json of each folder, in order; a second descriptor with an id already loaded is an error.
Result<DslRegistry> loadDslRegistry(const std::vector<std::filesystem::path>& descriptorDirs);

/// The shipped registry: resourcesDir()/dsls.
Result<DslRegistry> loadDslRegistry();

} // namespace mkb
