// DropTarget: reads the drag's URLs; anything but one local path is left to the widget.
#include "gui/shell/drop_target.h"

#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QMimeData>
#include <QTimer>
#include <QUrl>
#include <QWidget>

namespace mkb::gui {

DropTarget::DropTarget(QWidget* target) : QObject(target) {
    target->setAcceptDrops(true);
    target->installEventFilter(this);
}

bool DropTarget::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::DragEnter) {
        auto* enter = static_cast<QDragEnterEvent*>(event);
        const QList<QUrl> urls = enter->mimeData()->urls();
        if (urls.size() == 1 && urls.front().isLocalFile() && QFileInfo::exists(urls.front().toLocalFile())) {
            enter->acceptProposedAction();
            return true;
        }
        return false;
    }
    if (event->type() == QEvent::Drop) {
        auto* drop = static_cast<QDropEvent*>(event);
        const QList<QUrl> urls = drop->mimeData()->urls();
        if (urls.size() != 1 || !urls.front().isLocalFile()) {
            return false;
        }
        drop->acceptProposedAction();
        const QString path = urls.front().toLocalFile();
        QTimer::singleShot(0, this, [this, path] { emit pathDropped(path); });
        return true;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace mkb::gui
