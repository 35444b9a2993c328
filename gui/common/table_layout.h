// A table's header layout (column widths, order, sort) for the saved window layout, and sizing columns to their
// contents only while the user has no saved layout for them.
#pragma once

#include <QByteArray>

class QTableView;

namespace mkb::gui {

/// The header's state (empty for no table).
QByteArray tableHeaderState(const QTableView* table);
/// Restores a header state; the rows follow its sort indicator. Marks the table so resizeColumnsUnlessRestored
/// keeps the restored widths. Returns whether the state was taken.
bool restoreTableHeader(QTableView* table, const QByteArray& state);
/// Sizes the columns to their contents unless restoreTableHeader gave the table its widths.
void resizeColumnsUnlessRestored(QTableView* table);

} // namespace mkb::gui
