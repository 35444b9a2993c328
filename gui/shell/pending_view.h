// The honest stand-in for a view whose data does not exist yet: what it will show and how to get there.
#pragma once

#include <QWidget>

namespace mkb::gui {

class PendingView : public QWidget {
    Q_OBJECT
public:
    PendingView(const QString& title, const QString& whatItShows, QWidget* parent = nullptr);
};

} // namespace mkb::gui
