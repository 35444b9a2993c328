// Header state save/restore for the window layout; a dynamic property remembers that widths were restored.
#include "gui/common/table_layout.h"

#include <QHeaderView>
#include <QTableView>

namespace mkb::gui {
namespace {

const char* const kRestoredProperty = "mkbHeaderRestored";

} // namespace

QByteArray tableHeaderState(const QTableView* table) {
    return table ? table->horizontalHeader()->saveState() : QByteArray();
}

bool restoreTableHeader(QTableView* table, const QByteArray& state) {
    if (!table || state.isEmpty() || !table->horizontalHeader()->restoreState(state)) {
        return false;
    }
    if (table->isSortingEnabled()) {
        table->sortByColumn(table->horizontalHeader()->sortIndicatorSection(),
                            table->horizontalHeader()->sortIndicatorOrder());
    }
    table->setProperty(kRestoredProperty, true);
    return true;
}

void resizeColumnsUnlessRestored(QTableView* table) {
    if (!table->property(kRestoredProperty).toBool()) {
        table->resizeColumnsToContents();
    }
}

} // namespace mkb::gui
