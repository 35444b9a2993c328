// Pure parts of the grading side: verdict JSON, request JSON, report text, device names, lock files, stored peaks.
#include "core/grader_client/device_probe.h"
#include "core/grader_client/gpu_lock.h"
#include "core/grader_client/report_text.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"
#include "core/wire/verdict_json.h"
#include "support/testpaths.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdlib>

using namespace mkb;

namespace {
const char* const kFullVerdict =
    "{\"imported\":true,\"correct\":false,\"passed\":false,\"speedup_vs_eager\":0,\"stage\":\"correctness\","
    "\"error\":\"incorrect\",\"infrastructure_error\":false,\"timed_out\":false,\"correct_draws\":2,\"total_draws\":5,"
    "\"mismatch\":\"draw 3: output 0 differs at [4, 7] by 0.5, 12x over the allowance\",\"compliant\":true,"
    "\"compliance_rule\":\"\",\"kernel_median_ms\":null,\"eager_median_ms\":null,\"kernel_iqr_ms\":null,\"throttled\":"
    "false,"
    "\"outliers_correct\":null,\"quant\":{\"cosine\":0.99,\"relative_l1\":0.01,\"rmse\":0.02,\"passed\":true},"
    "\"roofline\":null,\"eval_seconds\":3.5,\"extra_field\":[1,2],\"outlier_mismatch\":\"outlier draw 1: "
    "output 0 is NaN\",\"recheck_correct\":null,\"log\":\"debug: hello\\nReady.\"}";

GradeRequest tritonRequest() {
    GradeRequest request;
    request.problemPath = "/p/01_x.py";
    request.kernelPath = "/k/kernel.py";
    request.dsl = "triton";
    return request;
}

} // namespace

class GradingRecordsTest : public QObject {
    Q_OBJECT

private slots:
    void verdictParsesEveryField() {
        // "verdict json: every protocol field lands in Verdict, unknown fields are kept in json"
        auto verdict = verdictFromJson(kFullVerdict);
        QVERIFY2(verdict.ok(), verdict.ok() ? "" : verdict.error().message.c_str());
        QVERIFY(verdict->imported && !verdict->correct && !verdict->passed);
        QCOMPARE(verdict->stage, std::string("correctness"));
        QCOMPARE(verdict->correctDraws, 2);
        QCOMPARE(verdict->totalDraws, 5);
        QVERIFY(verdict->mismatch.find("12x over") != std::string::npos);
        QVERIFY(!verdict->kernelMedianMs && !verdict->outliersCorrect && !verdict->roofline);
        QVERIFY(verdict->quant && verdict->quant->passed && verdict->quant->cosine == 0.99);
        QCOMPARE(verdict->evalSeconds, 3.5);
        QVERIFY(verdict->json.find("extra_field") != std::string::npos);
        QCOMPARE(verdict->outlierMismatch, std::string("outlier draw 1: output 0 is NaN"));
        QVERIFY(!verdict->recheckCorrect);
        QCOMPARE(verdict->log, std::string("debug: hello\nReady."));
    }

    void outlierMetaTakesOnlyTheGradersForms() {
        // "grade request: MKB_META outliers go to the grader only as false or a list of input positions"
        ProblemMeta meta;
        meta.outliersJson = "false";
        QCOMPARE(problemMetaJson(meta), std::string("{\"outliers\":false}"));
        meta.outliersJson = "[0,2]";
        QCOMPARE(problemMetaJson(meta), std::string("{\"outliers\":[0,2]}"));
        meta.outliersJson = "\"off\"";
        QCOMPARE(problemMetaJson(meta), std::string("{\"outliers\":false}"));
        meta.outliersJson = "{\"inputs\":[0],\"p\":0.01}";
        QCOMPARE(problemMetaJson(meta), std::string());
    }

    void verdictToleratesMissingOptionalFields() {
        // "verdict json: only the four rewards are required"
        auto verdict = verdictFromJson("{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1.5}");
        QVERIFY(verdict.ok());
        QCOMPARE(verdict->speedupVsEager, 1.5);
        QVERIFY(verdict->stage.empty() && !verdict->quant && !verdict->roofline);
    }

    void verdictNamesItsBoundaryAndOlderVerdictsAreLegacy() {
        auto strict = verdictFromJson("{\"imported\":true,\"correct\":true,\"passed\":false,\"speedup_vs_eager\":0,"
                                      "\"compliance_rule\":\"eager_compute\",\"boundary\":\"strict\"}");
        QVERIFY(strict.ok());
        QCOMPARE(strict->boundary, std::string("strict"));
        auto older = verdictFromJson("{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1.5}");
        QVERIFY(older.ok());
        QCOMPARE(older->boundary, std::string("legacy"));
        auto written = verdictFromJson(verdictToJson(*strict));
        QVERIFY(written.ok());
        QCOMPARE(written->boundary, std::string("strict"));
    }

