// The stored problems' categories, read from the store, and storedCategoryOf looking a trial up in them.
#include "core/io/kbx_categories.h"

#include "core/catalog/problem_meta.h"

#include <map>
#include <memory>
#include <utility>

namespace mkb::io {

Result<std::map<std::pair<int, std::string>, std::string>> problemCategories(Store& store) {
    Result<std::vector<Problem>> problems = store.problems();
    if (!problems) {
        return problems.error();
    }
    std::map<std::pair<int, std::string>, std::string> categories;
    for (const Problem& problem : *problems) { // ordered by suite, number, id: the newest version comes last
        categories[{problem.number, problem.slug}] =
            problem.meta.category.empty() ? categoryFromSource(problem.source) : problem.meta.category;
    }
    return categories;
}

Result<CategoryOf> storedCategoryOf(Store& store) {
    auto categories = problemCategories(store);
    if (!categories) {
        return categories.error();
    }
    auto table = std::make_shared<const std::map<std::pair<int, std::string>, std::string>>(std::move(*categories));
    return CategoryOf([table](const TrialRecord& trial) {
        const auto found = table->find({trial.problemNumber, trial.problemSlug});
        return found == table->end() ? std::string() : found->second;
    });
}

} // namespace mkb::io
