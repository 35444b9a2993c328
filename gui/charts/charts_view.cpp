// ChartsView: keeps the charts in step with ProjectData (loaded, settings changed) and the scope combos, and routes
// export, copy and clicks.
#include "gui/charts/charts_view.h"

#include "gui/charts/chart.h"
#include "gui/charts/chart_kinds.h"
#include "gui/charts/direction_matrix_chart.h"
#include "gui/charts/kbx_category_chart.h"
#include "gui/charts/kbx_events_chart.h"
#include "gui/charts/paper_preset_dialog.h"
#include "gui/project/project_data.h"

#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace mkb::gui {

ChartsView::ChartsView(ProjectData* data, QWidget* parent) : QWidget(parent), data_(data) {
    directionMatrix_ = new DirectionMatrixChart(DirectionMatrixChart::Measure::Lift, this);
    charts_ = {new FamilyLiftChart(this),
               new FamilyHarmChart(this),
               new PairedRatioChart(this),
               new StandingOutcomesChart(this),
               new LadderChart(this),
               new SpeedupScatterChart(this),
               directionMatrix_,
               new KbxCategoryChart(KbxCategoryChart::Measure::PassRate, this),
               new KbxCategoryChart(KbxCategoryChart::Measure::Speedup, this),
               new KbxEventsChart(this)};
    list_ = new QListWidget(this);
    stack_ = new QStackedWidget(this);
    for (Chart* chart : charts_) {
        list_->addItem(chart->title());
        stack_->addWidget(chart);
        connect(chart, &Chart::filterRequested, this,
                [this](const QString& model, const QString& direction, const QString& family, const QString& problem) {
                    emit filterRequested(model.isEmpty() ? scopeModel() : model,
                                         direction.isEmpty() ? scopeDirection() : direction, family, problem);
                });
    }
    list_->setMaximumWidth(240);
    list_->item(6)->setText(tr("Direction matrix"));
    list_->item(7)->setText(tr("KernelBench-X pass rate by category"));
    list_->item(8)->setText(tr("KernelBench-X speedup by category"));
    list_->item(9)->setText(tr("KernelBench-X performance events"));

    modelCombo_ = new QComboBox(this);
    directionCombo_ = new QComboBox(this);
    measureCombo_ = new QComboBox(this);
    measureCombo_->setObjectName(QStringLiteral("directionMatrixMeasure"));
    measureCombo_->addItem(tr("S lift"), int(DirectionMatrixChart::Measure::Lift));
    measureCombo_->addItem(tr("Helped share T"), int(DirectionMatrixChart::Measure::Helped));
    measureCombo_->addItem(tr("Harmed share H"), int(DirectionMatrixChart::Measure::Harmed));
    measureCombo_->setToolTip(tr("What colours the direction matrix's cells"));
    measureLabel_ = new QLabel(tr("Measure"), this);
    auto* exportButton = new QPushButton(tr("Export…"), this);
    auto* copyButton = new QPushButton(tr("Copy"), this);
    auto* presetButton = new QPushButton(tr("Paper preset…"), this);
    exportButton->setShortcut(QKeySequence(QStringLiteral("Ctrl+E")));
    exportButton->setToolTip(tr("Export the chart as PDF, SVG or PNG with the paper preset (Ctrl+E)"));
    copyButton->setShortcut(QKeySequence::Copy);
    copyButton->setToolTip(tr("Copy the chart as an image and SVG with the paper preset (Ctrl+C)"));
    presetLabel_ = new QLabel(this);
    statusLabel_ = new QLabel(this);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Model"), this));
    bar->addWidget(modelCombo_);
    bar->addWidget(new QLabel(tr("Direction"), this));
    bar->addWidget(directionCombo_);
    bar->addWidget(measureLabel_);
    bar->addWidget(measureCombo_);
    bar->addStretch(1);
    bar->addWidget(presetLabel_);
    bar->addWidget(presetButton);
    bar->addWidget(exportButton);
    bar->addWidget(copyButton);
    auto* splitter = new QSplitter(this);
    splitter->addWidget(list_);
    splitter->addWidget(stack_);
    splitter->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);
    layout->addWidget(statusLabel_);

    QSettings settings;
    preset_ = loadLastPaperPreset(settings);
    updatePresetLabel();

    connect(list_, &QListWidget::currentRowChanged, stack_, &QStackedWidget::setCurrentIndex);
    connect(list_, &QListWidget::currentRowChanged, this, &ChartsView::updateMeasureChoice);
    connect(measureCombo_, &QComboBox::currentIndexChanged, this, [this] {
        directionMatrix_->setMeasure(DirectionMatrixChart::Measure(measureCombo_->currentData().toInt()));
    });
    connect(modelCombo_, &QComboBox::currentIndexChanged, this, &ChartsView::redraw);
    connect(directionCombo_, &QComboBox::currentIndexChanged, this, &ChartsView::redraw);
    connect(exportButton, &QPushButton::clicked, this, &ChartsView::chooseAndExport);
    connect(copyButton, &QPushButton::clicked, this, &ChartsView::copyToClipboard);
    connect(presetButton, &QPushButton::clicked, this, &ChartsView::editPaperPreset);
    if (data_) {
        connect(data_, &ProjectData::loaded, this, &ChartsView::refillWhenShown);
        connect(data_, &ProjectData::settingsChanged, this, &ChartsView::redraw);
    }
    list_->setCurrentRow(0);
    updateMeasureChoice();
    refill();
}

