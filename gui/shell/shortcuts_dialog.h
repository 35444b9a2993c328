// The Help menu's table of keyboard shortcuts: every action of the window that has one, and the views' own keys.
#pragma once

class QWidget;

namespace mkb::gui {

/// Shows the table modally over window (its QAction children supply the rows).
void showShortcutsDialog(QWidget* window);

} // namespace mkb::gui
