// A splitter's division saved as proportions for the window layout, restored once the splitter has its real size (a
// splitter on a hidden page has none yet, and QSplitter::restoreState there is skewed by the later layout).
#pragma once

#include <QByteArray>

class QSplitter;

namespace mkb::gui {

/// The splitter's pane sizes as fractions of their sum, with the pane count first.
QByteArray splitterProportions(const QSplitter* splitter);
/// Restores splitterProportions: now if the splitter is shown, else when it is first shown and laid out. Returns
/// false (and leaves the splitter as it is) when the state is unreadable or holds another number of panes.
bool restoreSplitterProportions(QSplitter* splitter, const QByteArray& state);

} // namespace mkb::gui
