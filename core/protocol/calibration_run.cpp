// The calibration run: writes each solution's three kernels to a private folder, asks the grader for the paired
// re-timing and the three unpaired gradings, and turns the controls into the record's rates.
#include "core/protocol/calibration_run.h"

#include "core/analysis/calibration.h"
#include "core/analysis/calibration_ladder.h"
#include "core/catalog/catalog.h"
#include "core/util/text.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace mkb {
namespace {

namespace fs = std::filesystem;

/// The run's private folder (mode 0700, from mkdtemp), removed with everything in it at the end of the run.
class CalibrationFolder {
public:
    explicit CalibrationFolder(fs::path path) : path_(std::move(path)) {}
    CalibrationFolder(const CalibrationFolder&) = delete;
    CalibrationFolder& operator=(const CalibrationFolder&) = delete;
    ~CalibrationFolder() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

Result<fs::path> makePrivateFolder(const fs::path& root) {
    std::error_code ec;
    const fs::path base = root.empty() ? fs::temp_directory_path(ec) : root;
    if (ec) {
        return makeError("calibrate: no temporary folder (" + ec.message() + "); set TMPDIR");
    }
    std::string pattern = (base / "mkb-calibrate-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        return makeError("calibrate: cannot create a private folder under " + base.string() +
                         "; check that it exists and is writable, or set TMPDIR");
    }
    return fs::path(pattern);
}

bool writeKernel(const std::string& text, const fs::path& to) {
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    return static_cast<bool>(out);
}

template <typename... Numbers>
std::string formatted(const char* format, Numbers... numbers) {
    char text[128];
    std::snprintf(text, sizeof text, format, numbers...);
    return text;
}

/// The controls gathered so far, and the run's bookkeeping.
class ControlSet {
public:
    ControlSet(const CalibrationJob& job, GraderProcess& grader) : job_(job), grader_(grader) {}

    /// The paired controls of one replicate: one re-timing of a, its copy and its slowed copy.
    std::string paired(const Problem& problem, const std::string& dsl, const fs::path& folder, nlohmann::json& row,
                       std::atomic<bool>* cancel) {
        const std::string& descriptor = job_.dslDescriptors.at(dsl);
        RetimeRequest request = makeRetimeRequest(problem, job_.device, job_.grade, job_.retime);
        request.kernels = {{"a", folder / "a" / "kernel.py", dsl, descriptor, 0},
                           {"a_copy", folder / "a_copy" / "kernel.py", dsl, descriptor, 0},
                           {"a_slow", folder / "a_slow" / "kernel.py", dsl, descriptor, job_.slowdown}};
        Result<RetimingResult> retimed = grader_.retime(request, {}, cancel);
        if (!retimed || !retimed->ok) {
            ++infrastructure_;
            return "paired: " + (retimed ? retimed->error : retimed.error().message);
        }
        deviceName_ = retimed->deviceName;
        const std::optional<RetimedPair> aa = retimed->pair("a", "a_copy");
        const std::optional<RetimedPair> ab = retimed->pair("a", "a_slow");
        if (!aa || !ab) {
            ++infrastructure_;
            return "paired: the re-timing's reply lacks the pair a/a_copy or a/a_slow";
        }
        pairedAa_.push_back({aa->ratio, aa->ciLow, aa->ciHigh, aa->n});
        pairedAb_.push_back({ab->ratio, ab->ciLow, ab->ciHigh, ab->n});
        row["paired_aa"] = {aa->ratio, aa->ciLow, aa->ciHigh};
        row["paired_ab"] = {ab->ratio, ab->ciLow, ab->ciHigh};
        row["rounds"] = retimed->rounds;
        std::string text = formatted("paired A/A %.4f [%.4f, %.4f]", aa->ratio, aa->ciLow, aa->ciHigh) +
                           formatted(" A/B %.4f [%.4f, %.4f]", ab->ratio, ab->ciLow, ab->ciHigh);
        // The ladder's speedups: A and B over eager, which the re-timing timed in the same rounds (slowdownSessions).
        const std::optional<RetimedPair> a = retimed->pair("eager", "a");
        const std::optional<RetimedPair> b = retimed->pair("eager", "a_slow");
        if (a && b) {
            row[kDetailSpeedupA] = {a->ratio, a->ciLow, a->ciHigh};
            row[kDetailSpeedupB] = {b->ratio, b->ciLow, b->ciHigh};
            text += formatted(" speedups A %.3fx B %.3fx", a->ratio, b->ratio);
        } else {
            text += " (no speedups over eager in the reply: left out of the ladder)";
        }
        return text + " n=" + std::to_string(retimed->rounds);
    }

