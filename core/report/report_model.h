// The report model: selects trials from a store, runs the metrics of core/analysis/ per group, and lays the numbers
// out as titled tables of typed cells that the writers (report_writers.h) render.
#pragma once

#include "core/analysis/calibration.h"
#include "core/analysis/settings.h"
#include "core/records/calibration.h"
#include "core/records/trial.h"
#include "core/store/store.h"
#include "core/util/result.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mkb::report {

enum class CellKind {
    Text,
    Number,  // a value shown with a fixed number of decimals
    Percent, // a share in [0, 1] (or a difference of shares) shown as a percentage
    Null,    // no value: "—" in Markdown and LaTeX, empty in CSV, null in JSON
};

struct ReportCell {
    CellKind kind = CellKind::Null;
    std::string text;  // Text cells
    double number = 0; // Number and Percent cells
    int precision = 0; // decimals shown (of the percentage for Percent cells)
};

ReportCell textCell(std::string text);
ReportCell countCell(std::size_t count);
ReportCell numberCell(std::optional<double> value, int precision);
ReportCell percentCell(std::optional<double> share, int precision = 1);
ReportCell nullCell();

/// Which timing rule an outcome table used (DESIGN §8) and how many of its comparisons it could judge on paired data.
struct TableTiming {
    std::string rule;             // "paired" or "unpaired"
    std::size_t resolved = 0;     // resolved comparisons the table counts
    std::size_t withRetiming = 0; // of them, with a live paired re-timing attached
    std::size_t paired = 0;       // judged by the paired ratio
    std::size_t fellBack = 0;     // both passed, no re-timing: judged by the unpaired rule
    std::size_t withinNoise = 0;  // paired neutrals whose CI contains 1
};

/// The line under a ladder table that says which rule ranked it: paired, with how many cells were ranked on a
/// re-timing, how many fell back, and the ties per threshold; or unpaired, MetaKernelBench's ladder.
std::string ladderRuleLine(analysis::TimingRule rule, std::size_t resolved, std::size_t pairedCells,
                           std::size_t fellBack, const std::vector<std::size_t>& ties,
                           const std::vector<double>& thresholds);

/// The line under a ladder table that says what its intervals are (the overview shows the same line).
inline constexpr const char* kLadderIntervalLine =
    "Intervals: 95% percentile bootstrap over the group's cells (1000 resamples, seeded from the data, so the same "
    "data always give the same bounds); none for a single cell. A lift whose interval contains 0 is within noise.";

/// The line under an outcome table that says which rule it used and on how much paired data (the GUI overview shows
/// the same line).
std::string timingLine(const TableTiming& timing);

struct ReportTable {
    std::string id;    // short machine name, e.g. "ladder"; LaTeX labels it tab:mkb-<id>
    std::string title; // one line, e.g. "Speedup ladder by direction"
    std::vector<std::string> columns;
    std::vector<std::vector<ReportCell>> rows; // each row has columns.size() cells
    std::vector<std::string> footnotes;        // lines printed under the table (the timing rule, borderline counts)
    std::optional<TableTiming> timing;         // outcome tables: the rule they used
};

struct Report {
    std::string title;
    std::vector<std::string> notes; // one line each: selection, settings, what was left out
    std::vector<ReportTable> tables;
};

/// How comparisons and attempts are grouped into rows.
enum class ReportSplit { Overall, Direction, Family, WithSkill, SourceVerdict, Model, Category, Boundary };

/// The metric sets a report may hold; `all` is every one of them but Directions, which came later and is left out
/// so that a report asked for with `all` stays as it was (`--metrics all,directions` adds it).
enum class MetricSet {
    Ladder,
    Coverage,
    Transfer,
    Standing,
    Reverse,
    Usage,
    KernelBenchX,
    Refinement,
    Portability,
    Directions,
    KbxPaper,      // KernelBench-X's paper findings from the data, with n and intervals (report_kbx_paper.h)
    KbxAgreement,  // store-level: mkb regrade's verdicts against the rounds' own (core/report/report_kbx_agreement.h)
    KbxEvents,     // store-level: KernelBench-X's performance events against paired re-timing (report_kbx_events.h)
    KbxPortability // golden eager timings across GPUs, read from ReportOptions::golden (report_kbx_portability.h)
};

