// KernelBench-X's categories under both graders: pass rate (theirs beside ours per boundary) or our speedup over
// theirs, per category, each bar with its 95% interval, from analysis::kbxAgreement (io::loadKbxAgreement).
#pragma once

#include "core/io/kbx_regraded_rounds.h"
#include "gui/charts/chart.h"

#include <optional>
#include <string>
#include <vector>

namespace mkb::gui {

/// One bar: a category's value in one series, as kbxAgreement computed it.
struct KbxCategoryBar {
    std::string category;        // "all" first, then each category by name
    std::string series;          // "theirs", "ours (mkb)", "ours (strict)", …
    std::optional<double> value; // pass rate in percent, or the geometric mean of our speedup over theirs
    std::optional<analysis::Interval> interval; // its 95% bootstrap interval (percent for the pass rate)
    std::size_t n = 0;                          // rounds (pass rate) or rounds both call correct (speedup)
};

class KbxCategoryChart : public Chart {
    Q_OBJECT
public:
    enum class Measure { PassRate, Speedup };

    explicit KbxCategoryChart(Measure measure = Measure::PassRate, QWidget* parent = nullptr);
    QString title() const override;
    Measure measure() const { return measure_; }

    /// The numbers drawn: per category (in the first boundary's order), theirs (from the first boundary's rounds)
    /// then ours per boundary for the pass rate; ours/theirs per boundary for the speedup. No second computation:
    /// every value is an AgreementGroup field.
    static std::vector<KbxCategoryBar> bars(const std::vector<io::KbxBoundaryAgreement>& agreement, Measure measure);

    /// The agreement the next draws use (ProjectData::kbxAgreement, or the headless export's).
    void setAgreement(std::vector<io::KbxBoundaryAgreement> agreement);

protected:
    void draw(const std::vector<analysis::Comparison>& comparisons,
              const analysis::AnalysisSettings& settings) override;

private:
    Measure measure_;
    std::vector<io::KbxBoundaryAgreement> agreement_;
};

} // namespace mkb::gui
