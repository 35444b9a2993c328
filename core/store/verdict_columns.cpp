// The verdict column table (names, loads, binders, readers) and the SQL lists built from it.
#include "core/store/verdict_columns.h"

#include "core/store/migrations.h"
#include "core/vocabulary/boundary.h"

namespace mkb::store_detail {
namespace {

// VerdictColumn::views bits; VerdictView::Full reads every column.
constexpr unsigned kLean = 1;          // every column but the grader's JSON
constexpr unsigned kMetrics = 2;       // read by every TrialDetail::Metrics load
constexpr unsigned kMetricsDetail = 4; // read by a Metrics load with MetricColumns::verdictDetail
constexpr unsigned kDetail = kLean | kMetricsDetail;
constexpr unsigned kEveryMetric = kLean | kMetrics;

} // namespace

const std::vector<VerdictColumn>& verdictColumnTable() {
    using S = Statement;
    using V = Verdict;
    static const std::vector<VerdictColumn> table = {
        {"imported", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.imported); },
         [](const S& r, int i, V& v) { v.imported = r.boolean(i); }},
        {"correct", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.correct); },
         [](const S& r, int i, V& v) { v.correct = r.boolean(i); }},
        {"passed", kEveryMetric, [](S& s, int i, const V& v) { s.bind(i, v.passed); },
         [](const S& r, int i, V& v) { v.passed = r.boolean(i); }},
        {"speedup", kEveryMetric, [](S& s, int i, const V& v) { s.bind(i, v.speedupVsEager); },
         [](const S& r, int i, V& v) { v.speedupVsEager = r.real(i); }},
        {"stage", kLean, [](S& s, int i, const V& v) { s.bind(i, v.stage); },
         [](const S& r, int i, V& v) { v.stage = r.text(i); }},
        {"infrastructure_error", kLean, [](S& s, int i, const V& v) { s.bind(i, v.infrastructureError); },
         [](const S& r, int i, V& v) { v.infrastructureError = r.boolean(i); }},
        {"timed_out", kLean, [](S& s, int i, const V& v) { s.bind(i, v.timedOut); },
         [](const S& r, int i, V& v) { v.timedOut = r.boolean(i); }},
        {"error", kLean, [](S& s, int i, const V& v) { s.bind(i, v.error); },
         [](const S& r, int i, V& v) { v.error = r.text(i); }},
        {"correct_draws", kLean, [](S& s, int i, const V& v) { s.bind(i, v.correctDraws); },
         [](const S& r, int i, V& v) { v.correctDraws = r.integer(i); }},
        {"total_draws", kLean, [](S& s, int i, const V& v) { s.bind(i, v.totalDraws); },
         [](const S& r, int i, V& v) { v.totalDraws = r.integer(i); }},
        {"mismatch", kLean, [](S& s, int i, const V& v) { s.bind(i, v.mismatch); },
         [](const S& r, int i, V& v) { v.mismatch = r.text(i); }},
        {"compliant", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.compliant); },
         [](const S& r, int i, V& v) { v.compliant = r.boolean(i); }},
        {"compliance_rule", kLean, [](S& s, int i, const V& v) { s.bind(i, v.complianceRule); },
         [](const S& r, int i, V& v) { v.complianceRule = r.text(i); }},
        // Every metric load reads it: comparisons never pair attempts graded under different boundaries.
        {"boundary", kEveryMetric, [](S& s, int i, const V& v) { s.bind(i, boundaryOrLegacy(v.boundary)); },
         [](const S& r, int i, V& v) { v.boundary = boundaryOrLegacy(r.view(i)); }},
        {"kernel_median_ms", kLean, [](S& s, int i, const V& v) { s.bind(i, v.kernelMedianMs); },
         [](const S& r, int i, V& v) { v.kernelMedianMs = r.optionalReal(i); }},
        {"eager_median_ms", kLean, [](S& s, int i, const V& v) { s.bind(i, v.eagerMedianMs); },
         [](const S& r, int i, V& v) { v.eagerMedianMs = r.optionalReal(i); }},
        {"kernel_iqr_ms", kLean, [](S& s, int i, const V& v) { s.bind(i, v.kernelIqrMs); },
         [](const S& r, int i, V& v) { v.kernelIqrMs = r.optionalReal(i); }},
        {"throttled", kLean, [](S& s, int i, const V& v) { s.bind(i, v.throttled); },
         [](const S& r, int i, V& v) { v.throttled = r.boolean(i); }},
        {"outliers_correct", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.outliersCorrect); },
         [](const S& r, int i, V& v) { v.outliersCorrect = r.optionalBool(i); }},
        // The quant group is present when its cosine is not NULL.
        {"quant_cosine", kDetail,
         [](S& s, int i, const V& v) { s.bind(i, v.quant ? std::optional<double>(v.quant->cosine) : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (!r.isNull(i)) {
                 v.quant = QuantMetrics{r.real(i), 0.0, 0.0, false};
             }
         }},
        {"quant_relative_l1", kLean,
         [](S& s, int i, const V& v) {
             s.bind(i, v.quant ? std::optional<double>(v.quant->relativeL1) : std::nullopt);
         },
         [](const S& r, int i, V& v) {
             if (v.quant) {
                 v.quant->relativeL1 = r.real(i);
             }
         }},
        {"quant_rmse", kLean,
         [](S& s, int i, const V& v) { s.bind(i, v.quant ? std::optional<double>(v.quant->rmse) : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.quant) {
                 v.quant->rmse = r.real(i);
             }
         }},
        {"quant_passed", kDetail,
         [](S& s, int i, const V& v) { s.bind(i, v.quant ? std::optional<bool>(v.quant->passed) : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.quant) {
                 v.quant->passed = r.boolean(i);
             }
         }},
        // The roofline group is present when its bytes are not NULL.
        {"roofline_bytes", kDetail,
         [](S& s, int i, const V& v) {
             s.bind(i, v.roofline ? std::optional<double>(v.roofline->bytes) : std::nullopt);
         },
         [](const S& r, int i, V& v) {
             if (!r.isNull(i)) {
                 v.roofline = Roofline{};
                 v.roofline->bytes = r.real(i);
             }
         }},
        {"roofline_flops", kDetail,
         [](S& s, int i, const V& v) {
             s.bind(i, v.roofline ? std::optional<double>(v.roofline->flops) : std::nullopt);
         },
         [](const S& r, int i, V& v) {
             if (v.roofline) {
                 v.roofline->flops = r.real(i);
             }
         }},
        {"roofline_gbps", kLean,
         [](S& s, int i, const V& v) { s.bind(i, v.roofline ? v.roofline->achievedGBps : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.roofline) {
                 v.roofline->achievedGBps = r.optionalReal(i);
             }
         }},
        {"roofline_tflops", kLean,
         [](S& s, int i, const V& v) { s.bind(i, v.roofline ? v.roofline->achievedTflops : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.roofline) {
                 v.roofline->achievedTflops = r.optionalReal(i);
             }
         }},
        {"roofline_iou", kDetail,
         [](S& s, int i, const V& v) { s.bind(i, v.roofline ? v.roofline->iou : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.roofline) {
                 v.roofline->iou = r.optionalReal(i);
             }
         }},
        {"roofline_mfu", kDetail,
         [](S& s, int i, const V& v) { s.bind(i, v.roofline ? v.roofline->mfu : std::nullopt); },
         [](const S& r, int i, V& v) {
             if (v.roofline) {
                 v.roofline->mfu = r.optionalReal(i);
             }
         }},
        {"eval_seconds", kLean, [](S& s, int i, const V& v) { s.bind(i, v.evalSeconds); },
         [](const S& r, int i, V& v) { v.evalSeconds = r.real(i); }},
        {"device_name", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.deviceName); },
         [](const S& r, int i, V& v) { v.deviceName = r.text(i); }},
        // Not a metrics column: no metric reads it, and a metrics load reads a text column per verdict for nothing.
        {"device", kLean, [](S& s, int i, const V& v) { s.bind(i, v.device); },
         [](const S& r, int i, V& v) { v.device = r.text(i); }},
        {"speedup_ci_low", kEveryMetric, [](S& s, int i, const V& v) { s.bind(i, v.speedupCiLow); },
         [](const S& r, int i, V& v) { v.speedupCiLow = r.optionalReal(i); }},
        {"speedup_ci_high", kEveryMetric, [](S& s, int i, const V& v) { s.bind(i, v.speedupCiHigh); },
         [](const S& r, int i, V& v) { v.speedupCiHigh = r.optionalReal(i); }},
        {"gpu_median_ms", kDetail, [](S& s, int i, const V& v) { s.bind(i, v.gpuMedianMs); },
         [](const S& r, int i, V& v) { v.gpuMedianMs = r.optionalReal(i); }},
        {"verdict_json", 0, [](S& s, int i, const V& v) { s.bind(i, v.json); },
         [](const S& r, int i, V& v) { v.json = r.text(i); }},
    };
    return table;
}

