// A browser table: the set-up the comparisons and transitions lists share (sortable, whole rows, read-only, Ctrl+C),
// and the Enter action that opens the current row.
#pragma once

#include <QString>
#include <functional>

class QTableView;

namespace mkb::gui {

/// Sorting on (rows in the model's order until the user sorts), whole-row selection, no editing, alternating rows,
/// no row numbers, the last column stretched, and installCopyRowsAction.
void setUpBrowserTable(QTableView* table);

/// An action on the table, named text, that Enter and Return trigger while the table has focus; it calls open.
void addOpenRowAction(QTableView* table, const QString& text, const std::function<void()>& open);

} // namespace mkb::gui
