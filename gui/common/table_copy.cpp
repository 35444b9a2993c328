// Tab-separated copying of selected table rows, so any table pastes cleanly into a spreadsheet.
#include "gui/common/table_copy.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QTableView>
#include <algorithm>

namespace mkb::gui {
namespace {

QString cleanCell(QString text) {
    text.replace(QLatin1Char('\t'), QLatin1Char(' '));
    text.replace(QLatin1Char('\n'), QLatin1Char(' '));
    text.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return text;
}

// Columns in the order the user sees them, skipping hidden ones.
QList<int> visibleColumnsInViewOrder(const QAbstractItemView& view) {
    const QAbstractItemModel* model = view.model();
    QList<int> columns;
    const auto* table = qobject_cast<const QTableView*>(&view);
    for (int visual = 0; visual < model->columnCount(); ++visual) {
        int logical = visual;
        if (table) {
            logical = table->horizontalHeader()->logicalIndex(visual);
            if (table->isColumnHidden(logical)) {
                continue;
            }
        }
        columns << logical;
    }
    return columns;
}

} // namespace

QString selectedRowsAsTsv(const QAbstractItemView& view) {
    const QAbstractItemModel* model = view.model();
    const QItemSelectionModel* selection = view.selectionModel();
    if (!model || !selection) {
        return {};
    }
    QList<int> rows;
    for (const QModelIndex& index : selection->selectedIndexes()) {
        if (!rows.contains(index.row())) {
            rows << index.row();
        }
    }
    if (rows.isEmpty()) {
        return {};
    }
    std::sort(rows.begin(), rows.end());
    const QList<int> columns = visibleColumnsInViewOrder(view);

    QStringList lines;
    QStringList header;
    for (int column : columns) {
        header << cleanCell(model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
    }
    lines << header.join(QLatin1Char('\t'));
    for (int row : rows) {
        QStringList cells;
        for (int column : columns) {
            cells << cleanCell(model->index(row, column).data(Qt::DisplayRole).toString());
        }
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void installCopyRowsAction(QAbstractItemView* view) {
    auto* copy = new QAction(QObject::tr("Copy Rows"), view);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    QObject::connect(copy, &QAction::triggered, view, [view] {
        const QString text = selectedRowsAsTsv(*view);
        if (!text.isEmpty()) {
            QApplication::clipboard()->setText(text);
        }
    });
    view->addAction(copy);
}

} // namespace mkb::gui
