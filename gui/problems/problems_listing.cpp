// Gathers the problems view's content from the catalog and the store, and words catalog issues for a status line.
#include "gui/problems/problems_listing.h"

#include "core/store/store.h"

#include <algorithm>

namespace mkb::gui {

ProblemsListing loadProblemsListing(const std::vector<std::filesystem::path>& suiteRoots, Store* store) {
    ProblemsListing listing;
    Catalog catalog = loadCatalog(suiteRoots);
    std::vector<Problem> stored;
    if (store) {
        auto result = store->problems();
        if (result) {
            stored = std::move(result.value());
        } else {
            listing.storeError = result.error().message;
        }
    }
    listing.rows = buildProblemRows(catalog, stored);
    listing.catalogIssues = std::move(catalog.issues);
    return listing;
}

std::string describeCatalogIssues(const std::vector<CatalogIssue>& issues, size_t maxListed) {
    // A file with several issues counts once and is described by its first issue.
    std::vector<const CatalogIssue*> firstPerFile;
    for (const CatalogIssue& issue : issues) {
        const bool seen = std::any_of(firstPerFile.begin(), firstPerFile.end(),
                                      [&](const CatalogIssue* known) { return known->path == issue.path; });
        if (!seen) {
            firstPerFile.push_back(&issue);
        }
    }
    if (firstPerFile.empty()) {
        return {};
    }
    const size_t files = firstPerFile.size();
    std::string text = std::to_string(files) + (files == 1 ? " malformed file: " : " malformed files: ");
    for (size_t i = 0; i < files && i < maxListed; ++i) {
        if (i > 0) {
            text += "; ";
        }
        text += firstPerFile[i]->path.filename().string() + " (" + firstPerFile[i]->message + ")";
    }
    if (files > maxListed) {
        text += "; and " + std::to_string(files - maxListed) + " more";
    }
    return text;
}

} // namespace mkb::gui
