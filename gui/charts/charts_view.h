// The Charts page: the nine charts over the project's comparisons, scoped by model and direction, with paper export,
// clipboard copy and click-to-filter.
#pragma once

#include "core/util/result.h"
#include "gui/charts/chart_export.h"
#include "gui/charts/direction_matrix_chart.h"

#include <QString>
#include <QWidget>
#include <vector>

class QComboBox;
class QLabel;
class QListWidget;
class QStackedWidget;

namespace mkb::gui {

class Chart;
class ProjectData;

class ChartsView : public QWidget {
    Q_OBJECT
public:
    explicit ChartsView(ProjectData* data, QWidget* parent = nullptr);

    /// Family lift, family regression, paired ratio, standing outcomes, ladder, speedup scatter, direction matrix, then
    /// KernelBench-X's pass rate and speedup by category (ProjectData::kbxAgreement; empty without regradings); in list
    /// order.
    const std::vector<Chart*>& charts() const { return charts_; }
    Chart* currentChart() const;
    void setCurrentChart(int index);

    /// The direction matrix's measure (its Measure choice, shown while the matrix is the current chart).
    void setDirectionMatrixMeasure(DirectionMatrixChart::Measure measure);
    DirectionMatrixChart* directionMatrix() const { return directionMatrix_; }

    /// Limits every chart to one model / direction; an empty string shows all.
    void setScope(const QString& model, const QString& direction);

    const PaperPreset& paperPreset() const { return preset_; }
    void setPaperPreset(const PaperPreset& preset);
    /// Exports the current chart with the paper preset; the format follows the suffix.
    Status exportCurrentChart(const QString& path);

signals:
    /// A click on a bar or point: the comparisons browser should show these (empty = any). The view's scope fills
    /// what the mark leaves open.
    void filterRequested(const QString& model, const QString& direction, const QString& family, const QString& problem);

protected:
    void showEvent(QShowEvent* event) override;

private:
    /// Refills now, or when next shown if this is a hidden page of a shown window (a load does not wait for it).
    void refillWhenShown();
    void refill();
    void redraw();
    void chooseAndExport();
    void copyToClipboard();
    void editPaperPreset();
    void updatePresetLabel();
    void updateMeasureChoice();
    QString scopeModel() const;
    QString scopeDirection() const;

    ProjectData* data_ = nullptr;
    std::vector<Chart*> charts_;
    QListWidget* list_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    QComboBox* modelCombo_ = nullptr;
    QComboBox* directionCombo_ = nullptr;
    DirectionMatrixChart* directionMatrix_ = nullptr;
    QComboBox* measureCombo_ = nullptr;
    QLabel* measureLabel_ = nullptr;
    QLabel* presetLabel_ = nullptr;
    QLabel* statusLabel_ = nullptr;
    PaperPreset preset_;
    bool stale_ = false; // data arrived while hidden
};

} // namespace mkb::gui
