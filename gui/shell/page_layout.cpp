// Saving and restoring a view's splitter positions and current tabs as one opaque state.
#include "gui/shell/page_layout.h"

#include "gui/common/splitter_state.h"

#include <QDataStream>
#include <QIODevice>
#include <QSplitter>
#include <QTabWidget>
#include <vector>

namespace mkb::gui {

QByteArray pageLayoutState(const QWidget* page) {
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    const QList<QSplitter*> splitters = page->findChildren<QSplitter*>();
    const QList<QTabWidget*> tabs = page->findChildren<QTabWidget*>();
    out << quint32(splitters.size()) << quint32(tabs.size());
    for (const QSplitter* splitter : splitters) {
        out << splitterProportions(splitter);
    }
    for (const QTabWidget* tab : tabs) {
        out << qint32(tab->currentIndex());
    }
    return state;
}

bool restorePageLayoutState(QWidget* page, const QByteArray& state) {
    QDataStream in(state);
    quint32 splitterCount = 0;
    quint32 tabCount = 0;
    in >> splitterCount >> tabCount;
    const QList<QSplitter*> splitters = page->findChildren<QSplitter*>();
    const QList<QTabWidget*> tabs = page->findChildren<QTabWidget*>();
    if (in.status() != QDataStream::Ok || splitterCount != quint32(splitters.size()) ||
        tabCount != quint32(tabs.size())) {
        return false;
    }
    std::vector<QByteArray> splitterStates(splitterCount);
    std::vector<qint32> tabIndexes(tabCount);
    for (QByteArray& splitterState : splitterStates) {
        in >> splitterState;
    }
    for (qint32& index : tabIndexes) {
        in >> index;
    }
    if (in.status() != QDataStream::Ok) {
        return false;
    }
    for (qsizetype i = 0; i < splitters.size(); ++i) {
        restoreSplitterProportions(splitters[i], splitterStates[size_t(i)]);
    }
    for (qsizetype i = 0; i < tabs.size(); ++i) {
        if (tabIndexes[size_t(i)] >= 0 && tabIndexes[size_t(i)] < tabs[i]->count()) {
            tabs[i]->setCurrentIndex(tabIndexes[size_t(i)]);
        }
    }
    return true;
}

} // namespace mkb::gui
