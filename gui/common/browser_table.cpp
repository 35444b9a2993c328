// The browser tables' shared set-up.
#include "gui/common/browser_table.h"

#include "gui/common/table_copy.h"

#include <QAction>
#include <QHeaderView>
#include <QKeySequence>
#include <QTableView>

namespace mkb::gui {

void setUpBrowserTable(QTableView* table) {
    table->setSortingEnabled(true);
    table->sortByColumn(-1, Qt::AscendingOrder);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setStretchLastSection(true);
    installCopyRowsAction(table);
}

void addOpenRowAction(QTableView* table, const QString& text, const std::function<void()>& open) {
    auto* action = new QAction(text, table);
    action->setShortcuts({QKeySequence(Qt::Key_Return), QKeySequence(Qt::Key_Enter)});
    action->setShortcutContext(Qt::WidgetShortcut);
    QObject::connect(action, &QAction::triggered, table, open);
    table->addAction(action);
}

} // namespace mkb::gui
