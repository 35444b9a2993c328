// GraderProcess::retime and the retime request/reply code against the real grader on device "cpu" (cpusim fixtures).
#include "core/grader_client/grader_process.h"
#include "core/grader_client/report_text.h"
#include "core/wire/grade_request.h"
#include "core/wire/retime_request.h"
#include "core/wire/verdict_json.h"
#include "support/testpaths.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>

using namespace mkb;

namespace {

std::filesystem::path root() {
    return mkbtest::sourceDir();
}

RetimeKernel kernel(const std::string& label, const char* file, const std::string& descriptor, double slowdown = 0) {
    RetimeKernel k;
    k.label = label;
    k.kernelPath = root() / "tests" / "fixtures" / file;
    k.dsl = "cpusim";
    k.dslDescriptorJson = descriptor;
    k.slowdown = slowdown;
    return k;
}

} // namespace

class RetimeClientTest : public QObject {
    Q_OBJECT

    QTemporaryDir temp;
    std::string descriptor;

    GraderLaunch launch() {
        GraderLaunch l;
        l.python = mkbtest::testPython();
        l.packageDir = root() / "core" / "grader";
        l.lock.dir = temp.path().toStdString();
        return l;
    }

    RetimeRequest request() {
        RetimeRequest r;
        r.problemPath = root() / "tests" / "fixtures" / "problems" / "basic" / "01_vector_add.py";
        r.device = "cpu";
        r.settings.warmupDraws = 2;
        r.settings.timeoutS = 120;
        r.retime.minRounds = 10;
        r.retime.maxRounds = 40;
        r.retime.maxSeconds = 20;
        r.retime.ciHalfwidth = 0.5;
        r.seed = 7;
        return r;
    }

private slots:
    void initTestCase() {
        QVERIFY(temp.isValid());
        auto loaded = loadDslDescriptor("cpusim", {root() / "tests" / "fixtures" / "dsls"});
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
        descriptor = *loaded;
    }

    void requestLineCarriesEveryKernelAndTheStopRule() {
        RetimeRequest r = request();
        r.kernels = {kernel("base", "solutions/01_vector_add.cpusim.py", descriptor),
                     kernel("skill", "solutions/01_vector_add.cpusim.py", descriptor, 0.1)};
        auto line = nlohmann::json::parse(retimeRequestJson(r, "r1"));
        QCOMPARE(line["type"].get<std::string>(), std::string("retime"));
        QCOMPARE(line["id"].get<std::string>(), std::string("r1"));
        QCOMPARE(line["kernels"].size(), std::size_t(2));
        QCOMPARE(line["kernels"][1]["label"].get<std::string>(), std::string("skill"));
        QCOMPARE(line["kernels"][1]["slowdown"].get<double>(), 0.1);
        QCOMPARE(line["kernels"][0]["dsl_descriptor"]["id"].get<std::string>(), std::string("cpusim"));
        QCOMPARE(line["retime"]["min_rounds"].get<int>(), 10);
        QCOMPARE(line["retime"]["ci_halfwidth"].get<double>(), 0.5);
        QCOMPARE(line["seed"].get<std::uint64_t>(), std::uint64_t(7));
        QCOMPARE(line["settings"]["warmup_draws"].get<int>(), 2);
    }

