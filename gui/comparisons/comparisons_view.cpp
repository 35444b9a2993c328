// ComparisonsView: filter controls above the table; combos list each column's values; Enter opens the inspector.
#include "gui/comparisons/comparisons_view.h"

#include "gui/common/table_layout.h"

#include "gui/common/browser_table.h"
#include "gui/comparisons/comparisons_filter.h"
#include "gui/comparisons/comparisons_model.h"
#include "gui/comparisons/transitions_view.h"
#include "gui/project/project_data.h"
#include "gui/project/timing_rule_switch.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace mkb::gui {

ComparisonsView::ComparisonsView(QWidget* parent) : QWidget(parent) {
    saveTimer_ = new QTimer(this);
    saveTimer_->setSingleShot(true);
    saveTimer_->setInterval(400);
    connect(saveTimer_, &QTimer::timeout, this, &ComparisonsView::writePendingFilters);
    if (QCoreApplication* application = QCoreApplication::instance()) { // quitting within the delay keeps them too
        connect(application, &QCoreApplication::aboutToQuit, this, &ComparisonsView::writePendingFilters);
    }
    setObjectName(QStringLiteral("comparisonsView"));
    model_ = new ComparisonsModel(this);
    filter_ = new ComparisonsFilter(this);
    filter_->setSourceModel(model_);

    auto* controls = new QHBoxLayout;
    for (int column : ComparisonsFilter::filterColumns()) {
        auto* combo = new QComboBox(this);
        combo->setObjectName(QStringLiteral("filter%1").arg(column));
        combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        combo->setToolTip(model_->headerData(column, Qt::Horizontal).toString());
        combos_.insert(column, combo);
        controls->addWidget(combo);
        connect(combo, &QComboBox::currentIndexChanged, this, [this, column, combo] {
            if (!syncing_) {
                filter_->setColumnFilter(column, combo->currentData().toString());
            }
        });
    }
    search_ = new QLineEdit(this);
    search_->setObjectName(QStringLiteral("comparisonsSearch"));
    search_->setPlaceholderText(tr("Search all columns…"));
    search_->setClearButtonEnabled(true);
    controls->addWidget(search_, 1);
    connect(search_, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (!syncing_) {
            filter_->setSearchText(text);
        }
    });
    significantOnly_ = new QCheckBox(tr("Significant only"), this);
    significantOnly_->setObjectName(QStringLiteral("significantOnly"));
    significantOnly_->setToolTip(tr("Only helped or harmed beyond noise: a pass/fail difference, or a paired "
                                    "re-timing whose 95% CI excludes 1"));
    auto* options = new QHBoxLayout; // a second row: one row of every control was 1,259 px wide, more than the
                                     // window's 1,280 px leave beside the view list
    options->addWidget(significantOnly_);
    connect(significantOnly_, &QCheckBox::toggled, this, [this](bool on) {
        if (!syncing_) {
            filter_->setSignificantOnly(on);
        }
    });
    timingRule_ = new TimingRuleSwitch(this); // the Outcome column and "significant only" follow it
    options->addWidget(timingRule_);
    auto* clear = new QPushButton(tr("Clear Filters"), this);
    connect(clear, &QPushButton::clicked, filter_, &ComparisonsFilter::clearFilters);
    options->addWidget(clear);
    options->addStretch(1);
    countLabel_ = new QLabel(this);
    countLabel_->setObjectName(QStringLiteral("comparisonsCount"));
    options->addWidget(countLabel_);

    table_ = new QTableView(this);
    table_->setObjectName(QStringLiteral("comparisonsTable"));
    table_->setModel(filter_);
    setUpBrowserTable(table_);
    connect(table_, &QTableView::doubleClicked, this, &ComparisonsView::activateRow);
    addOpenRowAction(table_, tr("Open in Inspector"), [this] { activateRow(table_->currentIndex()); });

    auto* comparisonsPage = new QWidget(this);
    auto* pageLayout = new QVBoxLayout(comparisonsPage);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    pageLayout->addLayout(controls);
    pageLayout->addLayout(options);
    pageLayout->addWidget(table_, 1);
    transitions_ = new TransitionsView(this);
    connect(transitions_, &TransitionsView::transitionActivated, this, &ComparisonsView::transitionActivated);
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("comparisonsTabs"));
    tabs_->setDocumentMode(true);
    tabs_->addTab(comparisonsPage, tr("Comparisons"));
    tabs_->addTab(transitions_, tr("Transitions"));
    tabs_->setTabToolTip(1, tr("KernelBench-X's refinement steps: their verdicts and ours, claimed and paired "
                               "after/before ratios"));
    tabs_->setTabVisible(1, false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tabs_, 1);

    connect(filter_, &ComparisonsFilter::filtersChanged, this, [this] {
        syncControlsFromFilter();
        saveFilters();
    });
    auto updateCount = [this] {
        countLabel_->setText(tr("%1 of %2").arg(filter_->rowCount()).arg(model_->rowCount()));
    };
    connect(filter_, &QAbstractItemModel::rowsInserted, this, updateCount);
    connect(filter_, &QAbstractItemModel::rowsRemoved, this, updateCount);
    connect(filter_, &QAbstractItemModel::modelReset, this, updateCount);
    connect(filter_, &QAbstractItemModel::layoutChanged, this, updateCount);
    refillCombos();
    updateCount();
}

