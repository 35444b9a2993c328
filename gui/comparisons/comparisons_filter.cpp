// ComparisonsFilter: exact matches on the model's FilterRole, a case-insensitive search over every column; on the
// comparisons model both come from its per-row caches (a keystroke over 100,000 rows stays interactive).
#include "gui/comparisons/comparisons_filter.h"

#include "gui/comparisons/comparisons_model.h"

namespace mkb::gui {

ComparisonsFilter::ComparisonsFilter(QObject* parent) : TableSortProxy(parent) {
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

QList<int> ComparisonsFilter::filterColumns() {
    return {ComparisonsModel::ModelColumn,   ComparisonsModel::DirectionColumn, ComparisonsModel::FamilyColumn,
            ComparisonsModel::OutcomeColumn, ComparisonsModel::StandingColumn,  ComparisonsModel::SourceVerdictColumn,
            ComparisonsModel::BoundaryColumn};
}

void ComparisonsFilter::setColumnFilter(int column, const QString& value) {
    if (columnFilters_.value(column) == value) {
        return;
    }
    if (value.isEmpty()) {
        columnFilters_.remove(column);
    } else {
        columnFilters_.insert(column, value);
    }
    invalidateFilter();
    emit filtersChanged();
}

void ComparisonsFilter::setSearchText(const QString& text) {
    if (searchText_ == text) {
        return;
    }
    searchText_ = text;
    lowerSearchText_ = text.toLower();
    invalidateFilter();
    emit filtersChanged();
}

void ComparisonsFilter::setSignificantOnly(bool on) {
    if (significantOnly_ == on) {
        return;
    }
    significantOnly_ = on;
    invalidateFilter();
    emit filtersChanged();
}

void ComparisonsFilter::clearFilters() {
    significantOnly_ = false;
    columnFilters_.clear();
    searchText_.clear();
    lowerSearchText_.clear();
    invalidateFilter();
    emit filtersChanged();
}

QVariantMap ComparisonsFilter::state() const {
    QVariantMap state;
    for (auto it = columnFilters_.begin(); it != columnFilters_.end(); ++it) {
        state.insert(QStringLiteral("column/%1").arg(it.key()), it.value());
    }
    if (!searchText_.isEmpty()) {
        state.insert(QStringLiteral("search"), searchText_);
    }
    if (significantOnly_) {
        state.insert(QStringLiteral("significant"), true);
    }
    return state;
}

void ComparisonsFilter::restoreState(const QVariantMap& state) {
    columnFilters_.clear();
    for (int column : filterColumns()) {
        const QString value = state.value(QStringLiteral("column/%1").arg(column)).toString();
        if (!value.isEmpty()) {
            columnFilters_.insert(column, value);
        }
    }
    searchText_ = state.value(QStringLiteral("search")).toString();
    lowerSearchText_ = searchText_.toLower();
    significantOnly_ = state.value(QStringLiteral("significant")).toBool();
    invalidateFilter();
    emit filtersChanged();
}

bool ComparisonsFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    // The comparisons model answers from its caches; any other model goes through data().
    if (const auto* comparisons = qobject_cast<const ComparisonsModel*>(sourceModel())) {
        if (significantOnly_ && !comparisons->isSignificant(sourceRow)) {
            return false;
        }
        for (auto it = columnFilters_.begin(); it != columnFilters_.end(); ++it) {
            if (comparisons->filterTextAt(sourceRow, it.key()) != it.value()) {
                return false;
            }
        }
        return lowerSearchText_.isEmpty() || comparisons->rowContains(sourceRow, lowerSearchText_);
    }
    const QAbstractItemModel* model = sourceModel();
    if (significantOnly_ &&
        !model->data(model->index(sourceRow, 0, sourceParent), ComparisonsModel::SignificantRole).toBool()) {
        return false;
    }
    for (auto it = columnFilters_.begin(); it != columnFilters_.end(); ++it) {
        const QModelIndex index = model->index(sourceRow, it.key(), sourceParent);
        if (model->data(index, ComparisonsModel::FilterRole).toString() != it.value()) {
            return false;
        }
    }
    if (searchText_.isEmpty()) {
        return true;
    }
    for (int column = 0; column < model->columnCount(sourceParent); ++column) {
        const QModelIndex index = model->index(sourceRow, column, sourceParent);
        if (model->data(index, Qt::DisplayRole).toString().contains(searchText_, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

} // namespace mkb::gui
