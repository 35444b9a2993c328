// Copying from tables: the selected rows of any item view as tab-separated text, and the Ctrl+C action that does it.
#pragma once

#include <QString>

class QAbstractItemView;

namespace mkb::gui {

/// The selected rows of the view (in view order), each cell's display text, one line per row, tabs between
/// cells, preceded by a header line. Tabs and newlines inside a cell become spaces. Empty when nothing is selected.
QString selectedRowsAsTsv(const QAbstractItemView& view);

/// Adds a Ctrl+C (QKeySequence::Copy) action to the view that puts selectedRowsAsTsv on the clipboard.
void installCopyRowsAction(QAbstractItemView* view);

} // namespace mkb::gui
