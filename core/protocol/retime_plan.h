// The re-timing planner (DESIGN §5.5): which cells need a paired re-timing, which are current, and why the rest
// are not re-timed. Pure: it reads plain structs and returns a plain plan; it never touches the store or the grader.
#pragma once

#include "core/protocol/cells.h"
#include "core/records/retiming.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mkb {

/// One arm of a cell as the planner sees it.
struct RetimeArm {
    std::optional<std::int64_t> trialId; // unset: no live trial
    std::string dsl;
    bool final = false;       // holds its final verdict (finished, or a skill arm recorded as skipped)
    bool skipped = false;     // a skill arm whose source wrote no skill (counts as its base)
    bool passed = false;      // the final verdict passed
    std::string kernelSource; // the final evaluation's kernel (submission index 0); "" when none is stored
    std::string kernelSha256; // sha256Hex(kernelSource), "" when there is no kernel
};

/// A cell with its three arms.
struct RetimeCell {
    std::string model;
    std::string suite;
    int problemNumber = 0;
    std::string problemName; // "reduction/01_softmax_rows", for messages
    Direction direction;
    int replicate = 1;
    RetimeArm source;
    RetimeArm base;
    RetimeArm skill;

    /// "m1 p01 r1 cuda2triton".
    std::string name() const;
};

enum class RetimeStatus {
    Missing,    // no live re-timing: re-time it
    Stale,      // the live re-timing was made on another device or grader, or of other kernels: re-time it
    Current,    // the live re-timing matches: keep it
    NotRetimed, // the cell cannot or need not be re-timed (an arm not final, failed, skipped, or without a kernel)
};

/// "missing", "stale", "current", "not_retimed".
const char* toString(RetimeStatus status);

struct RetimePlanRequest {
    std::string device;                   // where the re-timings will run, "cuda:0"
    std::string deviceName;               // its name when known ("NVIDIA H200"); "" = compare the device string only
    std::string graderFingerprint;        // of the grader that will time
    bool redoCurrent = false;             // re-time current cells too (their records are archived)
    std::vector<std::string> sameDevices; // a run over several devices: a re-timing on any of these is on `device`
};

struct RetimePlanEntry {
    RetimeCell cell;
    RetimeStatus status = RetimeStatus::Missing;
    std::string reason;                         // one line: why
    std::optional<std::int64_t> liveRetimingId; // the record that is kept or will be archived
    bool includeSource = false;                 // the source joins the re-timing (it passed and has a kernel)
    bool retime = false;                        // this entry is to be re-timed now
};

struct RetimePlan {
    std::vector<RetimePlanEntry> entries; // in the order of the cells given
    int count(RetimeStatus status) const;
    int toRetime() const;
};

/// Plans each cell against the live re-timings (records of other cells are ignored).
///
/// A cell is re-timed only when its base and skill arms are both final, both passed and both have a kernel: a
/// pass/fail difference is decisive without timing, and a skipped skill arm counts as its base. The source joins
/// when it is final, passed and has a kernel. Such a cell is missing (no live record), stale (the record's device,
/// device name, grader fingerprint, kernel set or any kernel's SHA-256 differs) or current.
RetimePlan makeRetimePlan(const std::vector<RetimeCell>& cells, const std::vector<RetimingRecord>& live,
                          const RetimePlanRequest& request);

/// Why a stored result was made elsewhere: on another device (not one of sameDevices), a device of another name, or
/// by another grader; "" when it was made here. The first half of every staleness test.
std::string deviceOrGraderStaleness(const RetimingResult& result, const RetimePlanRequest& request);

/// The first 12 characters of a SHA-256 for messages, "none" for an empty one.
std::string shortSha(const std::string& sha);

/// The kernel of a result with this label, or null.
const RetimedKernel* kernelLabelled(const RetimingResult& result, const std::string& label);

/// Why a stored re-timing no longer matches the cell (the first difference found), or "" when it is current.
std::string retimingStaleness(const RetimingRecord& record, const RetimeCell& cell, bool includeSource,
                              const RetimePlanRequest& request);

} // namespace mkb
