// Figures without a window: the chart kinds by stable id, the paper preset from command-line words, a store read
// synchronously into comparisons, and one chart drawn and exported with the same Chart classes as the charts view.
#pragma once

#include "core/analysis/comparison.h"
#include "core/io/kbx_regraded_rounds.h"
#include "core/io/kbx_transitions.h"
#include "core/records/trial.h"
#include "core/util/result.h"
#include "gui/charts/chart.h"
#include "gui/charts/chart_export.h"

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

namespace mkb::gui::paper {

/// The stable ids of the charts view's charts, in its list order: family-lift, family-harm, paired-ratio,
/// standing-outcomes, ladder, speedup-scatter, then the direction matrix in each of its measures (the view's one
/// entry with its measure choice): direction-matrix (S lift), direction-matrix-helped, direction-matrix-harmed; then
/// KernelBench-X's categories under both graders: kbx-category-pass-rate, kbx-category-speedup; its performance
/// events against paired timing: kbx-events.
QStringList chartKindIds();
/// The chart of that id (as the charts view builds it), nullptr for an unknown id.
std::unique_ptr<Chart> makeChart(const QString& kind);

/// A preset from the command line's words: a built-in preset by name ("Single column", "single-column", …) or a
/// size "WxHmm" / "WxHin"; font "FAMILY[:PT]" and dpi override the preset's when not empty / not 0.
Result<PaperPreset> presetFromWords(const QString& presetName, const QString& size, const QString& font, int dpi);

/// What a figure reads from a store: its comparisons and trials, and the newest trial's end (the files' date).
struct ProjectSnapshot {
    QString storePath;
    std::vector<analysis::Comparison> comparisons;
    std::vector<TrialRecord> trials;                    // live trials, full detail (fingerprints, devices)
    QDateTime newestFinishedAt;                         // UTC; the epoch when the store holds no finished trial
    std::vector<io::KbxBoundaryAgreement> kbxAgreement; // the category charts' numbers (none without regradings)
    std::vector<io::KbxTransition> kbxTransitions;      // the events chart's (none without an imported corpus)
};
/// Opens the store read-only and loads it in this thread (no window, no event loop).
Result<ProjectSnapshot> loadProjectSnapshot(const QString& storePath);

/// One figure: which chart, its filters (empty fields keep everything), preset, format and file.
struct FigureRequest {
    QString kind;
    QString model;
    QString direction;
    QString family;
    PaperPreset preset;
    QString format; // pdf, svg or png
    QString output;
};
/// The comparisons a request's filters keep.
std::vector<analysis::Comparison> filteredComparisons(const ProjectSnapshot& project, const FigureRequest& request);
/// Draws the chart over the filtered comparisons and exports it (exportChartPdf/Svg/Png); PDF and SVG carry
/// project.newestFinishedAt as their date, so an unchanged store makes byte-identical files.
Status renderFigure(const ProjectSnapshot& project, const FigureRequest& request);

/// Rewrites the dates and document id Qt's PDF writer takes from the clock and a random UUID (/CreationDate, the
/// XMP dates, /ID and the XMP ids) to ones made from stamp, in place and keeping every byte offset.
Status stampPdf(const QString& path, const QDateTime& stamp);

} // namespace mkb::gui::paper
