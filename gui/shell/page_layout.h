// A view's splitter positions and current tabs as one opaque state, for views that keep no layout of their own.
#pragma once

#include <QByteArray>

class QWidget;

namespace mkb::gui {

/// The splitter positions and current tabs of page, in the order the view made them (its splitter and tab counts
/// come first, so a view built differently since is told apart).
QByteArray pageLayoutState(const QWidget* page);

/// Restores what pageLayoutState saved; leaves the view as it is (and returns false) when the saved state is not
/// one of this view's: another count of splitters or tabs, or unreadable.
bool restorePageLayoutState(QWidget* page, const QByteArray& state);

} // namespace mkb::gui
