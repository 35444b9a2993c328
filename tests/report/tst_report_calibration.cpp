// The report's calibration table (DESIGN §5.5): the live calibration of the device that re-timed the data, with its
// A/A false rates, A/B detection and smallest safe δ per method, marked stale under another grader fingerprint, and
// absent from reports of stores without any calibration; its A/B ladder where the calibration stored its sessions.
#include "core/report/report_model.h"
#include "core/report/report_writers.h"
#include "report_fixtures.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace mkb::report;

namespace {

/// The live trial id of m1's problem 1 in arm.
std::int64_t trialId(mkb::Store& store, const std::string& arm) {
    auto trials = store.loadTrials({}, mkb::TrialDetail::Lean);
    if (!trials) {
        qFatal("trials: %s", trials.error().message.c_str());
    }
    for (const mkb::TrialRecord& trial : *trials) {
        if (trial.model == "m1" && trial.problemNumber == 1 && trial.arm == arm) {
            return trial.id;
        }
    }
    qFatal("no trial in arm %s", arm.c_str());
}

/// A re-timing of m1's P1 triton2cuda cell on device cpu under grader fingerprint "fixture".
mkb::RetimingRecord retiming(mkb::Store& store) {
    mkb::RetimingRecord record;
    record.model = "m1";
    record.suite = "fixture";
    record.problemNumber = 1;
    record.replicate = 1;
    record.sourceDsl = "triton";
    record.targetDsl = "cuda";
    record.sourceTrialId = trialId(store, "solo_triton");
    record.baseTrialId = trialId(store, "solo_cuda");
    record.skillTrialId = trialId(store, "triton2cuda_skill");
    record.createdAt = "2026-12-01T00:00:00Z";
    record.result.ok = true;
    record.result.device = "cpu";
    record.result.deviceName = "cpu";
    record.result.graderFingerprint = "fixture";
    record.result.rounds = 200;
    record.result.stop = "converged";
    for (const char* label : {"source", "base", "skill"}) {
        record.result.kernels.push_back(mkb::RetimedKernel{label, "cuda", std::string(64, 'a'), 0.001, std::nullopt});
    }
    return record;
}

mkb::CalibrationMethodResult method(const std::string& name, int helped, int detected, std::optional<double> safe) {
    mkb::CalibrationMethodResult result;
    result.method = name;
    result.delta = 0.05;
    result.aaComparisons = 40;
    result.aaHelped = helped;
    result.aaHarmed = 1;
    result.abComparisons = 20;
    result.abDetected = detected;
    result.smallestDelta = safe;
    return result;
}

mkb::CalibrationRecord calibration(const std::string& fingerprint) {
    mkb::CalibrationRecord record;
    record.device = "cpu";
    record.deviceName = "cpu";
    record.graderFingerprint = fingerprint;
    record.selection = "--problems 1-12";
    record.methods = {method("paired", 0, 19, 0.02), method("unpaired", 3, 12, std::nullopt)};
    record.detailJson = "[]";
    record.createdAt = "2026-11-30T10:00:00Z";
    return record;
}

const ReportTable* tableOf(const Report& report, const std::string& id) {
    for (const ReportTable& table : report.tables) {
        if (table.id == id) {
            return &table;
        }
    }
    return nullptr;
}

const ReportTable* calibrationTable(const Report& report) {
    return tableOf(report, "calibration");
}

/// Two A/B controls as mkb calibrate stores them: p01 crosses R@2 (2.2x to 1.9x), p02 ties at R@1 (A's CI holds 1).
const char* const kLadderDetail = R"([
    {"problem": 1, "dsl": "triton", "replicate": 1, "rounds": 120, "paired_aa": [1.0, 0.99, 1.01],
     "paired_ab": [0.864, 0.85, 0.88], "paired_speedup_a": [2.2, 2.15, 2.25], "paired_speedup_b": [1.9, 1.85, 1.95]},
    {"problem": 2, "dsl": "triton", "replicate": 1, "rounds": 120, "paired_aa": [1.0, 0.99, 1.01],
     "paired_ab": [0.93, 0.91, 0.95], "paired_speedup_a": [1.04, 0.99, 1.08], "paired_speedup_b": [0.97, 0.95, 0.99]}
])";

} // namespace

