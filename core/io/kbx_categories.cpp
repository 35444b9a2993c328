// storedCategoryOf: report::problemCategories read once and looked up by (number, slug), as the report does.
#include "core/io/kbx_categories.h"

#include "core/io/report_model.h"

#include <map>
#include <memory>
#include <utility>

namespace mkb::io {

Result<CategoryOf> storedCategoryOf(Store& store) {
    auto categories = report::problemCategories(store);
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
