// TransitionsView: the category and kind combos and the search field above the transitions table.
#include "gui/comparisons/transitions_view.h"

#include "gui/common/browser_table.h"
#include "gui/comparisons/transitions_model.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

namespace mkb::gui {
namespace {

/// "all" (data "") first, then the values; the previous choice stays when it is still offered.
void refill(QComboBox* combo, const QString& all, const QStringList& values) {
    const QString chosen = combo->currentData().toString();
    const QSignalBlocker block(combo);
    combo->clear();
    combo->addItem(all, QString());
    for (const QString& value : values) {
        combo->addItem(value, value);
    }
    combo->setCurrentIndex(std::max(0, combo->findData(chosen)));
}

} // namespace

TransitionsView::TransitionsView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("transitionsView"));
    model_ = new TransitionsModel(this);
    filter_ = new TransitionsFilter(this);
    filter_->setSourceModel(model_);

    category_ = new QComboBox(this);
    category_->setObjectName(QStringLiteral("transitionsCategory"));
    category_->setToolTip(tr("KernelBench-X category"));
    category_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    kind_ = new QComboBox(this);
    kind_->setObjectName(QStringLiteral("transitionsKind"));
    kind_->setToolTip(tr("Transition kind (KernelBench-X's reached_by)"));
    kind_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("transitionsSearch"));
    search_->setPlaceholderText(tr("Search all columns…"));
    search_->setClearButtonEnabled(true);
    count_ = new QLabel(this);
    count_->setObjectName(QStringLiteral("transitionsCount"));
    connect(category_, &QComboBox::currentIndexChanged, this,
            [this] { filter_->setCategory(category_->currentData().toString()); });
    connect(kind_, &QComboBox::currentIndexChanged, this,
            [this] { filter_->setKind(kind_->currentData().toString()); });
    connect(search_, &QLineEdit::textChanged, filter_, &TransitionsFilter::setSearchText);

    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("transitionsTable"));
    table_->setModel(filter_);
    setUpBrowserTable(table_);
    connect(table_, &QTableView::doubleClicked, this, &TransitionsView::activateRow);
    addOpenRowAction(table_, tr("Open in Inspector"), [this] { activateRow(table_->currentIndex()); });

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Category"), this));
    controls->addWidget(category_);
    controls->addWidget(new QLabel(tr("Kind"), this));
    controls->addWidget(kind_);
    controls->addWidget(search_, 1);
    controls->addWidget(count_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(controls);
    layout->addWidget(table_, 1);

    connect(filter_, &QAbstractItemModel::modelReset, this, &TransitionsView::updateCount);
    connect(filter_, &QAbstractItemModel::layoutChanged, this, &TransitionsView::updateCount);
    connect(filter_, &QAbstractItemModel::rowsInserted, this, &TransitionsView::updateCount);
    connect(filter_, &QAbstractItemModel::rowsRemoved, this, &TransitionsView::updateCount);
    setTransitions({});
}

void TransitionsView::setTransitions(std::vector<io::KbxTransition> transitions) {
    model_->setTransitions(std::move(transitions));
    refill(category_, tr("All categories"), model_->categories());
    refill(kind_, tr("All kinds"), model_->kinds());
    filter_->setCategory(category_->currentData().toString());
    filter_->setKind(kind_->currentData().toString());
    table_->resizeColumnsToContents();
    updateCount();
}

void TransitionsView::updateCount() {
    count_->setText(tr("%1 of %2").arg(filter_->rowCount()).arg(model_->rowCount()));
}

void TransitionsView::activateRow(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) {
        return;
    }
    if (const io::KbxTransition* transition = model_->transitionAt(filter_->mapToSource(proxyIndex).row())) {
        emit transitionActivated(*transition);
    }
}

} // namespace mkb::gui