class TestReportCalibration : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    std::unique_ptr<mkb::Store> store(const std::string& name) {
        return mkbtest::openFixtureStore(std::filesystem::path(dir_.path().toStdString()) / name);
    }

    static Report build(mkb::Store& store) {
        ReportOptions options;
        options.model = "m1";
        auto report = buildReportFromStore(store, options);
        if (!report) {
            qFatal("report: %s", report.error().message.c_str());
        }
        return std::move(*report);
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // a store without calibrations gives no calibration table
    void calibration_storeWithoutCalibrationsAddsNothing() {
        auto plain = store("plain.sqlite");
        QVERIFY(plain->insertRetiming(retiming(*plain)).ok());
        const Report report = build(*plain);
        QVERIFY(calibrationTable(report) == nullptr);
        QVERIFY(renderReport(report, ReportFormat::Markdown).find("alibration") == std::string::npos);
    }

    // the re-timing device's calibration under the data's grader: one row per method, current, in Markdown and JSON
    void calibration_currentCalibrationIsReportedPerMethod() {
        auto calibrated = store("current.sqlite");
        QVERIFY(calibrated->insertRetiming(retiming(*calibrated)).ok());
        QVERIFY(calibrated->insertCalibration(calibration("fixture")).ok());
        const Report report = build(*calibrated);
        const ReportTable* table = calibrationTable(report);
        QVERIFY(table != nullptr);
        QCOMPARE(table->rows.size(), std::size_t(2));
        const std::string markdown = renderReport(report, ReportFormat::Markdown);
        QVERIFY2(markdown.find("| cpu (cpu) | fixture | 2026-11-30 | 40 | 20 | paired | 0.050 | 0.0% | 2.5% | "
                               "95.0% | 0.020 | current |") != std::string::npos,
                 markdown.c_str());
        QVERIFY(markdown.find("stale") == std::string::npos);
        // Stored before the ladder (no sessions in its detail): no ladder tables.
        QVERIFY(tableOf(report, "calibration_ladder") == nullptr && tableOf(report, "calibration_ab") == nullptr);
        const auto json = nlohmann::json::parse(renderReport(report, ReportFormat::Json));
        bool found = false;
        for (const auto& entry : json.at("tables")) {
            if (entry.at("id") == "calibration") {
                found = true;
                const std::string dump = entry.dump();
                QVERIFY2(dump.find("\"unpaired\"") != std::string::npos, dump.c_str());
                QVERIFY2(dump.find("\"current\"") != std::string::npos, dump.c_str());
                QVERIFY2(dump.find("0.075") != std::string::npos, dump.c_str()); // unpaired A/A false helped 3/40
            }
        }
        QVERIFY(found);
        for (ReportFormat format : {ReportFormat::Csv, ReportFormat::Latex}) {
            QVERIFY(renderReport(report, format).find("current") != std::string::npos);
        }
    }

    // the calibration's A/B ladder: A as base and B as skill, the lift B − A, ties, crossings and each control
    void calibration_abLadderIsReportedFromTheStoredSessions() {
        auto calibrated = store("ladder.sqlite");
        QVERIFY(calibrated->insertRetiming(retiming(*calibrated)).ok());
        mkb::CalibrationRecord record = calibration("fixture");
        record.detailJson = kLadderDetail;
        QVERIFY(calibrated->insertCalibration(record).ok());
        const Report report = build(*calibrated);
        const ReportTable* ladder = tableOf(report, "calibration_ladder");
        const ReportTable* controls = tableOf(report, "calibration_ab");
        QVERIFY(ladder != nullptr && controls != nullptr);
        QCOMPARE(ladder->rows.size(), std::size_t(5)); // base, skill, lift, lift 95% low, lift 95% high
        QCOMPARE(controls->rows.size(), std::size_t(2));
        const std::string markdown = renderReport(report, ReportFormat::Markdown);
        // A: both pass, both reach R@1, p01 reaches R@2; B loses R@2 (counted) and keeps R@1 at p02 (a tie).
        QVERIFY2(markdown.find("| cpu (cpu) | base | 2 | 100.0% | 100.0% | 100.0% | 50.0% | 0.0% | 70.0 |") !=
                     std::string::npos,
                 markdown.c_str());
        QVERIFY2(markdown.find("| cpu (cpu) | skill | 2 | 100.0% | 100.0% | 100.0% | 0.0% | 0.0% | 60.0 |") !=
                     std::string::npos,
                 markdown.c_str());
        QVERIFY2(markdown.find("| cpu (cpu) | lift | 2 | 0.0% | 0.0% | 0.0% | -50.0% | 0.0% | -10.0 |") !=
                     std::string::npos,
                 markdown.c_str());
        QVERIFY2(markdown.find("cpu (cpu): 2 controls, slowdown 0.100; ties R@0 0, R@0.5 0, R@1 1, R@2 0, R@4 0; 1 "
                               "crossed a threshold (not a tie), 0 the wrong way; the speedup change B/A lies below 1 "
                               "beyond noise (its 95% interval of ln(B/A) excludes 0) in 2 of 2 (100.0%), above 1 in "
                               "0.") != std::string::npos,
                 markdown.c_str());
        QVERIFY2(markdown.find("| cpu (cpu) | 1 | triton | 1 | 2.200 | 2.150 | 2.250 | R@2 | 1.900 | 1.850 | 1.950 | "
                               "R@1 | 0.8640 | 0.8500 | 0.8800 | below 1 | yes |  |") != std::string::npos,
                 markdown.c_str());
        QVERIFY2(markdown.find("| R@1 | 0.9300 | 0.9100 | 0.9500 | below 1 | no | R@1 |") != std::string::npos,
                 markdown.c_str());
        const auto json = nlohmann::json::parse(renderReport(report, ReportFormat::Json));
        bool found = false;
        for (const auto& entry : json.at("tables")) {
            found = found || entry.at("id") == "calibration_ab";
        }
        QVERIFY(found);
        // The calibration table itself is the same as without the ladder.
        QCOMPARE(calibrationTable(report)->rows.size(), std::size_t(2));
    }

    // a calibration made under another grader fingerprint is reported as stale
    void calibration_otherGraderFingerprintIsStale() {
        auto stale = store("stale.sqlite");
        QVERIFY(stale->insertRetiming(retiming(*stale)).ok());
        QVERIFY(stale->insertCalibration(calibration("0123456789abcdef0123")).ok());
        const Report report = build(*stale);
        const std::string markdown = renderReport(report, ReportFormat::Markdown);
        QVERIFY2(markdown.find("| 0123456789ab |") != std::string::npos, markdown.c_str());
        QVERIFY2(markdown.find("| stale |") != std::string::npos, markdown.c_str());
        QVERIFY2(markdown.find("made with grader 0123456789ab, not the data's: stale") != std::string::npos,
                 markdown.c_str());
    }

    // a calibration of another device leaves the re-timing device named as uncalibrated
    void calibration_uncalibratedDeviceSaysRunCalibrate() {
        auto other = store("other.sqlite");
        QVERIFY(other->insertRetiming(retiming(*other)).ok());
        mkb::CalibrationRecord record = calibration("fixture");
        record.device = "cuda:0";
        record.deviceName = "NVIDIA H200";
        QVERIFY(other->insertCalibration(record).ok());
        const std::string markdown = renderReport(build(*other), ReportFormat::Markdown);
        QVERIFY2(markdown.find("no calibration of cpu: run mkb calibrate") != std::string::npos, markdown.c_str());
    }
};

QTEST_GUILESS_MAIN(TestReportCalibration)
#include "tst_report_calibration.moc"