    void boundaryParsesTwoNamesAndTheFingerprintCarriesIt() {
        QCOMPARE(*parseBoundary("mkb"), std::string("mkb"));
        QCOMPARE(*parseBoundary("strict"), std::string("strict"));
        auto legacy = parseBoundary("legacy");
        QVERIFY(!legacy); // legacy is what old verdicts are, never what a new grading asks for
        auto unknown = parseBoundary("loose", "--boundary");
        QVERIFY(!unknown);
        QVERIFY(unknown.error().message.find("--boundary 'loose'") != std::string::npos);
        QVERIFY(unknown.error().message.find("use mkb") != std::string::npos);
        QCOMPARE(fingerprintWithBoundary("abc123", "strict"), std::string("abc123+strict"));
        QVERIFY(fingerprintWithBoundary("abc123", "mkb") != fingerprintWithBoundary("abc123", "strict"));
        QCOMPARE(fingerprintWithBoundary("", "mkb"), std::string());
    }

    void verdictIsStrictOnRewards_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("named");
        QTest::newRow("missing passed") << "{\"imported\":true,\"correct\":true,\"speedup_vs_eager\":1}"
                                        << "passed";
        QTest::newRow("string reward")
            << "{\"imported\":\"yes\",\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1}"
            << "imported";
        QTest::newRow("number as bool") << "{\"imported\":true,\"correct\":1,\"passed\":true,\"speedup_vs_eager\":1}"
                                        << "correct";
        QTest::newRow("speedup string")
            << "{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":\"2\"}"
            << "speedup_vs_eager";
        QTest::newRow("speedup NaN") << "{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":NaN}"
                                     << "speedup_vs_eager";
        QTest::newRow("wrong optional type")
            << "{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1,\"correct_draws\":\"5\"}"
            << "correct_draws";
        QTest::newRow("not an object") << "[1,2]"
                                       << "not a JSON object";
        QTest::newRow("truncated") << "{\"imported\":true,\"corr"
                                   << "not a JSON object";
    }
    void verdictIsStrictOnRewards() {
        // "verdict json: a missing or mistyped reward is an error naming it"
        QFETCH(QString, text);
        QFETCH(QString, named);
        auto verdict = verdictFromJson(text.toStdString());
        QVERIFY(!verdict.ok());
        QVERIFY2(verdict.error().message.find(named.toStdString()) != std::string::npos,
                 verdict.error().message.c_str());
    }

    void nonFiniteNumbersReadAsNull() {
        // "verdict json: bare NaN/Infinity outside strings become null, strings are untouched"
        QCOMPARE(withNonFiniteAsNull("{\"a\":NaN,\"b\":-Infinity,\"c\":\"NaN Infinity\",\"d\":Infinity}"),
                 std::string("{\"a\":null,\"b\":null,\"c\":\"NaN Infinity\",\"d\":null}"));
        auto verdict = verdictFromJson(
            "{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1,\"kernel_iqr_ms\":NaN}");
        QVERIFY(verdict.ok() && !verdict->kernelIqrMs);
    }

    void infrastructureVerdictRoundTrips() {
        // "verdict json: infrastructure verdicts zero the rewards and parse back"
        Verdict verdict = infrastructureVerdict("the grader exited with status 3", "timing", true);
        auto parsed = verdictFromJson(verdict.json);
        QVERIFY(parsed.ok());
        QVERIFY(parsed->infrastructureError && parsed->timedOut && !parsed->passed);
        QCOMPARE(parsed->stage, std::string("timing"));
        QCOMPARE(parsed->error, std::string("the grader exited with status 3"));
    }

    void requestCarriesDefaultsAndDescriptor() {
        // "grade request: settings take DESIGN §5.1 defaults; descriptor, peaks and meta are embedded as objects"
        GradeRequest request = tritonRequest();
        request.dslDescriptorJson = "{\"id\":\"triton\",\"compliance\":{\"adapter\":\"triton\"}}";
        request.peaksJson = "{\"copy_gbps\":4000,\"tflops\":{\"bfloat16\":800}}";
        ProblemMeta meta;
        meta.tags = {"reduction"};
        meta.quant = QuantThresholds{};
        meta.flops = 1e9;
        request.problemMetaJson = problemMetaJson(meta);
        auto line = nlohmann::json::parse(gradeRequestJson(request, "id-1"));
        QCOMPARE(line["type"], "grade");
        QCOMPARE(line["id"], "id-1");
        QCOMPARE(line["device"], "cuda:0");
        QCOMPARE(line["dsl_descriptor"]["compliance"]["adapter"], "triton");
        const auto& s = line["settings"];
        QCOMPARE(s["correctness_draws"], 5);
        QCOMPARE(s["warmup_draws"], 10);
        QCOMPARE(s["timing_draws"], 50);
        QCOMPARE(s["recheck_draws"], 3);
        QCOMPARE(s["timeout_s"], 600.0);
        QCOMPARE(s["max_kernel_bytes"], 300000);
        QCOMPARE(s["outliers"], true);
        QCOMPARE(s["outlier_p"], 0.001);
        QCOMPARE(s["outlier_scale"], 50.0);
        QCOMPARE(s["kernel_only_timing"], false);
        QCOMPARE(s["boundary"], "mkb"); // the implementation boundary travels with every request
        QCOMPARE(s.size(), std::size_t(11));
        QCOMPARE(line["peaks"]["tflops"]["bfloat16"], 800);
        QCOMPARE(line["problem_meta"]["quant"]["min_cosine"], 0.95);
        QCOMPARE(line["problem_meta"]["tags"][0], "reduction");
        QVERIFY(problemMetaJson(ProblemMeta{}).empty());
    }

    // "grade request: the next grading's DSL travels only when the client knows it, with its descriptor, so the
    // grader pre-starts that grading's child beside this one"
    void nextGradingTravelsOnlyWhenKnown() {
        GradeRequest request = tritonRequest();
        QVERIFY(!nlohmann::json::parse(gradeRequestJson(request, "plain")).contains("next"));
        request.nextDsl = "pallas";
        request.nextDslDescriptorJson = R"({"id": "pallas"})";
        const auto withNext = nlohmann::json::parse(gradeRequestJson(request, "next"));
        QCOMPARE(withNext["next"]["dsl"].get<std::string>(), std::string("pallas"));
        QCOMPARE(withNext["next"]["dsl_descriptor"]["id"].get<std::string>(), std::string("pallas"));
    }

    // "grade request: a slowdown travels only when asked for (mkb calibrate's slowed copy), and the verdict keeps
    // the fraction and the delay it added; a verdict without one reads 0 and writes nothing new"
    void slowdownTravelsOnlyWhenAskedAndTheVerdictKeepsIt() {
        GradeRequest request = tritonRequest();
        QVERIFY(!nlohmann::json::parse(gradeRequestJson(request, "plain")).contains("slowdown"));
        request.slowdown = 0.1;
        QCOMPARE(nlohmann::json::parse(gradeRequestJson(request, "slow"))["slowdown"].get<double>(), 0.1);
        auto slowed = verdictFromJson("{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1.8,"
                                      "\"slowdown\":0.1,\"slowdown_delay_ms\":0.02}");
        QVERIFY2(slowed.ok(), slowed.ok() ? "" : slowed.error().message.c_str());
        QCOMPARE(slowed->slowdown, 0.1);
        QCOMPARE(*slowed->slowdownDelayMs, 0.02);
        auto again = verdictFromJson(verdictToJson(*slowed));
        QVERIFY(again.ok() && again->slowdown == 0.1 && again->slowdownDelayMs == 0.02);
        auto plain = verdictFromJson("{\"imported\":true,\"correct\":true,\"passed\":true,\"speedup_vs_eager\":1.5}");
        QVERIFY(plain.ok() && plain->slowdown == 0 && !plain->slowdownDelayMs);
        QVERIFY(!nlohmann::json::parse(verdictToJson(*plain)).contains("slowdown"));
    }

    void deviceNames() {
        // "grade request: cpu, cuda and cuda:N are devices; anything else is refused"
        QCOMPARE(cudaDeviceIndex("cuda"), std::optional<int>(0));
        QCOMPARE(cudaDeviceIndex("cuda:3"), std::optional<int>(3));
        QVERIFY(!cudaDeviceIndex("cpu") && !cudaDeviceIndex("cuda:") && !cudaDeviceIndex("cuda:x"));
        QVERIFY(validateDevice("cpu").ok() && validateDevice("cuda:1").ok());
        QVERIFY(!validateDevice("gpu0").ok());
    }

    void dslDescriptorLookup() {
        // "grade request: DSL descriptors come from extra folders first; an unknown DSL lists the known ones"
        auto fixtureDir = mkbtest::sourceDir() / "tests" / "fixtures" / "dsls";
        auto cpusim = loadDslDescriptor("cpusim", {fixtureDir});
        QVERIFY2(cpusim.ok(), cpusim.ok() ? "" : cpusim.error().message.c_str());
        QVERIFY(cpusim->find("\"cpusim\"") != std::string::npos);
        auto unknown = loadDslDescriptor("nosuchdsl", {fixtureDir});
        QVERIFY(!unknown.ok());
        QVERIFY(unknown.error().message.find("unknown DSL 'nosuchdsl'") != std::string::npos);
        QVERIFY(unknown.error().message.find("cpusim") != std::string::npos);
        QVERIFY(!loadDslDescriptor("../etc/passwd", {fixtureDir}).ok());
    }

    void lockFilesFollowPhysicalDevices() {
        // "gpu lock: cuda:N maps through CUDA_VISIBLE_DEVICES so processes with different views agree"
        ::unsetenv("CUDA_VISIBLE_DEVICES");
        QCOMPARE(gpuLockPath("cuda:1", "/locks").string(), std::string("/locks/mkb-gpu1.lock"));
        QCOMPARE(gpuLockPath("cpu", "/locks").string(), std::string("/locks/mkb-cpu.lock"));
        ::setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
        QCOMPARE(gpuLockPath("cuda:1", "/locks").string(), std::string("/locks/mkb-gpu1.lock"));
        QCOMPARE(gpuLockPath("cuda:0", "/locks").string(), std::string("/locks/mkb-gpu3.lock"));
        ::setenv("CUDA_VISIBLE_DEVICES", "GPU-ab12", 1);
        QCOMPARE(gpuLockPath("cuda:0", "/locks").string(), std::string("/locks/mkb-gpuGPU-ab12.lock"));
        ::unsetenv("CUDA_VISIBLE_DEVICES");
    }

    void peaksComeFromTheLatestProbeOfThisHostAndDevice() {
        // "device probe: grading uses the latest stored probe of the same host and device"
        DeviceProbe probe;
        probe.device = "cuda:0";
        probe.name = "NVIDIA H200";
        probe.uuid = "GPU-1";
        probe.copyGBps = 4000;
        probe.tflops = {{"bfloat16", 800}};
        DeviceRecord old = deviceRecordFromProbe(probe, "hostA");
        old.probedAt = "2026-01-01T00:00:00Z";
        probe.copyGBps = 4100;
        DeviceRecord fresh = deviceRecordFromProbe(probe, "hostA");
        fresh.probedAt = "2026-02-01T00:00:00Z";
        probe.copyGBps = 999;
        DeviceRecord otherHost = deviceRecordFromProbe(probe, "hostB");
        otherHost.probedAt = "2026-03-01T00:00:00Z";
        std::vector<DeviceRecord> stored = {fresh, old, otherHost};
        auto peaks = nlohmann::json::parse(latestPeaksFor(stored, "cuda:0", "hostA"));
        QCOMPARE(peaks["copy_gbps"], 4100.0);
        QVERIFY(!peaks.contains("host") && !peaks.contains("device"));
        QVERIFY(latestPeaksFor(stored, "cuda:1", "hostA").empty());
    }

    void reportSaysWhatAModelNeeds() {
        // "report: stage, import, n/N, first mismatch, medians, speedup, compliance, roofline, throttling"
        Verdict failed = *verdictFromJson(kFullVerdict);
        std::string text = verdictReport(failed, {"basic/01_vector_add", "cpusim", "k.py", "cpu"});
        QVERIFY(text.find("FAILED") != std::string::npos);
        QVERIFY(text.find("stage:        correctness") != std::string::npos);
        QVERIFY(text.find("2/5 draws correct") != std::string::npos);
        QVERIFY(text.find("12x over the allowance") != std::string::npos);
        QVERIFY(text.find("cosine 0.9900") != std::string::npos);
        QVERIFY(text.find("outlier miss: outlier draw 1") != std::string::npos);
        QVERIFY(text.find("  | debug: hello\n  | Ready.\n") != std::string::npos);

        Verdict passed;
        passed.imported = passed.correct = passed.passed = passed.compliant = true;
        passed.speedupVsEager = 2.5;
        passed.stage = "done";
        passed.correctDraws = passed.totalDraws = 5;
        passed.kernelMedianMs = 0.4;
        passed.eagerMedianMs = 1.0;
        passed.throttled = true;
        passed.roofline = Roofline{2e9, 0, 5000, std::nullopt, 0.5, std::nullopt};
        text = verdictReport(passed);
        QVERIFY(text.find("PASSED") != std::string::npos);
        QVERIFY(text.find("400.0 us median") != std::string::npos);
        QVERIFY(text.find("1.000 ms median") != std::string::npos);
        QVERIFY(text.find("2.50x (faster than eager)") != std::string::npos);
        QVERIFY(text.find("compliance:   ok") != std::string::npos);
        QVERIFY(text.find("2.00 GB moved; 5000 GB/s (50% of measured peak)") != std::string::npos);
        QVERIFY(text.find("throttled") != std::string::npos);

        Verdict broken = infrastructureVerdict("the grader exited with status 3", "import");
        text = verdictReport(broken);
        QVERIFY(text.find("INFRASTRUCTURE ERROR") != std::string::npos);
        QVERIFY(text.find("exited with status 3") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(GradingRecordsTest)
#include "tst_grading_records.moc"