const char* toString(ReportSplit split);
const char* toString(MetricSet set);
Result<ReportSplit> parseReportSplit(const std::string& text);
/// "paired" or "unpaired" (--timing).
Result<analysis::TimingRule> parseTimingRule(const std::string& text);
/// Comma-separated names (ladder, transfer, usage, kbx, standing, reverse, refinement, portability, coverage,
/// directions, all).
Result<std::vector<MetricSet>> parseMetricSets(const std::string& text);
/// "0,0.5,1,2,4" -> thresholds; each must be a finite number >= 0, ascending, no duplicates.
Result<std::vector<double>> parseThresholds(const std::string& text);

struct ReportOptions {
    ReportSplit split = ReportSplit::Overall;
    std::vector<MetricSet> metrics{MetricSet::Ladder, MetricSet::Coverage, MetricSet::Transfer};
    std::optional<std::string> model;     // only this model
    std::optional<std::string> direction; // only comparisons a2b and the attempts of arms solo_a, solo_b, a2b_skill
    std::optional<std::string> family;    // only this problem family
    std::optional<std::string> problems;  // shell glob over "NN_slug" (also matched against the slug alone)
    std::optional<std::string> boundary;  // only trials graded under this implementation boundary (mkb, strict, legacy)
    std::optional<std::string> golden;    // kbx-portability: the golden timings' folder (one sub-folder per GPU)
    analysis::AnalysisSettings settings;
};

/// True when the options need submissions (refinement trajectories); otherwise trials alone suffice.
bool needsSubmissions(const ReportOptions& options);
/// The trial and verdict columns the requested metric sets read (buildReportFromStore loads only those).
MetricColumns metricColumns(const ReportOptions& options);

/// The trials the filters keep (model, family, problems; the direction filter applies to arms). Archived trials stay
/// out of every metric anyway.
std::vector<TrialRecord> selectTrials(std::vector<TrialRecord> trials, const ReportOptions& options);

/// Builds the report from trials (and their submissions when needsSubmissions). Pure: no store access.
Report buildReport(const std::vector<TrialRecord>& trials, const std::vector<SubmissionRecord>& submissions,
                   const ReportOptions& options);

/// Loads the trials once (and the submissions only when needed) and builds the report.
Result<Report> buildReportFromStore(Store& store, const ReportOptions& options);

/// The live calibration chosen for one device that graded the data (DESIGN §5.5).
struct DeviceCalibration {
    std::string device;                      // as the re-timings (or, without re-timings, the calibration) name it
    std::optional<CalibrationRecord> chosen; // unset: no calibration of this device
    bool stale = false;                      // made with a grader none of the data's re-timings used
};

/// Which calibration applies to the data: one entry per device of the live re-timings (without re-timings, per
/// calibrated device), in the order they first appear; the newest calibration of a device wins, preferring one made
/// with a grader the data was re-timed with.
struct CalibrationSummary {
    bool anyCalibration = false; // the store holds at least one live calibration
    std::vector<DeviceCalibration> devices;
};

/// The unpaired A/A controls a calibration recorded per problem (its detail rows' "unpaired": [s1, s2], a speedup of
/// 0 being a grading that did not pass); none when its detail holds none or cannot be read.
std::vector<analysis::UnpairedControl> unpairedAaControls(const CalibrationRecord& calibration);

/// Matches the store's live calibrations to the devices and grader fingerprints of its live re-timings.
Result<CalibrationSummary> calibrationSummary(const Store& store);

} // namespace mkb::report