    /// The unpaired controls of one replicate: a graded twice, and its slowed copy graded once for real.
    std::string unpaired(const Problem& problem, const std::string& dsl, const fs::path& folder, nlohmann::json& row,
                         std::atomic<bool>* cancel) {
        const std::string& descriptor = job_.dslDescriptors.at(dsl);
        const GradeRequest plain = makeGradeRequest(problem, folder / "a" / "kernel.py", dsl, descriptor, job_.device,
                                                    job_.grade, job_.peaksJson);
        GradeRequest slowed = makeGradeRequest(problem, folder / "a_slow" / "kernel.py", dsl, descriptor, job_.device,
                                               job_.grade, job_.peaksJson);
        slowed.slowdown = job_.slowdown;
        const Verdict first = grader_.grade(plain, {}, cancel);
        const Verdict second = grader_.grade(plain, {}, cancel);
        Verdict slow = grader_.grade(slowed, {}, cancel);
        if (!slow.infrastructureError && std::fabs(slow.slowdown - job_.slowdown) > 1e-12) {
            // A grader that ignores the request's slowdown would time the copy unslowed: never a control.
            slow.infrastructureError = true;
            slow.error = "the grader did not slow the copy (its verdict records slowdown " +
                         formatted("%.3f", slow.slowdown) + "); update the grader";
        }
        std::string text;
        const analysis::Grading g1{first.passed, first.speedupVsEager};
        if (first.infrastructureError || second.infrastructureError) {
            ++infrastructure_;
            text = "unpaired A/A: " + (first.infrastructureError ? first.error : second.error);
        } else {
            unpairedAa_.push_back({g1, {second.passed, second.speedupVsEager}});
            text = formatted("unpaired %.3fx / %.3fx", first.speedupVsEager, second.speedupVsEager);
        }
        if (first.infrastructureError || slow.infrastructureError) {
            if (!first.infrastructureError) {
                ++infrastructure_;
            }
            text += ", A/B: " + (first.infrastructureError ? first.error : slow.error);
        } else {
            unpairedAb_.push_back({g1, {slow.passed, slow.speedupVsEager}});
            text +=
                formatted(", slowed %.3fx (+%.4f ms a call)", slow.speedupVsEager, slow.slowdownDelayMs.value_or(0));
            row["unpaired_slowed"] = slow.speedupVsEager;
            row["unpaired_slowed_delay_ms"] =
                slow.slowdownDelayMs ? nlohmann::json(*slow.slowdownDelayMs) : nlohmann::json(nullptr);
        }
        if (!first.infrastructureError && !second.infrastructureError) {
            row["unpaired"] = {first.speedupVsEager, second.speedupVsEager};
        }
        return text;
    }

    CalibrationRun finish(nlohmann::json detail) const {
        analysis::AnalysisSettings settings;
        settings.delta = job_.delta;
        CalibrationRun run;
        run.infrastructure = infrastructure_;
        CalibrationRecord& record = run.record;
        record.device = job_.device;
        record.deviceName = deviceName_;
        record.graderFingerprint = grader_.hello().graderFingerprint;
        record.selection = job_.selection;
        record.slowdown = job_.slowdown;
        record.methods = {analysis::calibratePaired(pairedAa_, pairedAb_, settings),
                          analysis::calibrateUnpaired(unpairedAa_, unpairedAb_, settings)};
        record.detailJson = detail.dump();
        return run;
    }

private:
    const CalibrationJob& job_;
    GraderProcess& grader_;
    std::vector<analysis::PairedTiming> pairedAa_;
    std::vector<analysis::PairedTiming> pairedAb_;
    std::vector<analysis::UnpairedControl> unpairedAa_;
    std::vector<analysis::UnpairedControl> unpairedAb_;
    std::string deviceName_;
    int infrastructure_ = 0;
};

} // namespace

