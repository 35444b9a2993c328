// Filtering and sorting of the comparisons table: one exact-match filter per category column plus a text search,
// numeric sort on numbers, and the filter state as a QVariantMap for per-project persistence.
#pragma once

#include "gui/common/table_model.h"
#include <QMap>
#include <QVariantMap>

namespace mkb::gui {

class ComparisonsFilter : public TableSortProxy {
    Q_OBJECT
public:
    explicit ComparisonsFilter(QObject* parent = nullptr);

    /// The category columns that have a filter control, in toolbar order.
    static QList<int> filterColumns();

    /// Keeps only rows whose column shows exactly value; an empty value removes the filter.
    void setColumnFilter(int column, const QString& value);
    QString columnFilter(int column) const { return columnFilters_.value(column); }
    /// Keeps only rows where some column contains text (case-insensitive); empty = no search.
    void setSearchText(const QString& text);
    QString searchText() const { return searchText_; }
    /// Keeps only helped or harmed comparisons beyond noise (ComparisonsModel::SignificantRole).
    void setSignificantOnly(bool on);
    bool significantOnly() const { return significantOnly_; }
    void clearFilters();

    /// {"column/<n>": value, ..., "search": text, "significant": true}: what saveState writes and restoreState reads.
    QVariantMap state() const;
    void restoreState(const QVariantMap& state);

signals:
    void filtersChanged();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QMap<int, QString> columnFilters_;
    QString searchText_;
    QString lowerSearchText_;
    bool significantOnly_ = false;
};

} // namespace mkb::gui