void ComparisonsView::setProjectData(ProjectData* data) {
    if (data_) {
        disconnect(data_, nullptr, this, nullptr);
    }
    data_ = data;
    timingRule_->setProjectData(data_);
    if (data_) {
        connect(data_, &ProjectData::loaded, this, &ComparisonsView::refreshWhenShown);
        connect(data_, &ProjectData::settingsChanged, this, &ComparisonsView::refreshWhenShown);
    }
    refresh();
}

void ComparisonsView::refreshWhenShown() {
    if (window()->isVisible() && !isVisible()) {
        stale_ = true;
        return;
    }
    refresh();
}

void ComparisonsView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) {
        refresh();
    }
}

void ComparisonsView::refresh() {
    stale_ = false;
    if (!data_) {
        model_->setComparisons({}, {});
    } else {
        model_->setComparisons(data_->comparisons(), data_->settings());
    }
    transitions_->setTransitions(data_ ? data_->kbxTransitions() : std::vector<io::KbxTransition>{});
    const bool anyTransitions = data_ && !data_->kbxTransitions().empty();
    tabs_->setTabVisible(1, anyTransitions);
    if (!anyTransitions) {
        tabs_->setCurrentIndex(0);
    }
    refillCombos();
    resizeColumnsUnlessRestored(table_);
}

void ComparisonsView::showTransitions() {
    if (tabs_->isTabVisible(1)) {
        tabs_->setCurrentIndex(1);
    }
}

void ComparisonsView::refillCombos() {
    syncing_ = true;
    for (auto it = combos_.begin(); it != combos_.end(); ++it) {
        QComboBox* combo = it.value();
        combo->clear();
        combo->addItem(tr("Any %1").arg(model_->headerData(it.key(), Qt::Horizontal).toString().toLower()), QString());
        for (const QString& value : model_->distinctValues(it.key())) {
            combo->addItem(value, value);
        }
    }
    syncing_ = false;
    syncControlsFromFilter();
}

void ComparisonsView::syncControlsFromFilter() {
    syncing_ = true;
    for (auto it = combos_.begin(); it != combos_.end(); ++it) {
        const QString value = filter_->columnFilter(it.key());
        int index = it.value()->findData(value);
        if (index < 0) { // a saved value this data does not hold (yet): keep it selectable
            it.value()->addItem(value, value);
            index = it.value()->count() - 1;
        }
        it.value()->setCurrentIndex(index);
    }
    if (search_->text() != filter_->searchText()) {
        search_->setText(filter_->searchText());
    }
    significantOnly_->setChecked(filter_->significantOnly());
    syncing_ = false;
}

QString ComparisonsView::settingsGroupFor(const QString& storePath) {
    const QByteArray hash = QCryptographicHash::hash(storePath.toUtf8(), QCryptographicHash::Sha256).toHex().left(16);
    return QStringLiteral("projects/%1/comparisonsFilter").arg(QString::fromLatin1(hash));
}

ComparisonsView::~ComparisonsView() {
    writePendingFilters();
}

void ComparisonsView::setProjectKey(const QString& storePath) {
    writePendingFilters();   // the project being left keeps its last filters
    projectKey_ = QString(); // no saving while restoring
    QVariantMap state;
    if (!storePath.isEmpty()) {
        QSettings settings;
        state = settings.value(settingsGroupFor(storePath)).toMap();
    }
    filter_->restoreState(state);
    projectKey_ = storePath;
}

void ComparisonsView::saveFilters() {
    if (!projectKey_.isEmpty()) {
        savePending_ = true;
        saveTimer_->start();
    }
}

void ComparisonsView::writePendingFilters() {
    if (!savePending_) {
        return;
    }
    savePending_ = false;
    saveTimer_->stop();
    QSettings settings;
    settings.setValue(settingsGroupFor(projectKey_), filter_->state());
}

void ComparisonsView::filterTo(const QString& model, const QString& direction, const QString& boundary) {
    QVariantMap state;
    if (!model.isEmpty()) {
        state.insert(QStringLiteral("column/%1").arg(ComparisonsModel::ModelColumn), model);
    }
    if (!direction.isEmpty()) {
        state.insert(QStringLiteral("column/%1").arg(ComparisonsModel::DirectionColumn), direction);
    }
    if (!boundary.isEmpty()) {
        state.insert(QStringLiteral("column/%1").arg(ComparisonsModel::BoundaryColumn), boundary);
    }
    filter_->restoreState(state); // emits filtersChanged once: controls follow, the project saves it
}

void ComparisonsView::activateRow(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) {
        return;
    }
    const QModelIndex sourceIndex = filter_->mapToSource(proxyIndex);
    if (const analysis::Comparison* comparison = model_->comparisonAt(sourceIndex.row())) {
        emit comparisonActivated(*comparison);
    }
}

} // namespace mkb::gui
