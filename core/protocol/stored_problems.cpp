#include "core/protocol/stored_problems.h"

#include "core/catalog/catalog.h"
#include "core/util/text.h"

namespace mkb {

namespace fs = std::filesystem;

Result<StoredProblems> writeStoredProblems(Store& store, const fs::path& folder) {
    auto stored = store.problems();
    if (!stored) {
        return stored.error();
    }
    StoredProblems out;
    for (const Problem& problem : *stored) {
        if (out.byFingerprint.count(problem.fingerprint) != 0 || out.unreadable.count(problem.fingerprint) != 0) {
            continue;
        }
        const std::string file = problem.path.filename().extension() == ".py"
                                     ? problem.path.filename().string()
                                     : std::to_string(problem.number) + "_" + problem.slug + ".py";
        const fs::path root = folder / problem.fingerprint.substr(0, 16);
        const fs::path path = root / problem.family / file;
        std::error_code ec;
        fs::create_directories(path.parent_path(), ec);
        if (Status written = writeFileAtomically(path, problem.source); !written) {
            return written.error();
        }
        Catalog catalog = loadCatalog({root});
        if (catalog.problems.size() == 1) {
            out.byFingerprint.emplace(problem.fingerprint, std::move(catalog.problems.front()));
            out.roots.push_back(root);
        } else {
            out.unreadable[problem.fingerprint] =
                catalog.issues.empty() ? "it is not a problem file" : catalog.issues.front().message;
        }
    }
    return out;
}

} // namespace mkb