int verdictColumnCount() {
    return static_cast<int>(verdictColumnTable().size());
}

const std::vector<const VerdictColumn*>& verdictColumnsOf(VerdictView view) {
    const auto select = [](unsigned bits) {
        std::vector<const VerdictColumn*> columns;
        for (const VerdictColumn& column : verdictColumnTable()) {
            if (bits == 0 || (column.views & bits) != 0) {
                columns.push_back(&column);
            }
        }
        return columns;
    };
    static const std::vector<const VerdictColumn*> full = select(0);
    static const std::vector<const VerdictColumn*> lean = select(kLean);
    static const std::vector<const VerdictColumn*> metrics = select(kMetrics);
    static const std::vector<const VerdictColumn*> metricsDetail = select(kMetrics | kMetricsDetail);
    switch (view) {
    case VerdictView::Full:
        return full;
    case VerdictView::Lean:
        return lean;
    case VerdictView::Metrics:
        return metrics;
    case VerdictView::MetricsDetail:
        break;
    }
    return metricsDetail;
}

std::string verdictColumnList(VerdictView view, const std::string& prefix) {
    std::string text;
    for (const VerdictColumn* column : verdictColumnsOf(view)) {
        text += (text.empty() ? "" : ", ") + prefix + column->name;
    }
    return text;
}

std::string verdictPlaceholders() {
    std::string text;
    for (int i = 0; i < verdictColumnCount(); ++i) {
        text += i == 0 ? "?" : ", ?";
    }
    return text;
}

void bindVerdict(Statement& statement, int first, const Verdict& verdict) {
    int parameter = first;
    for (const VerdictColumn& column : verdictColumnTable()) {
        column.bind(statement, parameter++, verdict);
    }
}

Verdict readVerdict(const Statement& row, int first, VerdictView view) {
    Verdict verdict;
    readVerdictInto(row, first, view, verdict);
    return verdict;
}

void readVerdictInto(const Statement& row, int first, VerdictView view, Verdict& verdict) {
    int column = first;
    for (const VerdictColumn* read : verdictColumnsOf(view)) {
        read->read(row, column++, verdict);
    }
}

} // namespace mkb::store_detail

namespace mkb::store {

const std::vector<std::string>& verdictColumns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> list;
        for (const store_detail::VerdictColumn& column : store_detail::verdictColumnTable()) {
            list.emplace_back(column.name);
        }
        return list;
    }();
    return names;
}

} // namespace mkb::store
