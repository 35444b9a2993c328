// Splitter proportions: saving them, and applying them when the splitter is shown with its real length.
#include "gui/common/splitter_state.h"

#include <QDataStream>
#include <QEvent>
#include <QIODevice>
#include <QPointer>
#include <QSplitter>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace mkb::gui {
namespace {

/// Sizes summing to the splitter's present length: setSizes shrinks an oversized list towards the panes' minimums,
/// not in proportion.
void applyProportions(QSplitter* splitter, const QList<double>& proportions) {
    int length = 0;
    for (int size : splitter->sizes()) {
        length += size;
    }
    QList<int> sizes;
    int given = 0;
    for (qsizetype i = 0; i < proportions.size(); ++i) {
        const int size = i + 1 == proportions.size() ? length - given : int(std::lround(proportions[i] * length));
        sizes << std::max(0, size);
        given += size;
    }
    splitter->setSizes(sizes);
}

/// Applies the proportions at each show or resize of the splitter until the event loop has run once after the
/// first, so the layout passes that follow a show all end with the saved division; then it removes itself.
class PendingProportions : public QObject {
public:
    PendingProportions(QSplitter* splitter, QList<double> proportions)
        : QObject(splitter), splitter_(splitter), proportions_(std::move(proportions)) {
        splitter->installEventFilter(this);
    }

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == splitter_ && (event->type() == QEvent::Show || event->type() == QEvent::Resize) &&
            splitter_->isVisible()) {
            applyProportions(splitter_, proportions_);
            if (!finishing_) {
                finishing_ = true;
                QTimer::singleShot(0, this, [this] {
                    splitter_->removeEventFilter(this);
                    deleteLater();
                });
            }
        }
        return false;
    }

private:
    QSplitter* splitter_;
    QList<double> proportions_;
    bool finishing_ = false;
};

} // namespace

QByteArray splitterProportions(const QSplitter* splitter) {
    const QList<int> sizes = splitter->sizes();
    double total = 0;
    for (int size : sizes) {
        total += size;
    }
    QList<double> proportions;
    for (int size : sizes) {
        proportions << (total > 0 ? size / total : 1.0 / double(sizes.size()));
    }
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << quint32(proportions.size()) << proportions;
    return state;
}

bool restoreSplitterProportions(QSplitter* splitter, const QByteArray& state) {
    QDataStream in(state);
    quint32 count = 0;
    QList<double> proportions;
    in >> count >> proportions;
    if (in.status() != QDataStream::Ok || count != quint32(splitter->count()) ||
        proportions.size() != splitter->count()) {
        return false;
    }
    for (double proportion : proportions) {
        if (!std::isfinite(proportion) || proportion < 0 || proportion > 1) {
            return false;
        }
    }
    for (QObject* child : splitter->children()) {
        if (auto* pending = dynamic_cast<PendingProportions*>(child)) { // a restore still waiting: this one wins
            splitter->removeEventFilter(pending);
            pending->deleteLater();
        }
    }
    if (splitter->isVisible()) {
        applyProportions(splitter, proportions);
    } else {
        new PendingProportions(splitter, proportions);
    }
    return true;
}

} // namespace mkb::gui
