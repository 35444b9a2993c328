// The direction matrix as a heat map: source DSLs down, target DSLs across, one cell per ordered pair coloured by the
// chosen measure (S lift, helped share T or harmed share H) from analysis::directionMatrix.
#pragma once

#include "core/analysis/direction_matrix.h"
#include "gui/charts/chart.h"

#include <QString>
#include <optional>

class QCPColorScale;

namespace mkb::gui {

/// Lift colours a cell from the harmed colour (below 0) through white to the helped colour (above 0), and draws a
/// cell whose lift interval contains 0 in the neutral colour, as the lift-by-family chart draws such a bar; helped
/// and harmed run from white to their outcome's colour over 0–100%. The diagonal shows "—", a pair without data is
/// hatched. Each cell's tooltip holds the report's cell text (report::directionCellText) and more; a click asks for
/// that direction's comparisons.
class DirectionMatrixChart : public Chart {
    Q_OBJECT
public:
    enum class Measure { Lift, Helped, Harmed };

    explicit DirectionMatrixChart(Measure measure = Measure::Lift, QWidget* parent = nullptr);
    QString title() const override;

    Measure measure() const { return measure_; }
    /// Redraws the last matrix in another measure (it holds every measure: nothing is computed again).
    void setMeasure(Measure measure);
    /// Draws a matrix computed elsewhere (the overview's, computed with the data off the GUI thread). intervalsPending:
    /// its lift intervals are still being computed, so a cell says so instead of "no CI", and none is drawn within
    /// noise yet (the overview sets the matrix again when they arrive).
    void setMatrix(const analysis::DirectionMatrix& matrix, bool intervalsPending = false);
    /// The matrix drawn last: its cells are the heat map's, row-major.
    const analysis::DirectionMatrix& matrix() const { return matrix_; }
    /// Whether the matrix drawn last had its lift intervals still pending (setMatrix).
    bool intervalsPending() const { return intervalsPending_; }
    /// The colour scale beside the map (its range is the measure's).
    QCPColorScale* colorScale() const { return scale_; }

    /// "lift", "helped", "harmed": the measure's name in chart kind ids and settings.
    static QString measureId(Measure measure);

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;

private:
    void drawMatrix();

    Measure measure_;
    analysis::DirectionMatrix matrix_;
    std::optional<analysis::DirectionMatrix> given_; // set by setMatrix for the draw it starts
    bool givenPending_ = false;                      // setMatrix's intervalsPending, for that draw
    bool intervalsPending_ = false;
    QCPColorScale* scale_ = nullptr;
};

} // namespace mkb::gui