    void replyParserNamesTheBadField() {
        auto missing = retimingResultFromJson(R"({"ok":true,"rounds":3,"stop":"converged","kernels":[],"pairs":[]})");
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().message.find("eager_median_s") != std::string::npos, missing.error().message.c_str());
        auto badPair = retimingResultFromJson(
            R"({"ok":true,"rounds":3,"stop":"converged","eager_median_s":1,"kernels":[],
                "pairs":[{"a":"x","b":"y","ratio":"1.0","ci_low":1,"ci_high":1,"n":3}]})");
        QVERIFY(!badPair.ok());
        QVERIFY2(badPair.error().message.find("pairs[0].ratio") != std::string::npos, badPair.error().message.c_str());
        auto badStop = retimingResultFromJson(
            R"({"ok":true,"rounds":3,"stop":"bored","eager_median_s":1,"kernels":[],"pairs":[]})");
        QVERIFY(!badStop.ok());
        QVERIFY2(badStop.error().message.find("stop") != std::string::npos, badStop.error().message.c_str());
        auto failed = retimingResultFromJson(R"({"ok":false,"error":"kernel 'b': boom","failed_label":"b"})");
        QVERIFY(failed.ok());
        QCOMPARE(failed->failedLabel, std::string("b"));
    }

    void realGraderRetimesTwoKernelsAndNamesAFailingOne() {
        GraderProcess grader(launch());
        RetimeRequest r = request();
        r.kernels = {kernel("base", "solutions/01_vector_add.cpusim.py", descriptor),
                     kernel("skill", "solutions/01_vector_add_copies.cpusim.py", descriptor)};
        std::vector<std::string> stages;
        auto result = grader.retime(r, [&](const std::string& stage) { stages.push_back(stage); });
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QVERIFY2(result->ok, result->error.c_str());
        QVERIFY(result->rounds >= 10 && result->rounds <= 40);
        QVERIFY2(result->stop == "converged" || result->stop == "round_limit", result->stop.c_str());
        QCOMPARE(result->device, std::string("cpu"));
        QCOMPARE(result->graderFingerprint, grader.hello().graderFingerprint);
        QCOMPARE(result->kernels.size(), std::size_t(2));
        QCOMPARE(result->kernels[0].sha256.size(), std::size_t(64));
        QVERIFY(result->kernels[0].medianS > 0 && !result->kernels[0].gpuMedianS);
        QVERIFY(result->eagerMedianS > 0);
        QCOMPARE(result->pairs.size(), std::size_t(3)); // base/skill, eager/base, eager/skill
        auto pair = result->pair("base", "skill");
        QVERIFY(pair && pair->n == result->rounds && pair->ciLow <= pair->ratio && pair->ratio <= pair->ciHigh);
        QVERIFY(result->pair("eager", "skill"));
        for (const char* stage : {"import", "correctness", "warmup", "rounds"}) {
            QVERIFY2(std::find(stages.begin(), stages.end(), stage) != stages.end(), stage);
        }

        r.kernels[1] = kernel("skill", "hostile/off_by_small.cpusim.py", descriptor);
        auto failed = grader.retime(r);
        QVERIFY2(failed.ok(), failed.ok() ? "" : failed.error().message.c_str());
        QVERIFY(!failed->ok && !failed->infrastructureError);
        QCOMPARE(failed->failedLabel, std::string("skill"));
        QVERIFY2(failed->error.find("skill") != std::string::npos, failed->error.c_str());

        r.kernels.resize(1);
        auto refused = grader.retime(r);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("2 to 4") != std::string::npos, refused.error().message.c_str());
        QCOMPARE(grader.spawnCount(), 1);
    }

    void verdictsCarryTheirSpeedupIntervalAndGpuTimeIntoTheReport() {
        auto parsed = verdictFromJson(
            R"({"imported":true,"correct":true,"passed":true,"speedup_vs_eager":2.5,"stage":"done",
                "kernel_median_ms":0.4,"eager_median_ms":1.0,"speedup_ci_low":2.4,"speedup_ci_high":2.6,
                "gpu_median_ms":0.35,"gpu_time_source":"torch.profiler","gpu_samples":3,
                "roofline":{"bytes":4e9,"flops":null,"achieved_gbps":11428,"achieved_tflops":null,"iou":0.95,
                            "mfu":null,"time_basis":"gpu"}})");
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message.c_str());
        QCOMPARE(*parsed->speedupCiLow, 2.4);
        QCOMPARE(*parsed->speedupCiHigh, 2.6);
        QCOMPARE(*parsed->gpuMedianMs, 0.35);
        QCOMPARE(parsed->gpuSamples, 3);
        QCOMPARE(parsed->roofline->timeBasis, std::string("gpu"));
        std::string report = verdictReport(*parsed, {});
        QVERIFY2(report.find("95% CI 2.40-2.60x") != std::string::npos, report.c_str());
        QVERIFY2(report.find("gpu time") != std::string::npos, report.c_str());
        QVERIFY2(report.find("over GPU time") != std::string::npos, report.c_str());
        auto again = verdictFromJson(verdictToJson(*parsed));
        QVERIFY(again.ok() && again->speedupCiHigh == 2.6 && again->gpuTimeSource == "torch.profiler");

        auto older = verdictFromJson(R"({"imported":true,"correct":true,"passed":true,"speedup_vs_eager":1.0})");
        QVERIFY(older.ok() && !older->speedupCiLow && !older->gpuMedianMs);
        QVERIFY(verdictReport(*older, {}).find("95% CI") == std::string::npos);
        auto noisy = verdictFromJson(R"({"imported":true,"correct":true,"passed":true,"speedup_vs_eager":1.01,
                                         "speedup_ci_low":0.97,"speedup_ci_high":1.05})");
        QVERIFY(noisy.ok());
        QVERIFY(verdictReport(*noisy, {}).find("within noise of eager") != std::string::npos);
        auto wrong = verdictFromJson(R"({"imported":true,"correct":true,"passed":true,"speedup_vs_eager":1.0,
                                         "speedup_ci_low":"low"})");
        QVERIFY(!wrong.ok() && wrong.error().message.find("speedup_ci_low") != std::string::npos);
    }

    void deadlineCoversCorrectnessRoundsAndMargin() {
        GraderProcess grader(launch());
        RetimeRequest r = request();
        r.settings.timeoutS = 600;
        r.retime.maxSeconds = 60;
        QCOMPARE(grader.retimeDeadlineS(r), 600.0 + 60.0 + 60.0 + 30.0);
    }
};

QTEST_GUILESS_MAIN(RetimeClientTest)
#include "tst_retime_client.moc"
