// Six charts of the Charts page, each drawing the series of gui/charts/chart_data.h (the direction matrix, the
// seventh, has a file of its own).
#pragma once

#include "gui/charts/chart.h"

namespace mkb::gui {

/// Per family: S lift (skill − base) with its 95% CI as an error bar; bars above zero in the helped colour, below in
/// the harmed colour, and in the neutral colour where the interval contains 0 (within noise).
class FamilyLiftChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("S lift by family"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

/// Per family: regression rate H (share of resolved comparisons the skill harmed).
class FamilyHarmChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("Regression rate by family"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

/// Paired ratio r of every resolved comparison, one column per problem (sorted by geometric mean), log y axis,
/// points coloured by outcome.
class PairedRatioChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("Paired ratio by problem"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

/// Per model and source standing: stacked shares helped / neutral / harmed.
class StandingOutcomesChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("Outcomes by source standing"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

/// R@t of base and skill side by side for each threshold.
class LadderChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("R@t ladder: base vs skill"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

/// Source speedup against the skill-conditioned target speedup, log-log, with the diagonal.
class SpeedupScatterChart : public Chart {
    Q_OBJECT
public:
    using Chart::Chart;
    QString title() const override { return tr("Source vs target speedup"); }

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;
};

} // namespace mkb::gui
