// The table of views: one row per view, read by the switcher, the View menu and the saved layout.
#include "gui/shell/views.h"

#include <QCoreApplication>

namespace mkb::gui {
namespace {

const ViewDescription kViews[kViewCount] = {
    {":/mkb/icons/view-overview.svg", QT_TRANSLATE_NOOP("MainWindow", "Overview"),
     QT_TRANSLATE_NOOP("MainWindow", "The model × direction table of transfer rate, ΔGM, harm, skill gain and lift, "
                                     "with pass rate and coverage, and per-family lift and regression charts."),
     "overviewLayout", "overviewHeader"},
    {":/mkb/icons/view-transfers.svg", QT_TRANSLATE_NOOP("MainWindow", "Transfers"),
     QT_TRANSLATE_NOOP("MainWindow", "The transfer inspector: the source skill beside the attempt's own skill, the "
                                     "base and skill-conditioned kernels as a side-by-side diff, verdicts, timings and "
                                     "every grader report."),
     "inspectorLayout", ""},
    {":/mkb/icons/view-comparisons.svg", QT_TRANSLATE_NOOP("MainWindow", "Comparisons"),
     QT_TRANSLATE_NOOP("MainWindow",
                       "Every comparison as a row (model, direction, problem, replicate, verdicts, tiers, "
                       "speedups, paired ratio, outcome), filterable and sortable."),
     "", "comparisonsHeader"},
    {":/mkb/icons/view-charts.svg", QT_TRANSLATE_NOOP("MainWindow", "Charts"),
     QT_TRANSLATE_NOOP("MainWindow", "Per-family lift and regression bars, paired ratio by problem, outcomes by source "
                                     "standing, the R@t ladder and source-vs-target speedups, exportable for papers."),
     "chartsLayout", ""},
    {":/mkb/icons/view-runs.svg", QT_TRANSLATE_NOOP("MainWindow", "Runs"),
     QT_TRANSLATE_NOOP("MainWindow", "Runs of this project with live progress, their trials and log; launching, "
                                     "cancelling and resuming runs from here."),
     "runsLayout", ""},
    {":/mkb/icons/view-problems.svg", QT_TRANSLATE_NOOP("MainWindow", "Problems"),
     QT_TRANSLATE_NOOP("MainWindow", "The problems with their reference source, family, tags, solution status and "
                                     "the project's last grading results."),
     "problemsLayout", ""},
};

} // namespace

const ViewDescription& describe(View view) {
    return kViews[int(view)];
}

QString viewTitle(View view) {
    return QCoreApplication::translate("MainWindow", describe(view).title);
}

QString viewPurpose(View view) {
    return QCoreApplication::translate("MainWindow", describe(view).purpose);
}

} // namespace mkb::gui
