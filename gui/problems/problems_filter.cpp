// Filtering and sorting of the problems table through the model's FilterTextRole, FamilyRole and SortRole.
#include "gui/problems/problems_filter.h"

#include "gui/problems/problems_model.h"

namespace mkb::gui {

ProblemsFilter::ProblemsFilter(QObject* parent) : TableSortProxy(parent) {
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void ProblemsFilter::setText(const QString& text) {
    const QStringList words = text.toLower().split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (words == words_) {
        return;
    }
    words_ = words;
    invalidateFilter();
}

void ProblemsFilter::setFamily(const QString& family) {
    if (family == family_) {
        return;
    }
    family_ = family;
    invalidateFilter();
}

bool ProblemsFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (!family_.isEmpty() && index.data(ProblemsModel::FamilyRole).toString() != family_) {
        return false;
    }
    if (words_.isEmpty()) {
        return true;
    }
    const QString haystack = index.data(ProblemsModel::FilterTextRole).toString();
    for (const QString& word : words_) {
        if (!haystack.contains(word)) {
            return false;
        }
    }
    return true;
}

} // namespace mkb::gui
