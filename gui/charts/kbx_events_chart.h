// KernelBench-X's performance events against paired timing: each timed event's after/before ratio from our paired
// re-timing with its 95% CI beside the ratio KernelBench-X claimed from unpaired timings, coloured by how the claim
// stands (held, within noise, reversed), from io::loadKbxTransitions.
#pragma once

#include "core/analysis/kbx_events.h"
#include "core/io/kbx_transitions.h"
#include "gui/charts/chart.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb::gui {

/// One drawn event: a transition with a performance kind that our re-timing paired.
struct KbxEventPoint {
    std::string task;
    std::string kind;                 // its first performance kind: "speedup_increase", "regression_perf", …
    analysis::EventStanding standing; // analysis::kindStanding under that kind
    analysis::PairedRatio paired;     // ours: after/before with its 95% CI
    std::optional<double> claimed;    // theirs, unpaired
    std::string standingText;         // io::standingText, every kind
};

/// What the chart draws and says it left out.
struct KbxEventPoints {
    std::vector<KbxEventPoint> points; // ascending by paired ratio
    std::size_t performanceEvents = 0; // transitions with a performance kind, timed or not
};

class KbxEventsChart : public Chart {
    Q_OBJECT
public:
    explicit KbxEventsChart(QWidget* parent = nullptr);
    QString title() const override;

    /// The points drawn: every transition with a performance kind and a paired ratio, no second computation of
    /// standing (analysis::kindStanding, as kbx-events reports it).
    static KbxEventPoints points(const std::vector<io::KbxTransition>& transitions);

    /// The transitions the next draws use (ProjectData::kbxTransitions, or the headless export's).
    void setTransitions(std::vector<io::KbxTransition> transitions);

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;

private:
    std::vector<io::KbxTransition> transitions_;
};

} // namespace mkb::gui
