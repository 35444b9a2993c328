// The shortcuts table, gathered from the window's actions when shown, so a new shortcut lists itself.
#include "gui/shell/shortcuts_dialog.h"

#include <QAction>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QKeySequence>
#include <QTableWidget>
#include <QVBoxLayout>

namespace mkb::gui {

namespace {

QString inWords(const char* text) {
    return QCoreApplication::translate("MainWindow", text);
}

} // namespace

void showShortcutsDialog(QWidget* window) {
    QDialog dialog(window);
    dialog.setObjectName(QStringLiteral("shortcutsDialog"));
    dialog.setWindowTitle(inWords("Keyboard Shortcuts"));
    auto* table = new QTableWidget(&dialog);
    table->setColumnCount(2);
    table->setHorizontalHeaderLabels({inWords("Action"), inWords("Shortcut")});
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    QList<QPair<QString, QString>> rows;
    for (QAction* action : window->findChildren<QAction*>()) {
        if (!action->shortcut().isEmpty() && !action->text().isEmpty()) {
            rows.append(
                {action->text().remove(QLatin1Char('&')), action->shortcut().toString(QKeySequence::NativeText)});
        }
    }
    rows.append({inWords("Start / cancel / resume a run (Runs)"), QStringLiteral("Ctrl+R / Ctrl+. / Ctrl+Shift+R")});
    rows.append({inWords("Open the comparison in the inspector (Comparisons)"), inWords("Enter")});
    rows.append({inWords("Copy selected rows as TSV (any table)"), QKeySequence(QKeySequence::Copy).toString()});
    rows.append({inWords("Export the chart (Charts)"), QStringLiteral("Ctrl+E")});
    table->setRowCount(int(rows.size()));
    for (int row = 0; row < rows.size(); ++row) {
        table->setItem(row, 0, new QTableWidgetItem(rows[row].first));
        table->setItem(row, 1, new QTableWidgetItem(rows[row].second));
    }
    table->resizeColumnsToContents();
    table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    dialog.resize(560, 480);
    dialog.exec();
}

} // namespace mkb::gui
