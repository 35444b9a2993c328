// retime plan: every branch of missing, stale, current and not re-timed, with its reason.
#include "core/protocol/retime_plan.h"

#include <QTest>

namespace {

mkb::RetimeArm passingArm(std::int64_t id, const std::string& dsl, const std::string& sha) {
    mkb::RetimeArm arm;
    arm.trialId = id;
    arm.dsl = dsl;
    arm.final = true;
    arm.passed = true;
    arm.kernelSource = "kernel " + sha;
    arm.kernelSha256 = sha;
    return arm;
}

mkb::RetimeCell cell() {
    mkb::RetimeCell c;
    c.model = "m1";
    c.suite = "problems";
    c.problemNumber = 1;
    c.direction = {"cuda", "triton"};
    c.replicate = 1;
    c.source = passingArm(1, "cuda", "s1");
    c.base = passingArm(2, "triton", "b1");
    c.skill = passingArm(3, "triton", "k1");
    return c;
}

mkb::RetimePlanRequest request() {
    return {"cuda:0", "NVIDIA H200", "gf", false, {}};
}

mkb::RetimingRecord recordOf(const mkb::RetimeCell& c, bool withSource = true) {
    mkb::RetimingRecord record;
    record.id = 42;
    record.model = c.model;
    record.suite = c.suite;
    record.problemNumber = c.problemNumber;
    record.replicate = c.replicate;
    record.sourceDsl = c.direction.sourceDsl;
    record.targetDsl = c.direction.targetDsl;
    record.result.ok = true;
    record.result.device = "cuda:0";
    record.result.deviceName = "NVIDIA H200";
    record.result.graderFingerprint = "gf";
    if (withSource) {
        record.result.kernels.push_back({"source", "cuda", c.source.kernelSha256, 1, std::nullopt});
    }
    record.result.kernels.push_back({"base", "triton", c.base.kernelSha256, 1, std::nullopt});
    record.result.kernels.push_back({"skill", "triton", c.skill.kernelSha256, 1, std::nullopt});
    return record;
}

mkb::RetimePlanEntry planOne(const mkb::RetimeCell& c, const std::vector<mkb::RetimingRecord>& live,
                             const mkb::RetimePlanRequest& r = request()) {
    mkb::RetimePlan plan = mkb::makeRetimePlan({c}, live, r);
    return plan.entries.at(0);
}

bool mentions(const std::string& text, const std::string& word) {
    return text.find(word) != std::string::npos;
}

} // namespace

class RetimePlanTest : public QObject {
    Q_OBJECT

private slots:
    void aCellWithoutARecordIsMissingAndRetimedWithItsSource() {
        const mkb::RetimePlanEntry entry = planOne(cell(), {});
        QCOMPARE(entry.status, mkb::RetimeStatus::Missing);
        QVERIFY(entry.retime);
        QVERIFY(entry.includeSource);
        QVERIFY(!entry.liveRetimingId);
    }

    void aMatchingRecordIsCurrentAndKept() {
        const mkb::RetimeCell c = cell();
        const mkb::RetimePlanEntry entry = planOne(c, {recordOf(c)});
        QCOMPARE(entry.status, mkb::RetimeStatus::Current);
        QVERIFY(!entry.retime);
        QCOMPARE(*entry.liveRetimingId, std::int64_t(42));
    }

    void redoCurrentRetimesACurrentCell() {
        const mkb::RetimeCell c = cell();
        mkb::RetimePlanRequest r = request();
        r.redoCurrent = true;
        const mkb::RetimePlanEntry entry = planOne(c, {recordOf(c)}, r);
        QCOMPARE(entry.status, mkb::RetimeStatus::Current);
        QVERIFY(entry.retime);
    }

    void anArchivedOrOtherCellsRecordDoesNotCount() {
        const mkb::RetimeCell c = cell();
        mkb::RetimingRecord archived = recordOf(c);
        archived.archived = true;
        mkb::RetimingRecord otherDirection = recordOf(c);
        otherDirection.sourceDsl = "triton";
        otherDirection.targetDsl = "cuda";
        mkb::RetimingRecord otherReplicate = recordOf(c);
        otherReplicate.replicate = 2;
        QCOMPARE(planOne(c, {archived, otherDirection, otherReplicate}).status, mkb::RetimeStatus::Missing);
    }

    void anotherDeviceMakesItStale() {
        const mkb::RetimeCell c = cell();
        mkb::RetimePlanRequest r = request();
        r.device = "cuda:1";
        const mkb::RetimePlanEntry entry = planOne(c, {recordOf(c)}, r);
        QCOMPARE(entry.status, mkb::RetimeStatus::Stale);
        QVERIFY(entry.retime);
        QVERIFY2(mentions(entry.reason, "cuda:1"), entry.reason.c_str());
    }

    void aRecordOnAnotherDeviceOfTheRunsPoolIsCurrent() {
        // mkb run --devices: a cell re-timed on cuda:0 is not re-timed again when the sweep runs on cuda:1
        const mkb::RetimeCell c = cell();
        mkb::RetimePlanRequest r = request();
        r.device = "cuda:1";
        r.sameDevices = {"cuda:0", "cuda:1"};
        QCOMPARE(planOne(c, {recordOf(c)}, r).status, mkb::RetimeStatus::Current);
        r.sameDevices = {"cuda:1", "cuda:2"}; // a pool without the record's device
        QCOMPARE(planOne(c, {recordOf(c)}, r).status, mkb::RetimeStatus::Stale);
    }

