// Drag and drop onto the window: one local file or folder is accepted, and reported after the drop returns.
#pragma once

#include <QObject>
#include <QString>

namespace mkb::gui {

/// An event filter: installed on a widget (which it sets to accept drops), it accepts a drag of exactly one local
/// path that exists, and emits pathDropped on the next turn of the event loop, since opening may show a dialog,
/// which must not run inside the drag's event.
class DropTarget : public QObject {
    Q_OBJECT
public:
    explicit DropTarget(QWidget* target);

signals:
    void pathDropped(const QString& path);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

} // namespace mkb::gui