bool CalibrationRun::anyControl() const {
    for (const CalibrationMethodResult& method : record.methods) {
        if (method.aaComparisons > 0 || method.abComparisons > 0) {
            return true;
        }
    }
    return false;
}

Result<CalibrationRun> runCalibration(const CalibrationJob& job, GraderProcess& grader,
                                      const std::function<void(const std::string&)>& progress,
                                      std::atomic<bool>* cancel) {
    for (const std::string& dsl : job.dsls) {
        if (!job.dslDescriptors.count(dsl)) {
            return makeError("calibrate: no descriptor for DSL '" + dsl + "' (give it with --dsl-dir)");
        }
    }
    Result<fs::path> made = makePrivateFolder(job.tempRoot);
    if (!made) {
        return made.error();
    }
    const CalibrationFolder temp(*made);
    ControlSet controls(job, grader);
    nlohmann::json detail = nlohmann::json::array();
    const auto interrupted = [cancel] { return cancel && cancel->load(); };
    for (const Problem& problem : job.problems) {
        for (const std::string& dsl : job.dsls) {
            char prefix[16];
            std::snprintf(prefix, sizeof prefix, "%02d_", problem.number);
            const fs::path solution = job.solutionsDir ? *job.solutionsDir / (prefix + problem.slug + "." + dsl + ".py")
                                                       : solutionPath(problem, dsl);
            Result<std::string> source = readFile(solution);
            if (!source) {
                progress(problem.name() + " " + dsl + "  no shipped solution (" + solution.string() + "), left out");
                continue;
            }
            const fs::path folder = temp.path() / (problem.code() + "_" + dsl);
            for (const char* copy : {"a", "a_copy", "a_slow"}) {
                if (!writeKernel(*source, folder / copy / "kernel.py")) {
                    return makeError("calibrate: cannot write " + (folder / copy / "kernel.py").string() +
                                     "; check the free space of the temporary folder, or set TMPDIR");
                }
            }
            for (int replicate = 1; replicate <= job.replicates; ++replicate) {
                if (interrupted()) {
                    CalibrationRun run = controls.finish(detail);
                    run.cancelled = true;
                    return run;
                }
                nlohmann::json row = {{"problem", problem.number}, {"dsl", dsl}, {"replicate", replicate}};
                const std::string pairedText = controls.paired(problem, dsl, folder, row, cancel);
                const std::string unpairedText = controls.unpaired(problem, dsl, folder, row, cancel);
                detail.push_back(row);
                progress(problem.name() + " " + dsl + " r" + std::to_string(replicate) + "  " + pairedText + "  " +
                         unpairedText);
            }
        }
    }
    CalibrationRun run = controls.finish(std::move(detail));
    run.cancelled = interrupted();
    return run;
}

std::vector<std::string> calibrationSummaryLines(const CalibrationRecord& record, double delta) {
    std::vector<std::string> lines;
    char text[512];
    std::snprintf(text, sizeof text,
                  "calibration of %s (%s), grader %s, delta %.3f, slowdown %.3f:", record.device.c_str(),
                  record.deviceName.empty() ? "name unknown" : record.deviceName.c_str(),
                  record.graderFingerprint.substr(0, 12).c_str(), delta, record.slowdown);
    lines.emplace_back(text);
    for (const CalibrationMethodResult& method : record.methods) {
        char smallest[32] = "none <= 0.5";
        if (method.smallestDelta) {
            std::snprintf(smallest, sizeof smallest, "%.3f", *method.smallestDelta);
        }
        std::snprintf(text, sizeof text,
                      "  %-8s  A/A false %d/%d (%.1f%%: %d helped, %d harmed)  A/B detected %d/%d (%.1f%%)  "
                      "smallest delta with false <= 1%%: %s",
                      method.method.c_str(), method.aaHelped + method.aaHarmed, method.aaComparisons,
                      100 * method.falseRate(), method.aaHelped, method.aaHarmed, method.abDetected,
                      method.abComparisons, 100 * method.detectionRate(), smallest);
        lines.emplace_back(text);
    }
    return lines;
}

} // namespace mkb
