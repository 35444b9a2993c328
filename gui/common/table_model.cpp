// The missing-last sort rule of every table.
#include "gui/common/table_model.h"

namespace mkb::gui {

TableSortProxy::TableSortProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(TableModel::SortRole);
}

bool TableSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant leftKey = sourceModel()->data(left, sortRole());
    const QVariant rightKey = sourceModel()->data(right, sortRole());
    const bool leftMissing = !leftKey.isValid();
    const bool rightMissing = !rightKey.isValid();
    if (leftMissing || rightMissing) {
        // Ascending, a missing value is the greatest; descending (the proxy asks lessThan(right, left)), the least.
        return leftMissing != rightMissing && (sortOrder() == Qt::AscendingOrder ? rightMissing : leftMissing);
    }
    if (leftKey.typeId() == QMetaType::QString && rightKey.typeId() == QMetaType::QString) {
        return QString::compare(leftKey.toString(), rightKey.toString(), sortCaseSensitivity()) < 0;
    }
    const QPartialOrdering order = QVariant::compare(leftKey, rightKey);
    if (order == QPartialOrdering::Unordered) {
        return QSortFilterProxyModel::lessThan(left, right);
    }
    return order == QPartialOrdering::Less;
}

} // namespace mkb::gui
