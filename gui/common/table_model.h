// The shared base of the workbench's table models: one sort role, one rule for a missing value, and the sort proxy
// that applies the rule.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QVariant>
#include <optional>

namespace mkb::gui {

/// A flat table: rowCount and columnCount are written once here; a concrete model says how many rows and columns it
/// has and answers data() for its cells.
class TableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Role {
        /// The key a TableSortProxy sorts by: numbers as numbers, text as text, and an invalid QVariant for a missing
        /// value, which sorts last in either direction.
        SortRole = Qt::UserRole + 1,
        FirstModelRole, // a concrete model's own roles start here
    };

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const final { return parent.isValid() ? 0 : tableRows(); }
    int columnCount(const QModelIndex& parent = {}) const final { return parent.isValid() ? 0 : tableColumns(); }

    /// The sort key of a number that may be missing.
    static QVariant sortKey(const std::optional<double>& value) { return value ? QVariant(*value) : QVariant(); }

protected:
    virtual int tableRows() const = 0;
    virtual int tableColumns() const = 0;
};

/// Sorts by TableModel::SortRole, with missing values (an invalid sort key) last whether the order ascends or
/// descends: a reader sorting by speedup sees the numbers first both ways.
class TableSortProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit TableSortProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace mkb::gui
