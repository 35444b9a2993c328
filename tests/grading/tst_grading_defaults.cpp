// grading: every grading default of the C++ side equals the grader's own (`python -m mkbgrader defaults`, from
// core/grader/mkbgrader/parent/settings.py): the settings a request sends, re-timing's stop rule, the quantization
// thresholds, the boundary names, the eager target and an attempt's size limit.
#include "core/agents/driver.h"
#include "core/records/problem.h"
#include "core/suite/suite_validation.h"
#include "core/util/paths.h"
#include "core/vocabulary/boundary.h"
#include "core/wire/grade_request.h"
#include "core/wire/retime_request.h"
#include "support/testpaths.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTest>

#include <set>
#include <string>

namespace {

// Settings the grader keeps to itself: how many outlier draws its child makes and how much child log it keeps.
// The C++ side never sends them.
const std::set<std::string> kGraderOnlySettings = {"outlier_draws", "log_cap_bytes"};

/// One line per key whose value differs or that only one side has ("" when they agree).
std::string differences(const nlohmann::json& cpp, const nlohmann::json& grader,
                        const std::set<std::string>& graderOnly, const std::string& what) {
    std::string found;
    for (const auto& [key, value] : cpp.items()) {
        if (!grader.contains(key)) {
            found += what + "." + key + ": C++ has " + value.dump() + ", the grader has no such default\n";
        } else if (grader[key] != value) {
            found += what + "." + key + ": C++ " + value.dump() + ", the grader " + grader[key].dump() + "\n";
        }
    }
    for (const auto& [key, value] : grader.items()) {
        if (!cpp.contains(key) && !graderOnly.count(key)) {
            found += what + "." + key + ": the grader has " + value.dump() + ", C++ has no such default\n";
        }
    }
    return found;
}

nlohmann::json cppRetimeSettings() {
    return nlohmann::json::parse(mkb::retimeRequestJson(mkb::RetimeRequest{}, "defaults"))["retime"];
}

nlohmann::json cppQuantThresholds() {
    const mkb::QuantThresholds quant;
    return {{"min_cosine", quant.minCosine}, {"max_relative_l1", quant.maxRelativeL1}, {"max_rmse", quant.maxRmse}};
}

} // namespace

class TestGradingDefaults : public QObject {
    Q_OBJECT

    nlohmann::json grader_;

private slots:
    void initTestCase() {
        QProcess python;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("PYTHONPATH", QString::fromStdString(mkb::graderPackageDir().string()));
        environment.insert("PYTHONDONTWRITEBYTECODE", "1");
        python.setProcessEnvironment(environment);
        python.start(QString::fromStdString(mkbtest::testPython()), {"-m", "mkbgrader", "defaults"});
        QVERIFY(python.waitForFinished(60000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        grader_ = nlohmann::json::parse(python.readAllStandardOutput().toStdString());
        QVERIFY(grader_.is_object());
    }

    void gradeSettingsAsSentEqualTheGradersDefaults() {
        const std::string found = differences(mkb::gradeSettingsJson(mkb::GradeSettings{}), grader_["settings"],
                                              kGraderOnlySettings, "settings");
        QVERIFY2(found.empty(), found.c_str());
    }

    void retimeStopRuleAsSentEqualsTheGradersDefault() {
        const std::string found = differences(cppRetimeSettings(), grader_["retime"], {}, "retime");
        QVERIFY2(found.empty(), found.c_str());
    }

    void quantThresholdsEqualTheGradersDefaults() {
        const std::string found = differences(cppQuantThresholds(), grader_["quant"], {}, "quant");
        QVERIFY2(found.empty(), found.c_str());
    }

    void boundaryNamesAndTheDefaultBoundaryAgree() {
        const nlohmann::json cpp = {std::string(mkb::kBoundaryMkb), std::string(mkb::kBoundaryStrict)};
        QCOMPARE(QString::fromStdString(grader_["boundaries"].dump()), QString::fromStdString(cpp.dump()));
        QCOMPARE(QString::fromStdString(grader_["default_boundary"].get<std::string>()),
                 QString::fromStdString(mkb::GradeSettings{}.boundary));
        QVERIFY(mkb::parseBoundary(grader_["default_boundary"].get<std::string>()).ok());
    }

    void eagerTargetAndTheAttemptsSizeLimitAgree() {
        QCOMPARE(grader_["eager_target_ms"].get<double>(), mkb::kEagerTargetMs);
        QCOMPARE(mkb::ValidateRequest{}.eagerTargetMs, mkb::kEagerTargetMs);
        QCOMPARE(grader_["settings"]["max_kernel_bytes"].get<int>(), mkb::AttemptBudget{}.maxKernelBytes);
    }

    void aDefaultThatDriftedIsNamedWithBothValues() {
        mkb::GradeSettings drifted;
        drifted.timingDraws = 51;
        nlohmann::json sent = mkb::gradeSettingsJson(drifted);
        sent["new_knob"] = 1;
        const std::string found = differences(sent, grader_["settings"], kGraderOnlySettings, "settings");
        QVERIFY2(found.find("settings.timing_draws: C++ 51, the grader 50") != std::string::npos, found.c_str());
        QVERIFY2(found.find("settings.new_knob: C++ has 1, the grader has no such default") != std::string::npos,
                 found.c_str());
        nlohmann::json missing = mkb::gradeSettingsJson(mkb::GradeSettings{});
        missing.erase("outlier_p");
        QVERIFY(differences(missing, grader_["settings"], kGraderOnlySettings, "settings")
                    .find("settings.outlier_p: the grader has 0.001, C++ has no such default") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGradingDefaults)
#include "tst_grading_defaults.moc"