void ChartsView::updateMeasureChoice() {
    const bool matrixShown = currentChart() == directionMatrix_;
    measureLabel_->setVisible(matrixShown);
    measureCombo_->setVisible(matrixShown);
}

void ChartsView::setDirectionMatrixMeasure(DirectionMatrixChart::Measure measure) {
    measureCombo_->setCurrentIndex(std::max(0, measureCombo_->findData(int(measure))));
}

Chart* ChartsView::currentChart() const {
    return charts_[std::size_t(std::max(0, stack_->currentIndex()))];
}

void ChartsView::setCurrentChart(int index) {
    list_->setCurrentRow(index);
}

QString ChartsView::scopeModel() const {
    return modelCombo_->currentIndex() > 0 ? modelCombo_->currentText() : QString();
}

QString ChartsView::scopeDirection() const {
    return directionCombo_->currentIndex() > 0 ? directionCombo_->currentText() : QString();
}

void ChartsView::setScope(const QString& model, const QString& direction) {
    modelCombo_->setCurrentIndex(model.isEmpty() ? 0 : std::max(0, modelCombo_->findText(model)));
    directionCombo_->setCurrentIndex(direction.isEmpty() ? 0 : std::max(0, directionCombo_->findText(direction)));
}

void ChartsView::refillWhenShown() {
    if (window()->isVisible() && !isVisible()) {
        stale_ = true;
        return;
    }
    refill();
}

void ChartsView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) {
        refill();
    }
}

void ChartsView::refill() {
    stale_ = false;
    const QString model = scopeModel();
    const QString direction = scopeDirection();
    std::set<QString> models;
    std::set<QString> directions;
    if (data_) {
        for (const analysis::Comparison& comparison : data_->comparisons()) {
            models.insert(QString::fromStdString(comparison.model));
            directions.insert(QString::fromStdString(comparison.direction));
        }
    }
    {
        const QSignalBlocker blockModels(modelCombo_);
        const QSignalBlocker blockDirections(directionCombo_);
        modelCombo_->clear();
        modelCombo_->addItem(tr("All models"));
        for (const QString& name : models) {
            modelCombo_->addItem(name);
        }
        directionCombo_->clear();
        directionCombo_->addItem(tr("All directions"));
        for (const QString& name : directions) {
            directionCombo_->addItem(name);
        }
        modelCombo_->setCurrentIndex(std::max(0, modelCombo_->findText(model)));
        directionCombo_->setCurrentIndex(std::max(0, directionCombo_->findText(direction)));
    }
    redraw();
}

void ChartsView::redraw() {
    std::vector<analysis::Comparison> scoped;
    analysis::AnalysisSettings settings;
    if (data_) {
        settings = data_->settings();
        const std::string model = scopeModel().toStdString();
        const std::string direction = scopeDirection().toStdString();
        for (const analysis::Comparison& comparison : data_->comparisons()) {
            if ((model.empty() || comparison.model == model) &&
                (direction.empty() || comparison.direction == direction)) {
                scoped.push_back(comparison);
            }
        }
    }
    for (Chart* chart : charts_) {
        if (auto* category = qobject_cast<KbxCategoryChart*>(chart)) {
            category->setAgreement(data_ ? data_->kbxAgreement() : std::vector<io::KbxBoundaryAgreement>{});
        }
        if (auto* events = qobject_cast<KbxEventsChart*>(chart)) {
            events->setTransitions(data_ ? data_->kbxTransitions() : std::vector<io::KbxTransition>{});
        }
        chart->setComparisons(scoped, settings);
    }
}

void ChartsView::setPaperPreset(const PaperPreset& preset) {
    preset_ = preset;
    updatePresetLabel();
}

void ChartsView::updatePresetLabel() {
    presetLabel_->setText(tr("%1: %2 × %3 mm, %4 pt, %5 DPI")
                              .arg(preset_.name)
                              .arg(preset_.widthMm(), 0, 'f', 0)
                              .arg(preset_.heightMm(), 0, 'f', 0)
                              .arg(preset_.fontPoints)
                              .arg(preset_.pngDpi));
}

Status ChartsView::exportCurrentChart(const QString& path) {
    return exportChart(*currentChart(), path, preset_);
}

void ChartsView::chooseAndExport() {
    QString selectedFilter;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export chart"), currentChart()->title() + QStringLiteral(".pdf"),
                                     tr("PDF (*.pdf);;SVG (*.svg);;PNG (*.png)"), &selectedFilter);
    if (path.isEmpty()) {
        return;
    }
    const Status status = exportCurrentChart(path);
    if (!status) {
        QMessageBox::warning(this, tr("Export chart"), QString::fromStdString(status.error().message));
        return;
    }
    QSettings settings;
    saveLastPaperPreset(settings, preset_);
    statusLabel_->setText(tr("Exported %1").arg(path));
}

void ChartsView::copyToClipboard() {
    const Status status = copyChartToClipboard(*currentChart(), preset_);
    statusLabel_->setText(status ? tr("Copied %1 to the clipboard").arg(currentChart()->title())
                                 : QString::fromStdString(status.error().message));
}

void ChartsView::editPaperPreset() {
    QSettings settings;
    if (PaperPresetDialog::edit(this, settings, preset_)) {
        updatePresetLabel();
    }
}

} // namespace mkb::gui