    void anotherDeviceNameMakesItStaleAndAnUnknownNameDoesNot() {
        const mkb::RetimeCell c = cell();
        mkb::RetimePlanRequest r = request();
        r.deviceName = "NVIDIA H100";
        QCOMPARE(planOne(c, {recordOf(c)}, r).status, mkb::RetimeStatus::Stale);
        r.deviceName = "";
        QCOMPARE(planOne(c, {recordOf(c)}, r).status, mkb::RetimeStatus::Current);
    }

    void anotherGraderMakesItStale() {
        const mkb::RetimeCell c = cell();
        mkb::RetimePlanRequest r = request();
        r.graderFingerprint = "gf2";
        const mkb::RetimePlanEntry entry = planOne(c, {recordOf(c)}, r);
        QCOMPARE(entry.status, mkb::RetimeStatus::Stale);
        QVERIFY2(mentions(entry.reason, "grader"), entry.reason.c_str());
    }

    void eachChangedKernelMakesItStale() {
        for (const char* which : {"source", "base", "skill"}) {
            const mkb::RetimeCell before = cell();
            mkb::RetimeCell after = before;
            mkb::RetimeArm& arm = std::string(which) == "source" ? after.source
                                  : std::string(which) == "base" ? after.base
                                                                 : after.skill;
            arm.kernelSha256 = "changed";
            const mkb::RetimePlanEntry entry = planOne(after, {recordOf(before)});
            QCOMPARE(entry.status, mkb::RetimeStatus::Stale);
            QVERIFY2(mentions(entry.reason, std::string("the ") + which + " kernel changed"), entry.reason.c_str());
        }
    }

    void aSourceThatNowFailsOrNowPassesChangesTheKernelSet() {
        mkb::RetimeCell c = cell();
        const mkb::RetimingRecord withSource = recordOf(c);
        c.source.passed = false;
        mkb::RetimePlanEntry entry = planOne(c, {withSource});
        QCOMPARE(entry.status, mkb::RetimeStatus::Stale);
        QVERIFY(!entry.includeSource);
        QVERIFY2(mentions(entry.reason, "no longer joins"), entry.reason.c_str());

        const mkb::RetimingRecord withoutSource = recordOf(cell(), false);
        entry = planOne(cell(), {withoutSource});
        QCOMPARE(entry.status, mkb::RetimeStatus::Stale);
        QVERIFY2(mentions(entry.reason, "source kernel was not timed"), entry.reason.c_str());
    }

    void aFailedSourceIsLeftOutButTheCellIsRetimed() {
        mkb::RetimeCell c = cell();
        c.source.passed = false;
        const mkb::RetimePlanEntry entry = planOne(c, {});
        QCOMPARE(entry.status, mkb::RetimeStatus::Missing);
        QVERIFY(!entry.includeSource);
        QCOMPARE(planOne(c, {recordOf(c, false)}).status, mkb::RetimeStatus::Current);
        c.source.trialId.reset();
        QVERIFY(!planOne(c, {}).includeSource);
    }

    void aFailedBaseOrSkillIsNotRetimed() {
        for (bool failBase : {true, false}) {
            mkb::RetimeCell c = cell();
            (failBase ? c.base : c.skill).passed = false;
            const mkb::RetimePlanEntry entry = planOne(c, {recordOf(cell())});
            QCOMPARE(entry.status, mkb::RetimeStatus::NotRetimed);
            QVERIFY(!entry.retime);
            QVERIFY2(mentions(entry.reason, failBase ? "base arm failed" : "skill arm failed"), entry.reason.c_str());
            QVERIFY2(mentions(entry.reason, "pass/fail"), entry.reason.c_str());
            QCOMPARE(*entry.liveRetimingId, std::int64_t(42)); // the old record stays live, untouched
        }
    }

    void armsNotFinalOrMissingAreNotRetimed() {
        mkb::RetimeCell c = cell();
        c.skill.final = false;
        QVERIFY(mentions(planOne(c, {}).reason, "skill arm is not final"));
        c = cell();
        c.base.trialId.reset();
        QVERIFY(mentions(planOne(c, {}).reason, "base arm has no trial"));
        QCOMPARE(planOne(c, {}).status, mkb::RetimeStatus::NotRetimed);
    }

    void aSkippedSkillArmIsNotRetimed() {
        mkb::RetimeCell c = cell();
        c.skill.skipped = true;
        c.skill.kernelSha256.clear();
        const mkb::RetimePlanEntry entry = planOne(c, {});
        QCOMPARE(entry.status, mkb::RetimeStatus::NotRetimed);
        QVERIFY2(mentions(entry.reason, "skipped"), entry.reason.c_str());
    }

    void anArmWithoutAStoredKernelIsNotRetimed() {
        mkb::RetimeCell c = cell();
        c.base.kernelSha256.clear();
        const mkb::RetimePlanEntry entry = planOne(c, {});
        QCOMPARE(entry.status, mkb::RetimeStatus::NotRetimed);
        QVERIFY2(mentions(entry.reason, "no stored kernel"), entry.reason.c_str());
    }

    void thePlanCountsEachStatus() {
        mkb::RetimeCell failing = cell();
        failing.problemNumber = 2;
        failing.base.passed = false;
        mkb::RetimeCell current = cell();
        current.problemNumber = 3;
        const mkb::RetimePlan plan = mkb::makeRetimePlan({cell(), failing, current}, {recordOf(current)}, request());
        QCOMPARE(plan.count(mkb::RetimeStatus::Missing), 1);
        QCOMPARE(plan.count(mkb::RetimeStatus::NotRetimed), 1);
        QCOMPARE(plan.count(mkb::RetimeStatus::Current), 1);
        QCOMPARE(plan.toRetime(), 1);
        QCOMPARE(plan.entries[1].cell.name(), std::string("m1 p02 r1 cuda2triton"));
    }
};

QTEST_GUILESS_MAIN(RetimePlanTest)
#include "tst_retime_plan.moc"
