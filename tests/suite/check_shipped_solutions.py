"""GPU test: every shipped solution of the shipped problems passes the grader (`mkb suite check --gradings 1`).

Runs mkb ($MKB_CLI) with a throw-away store (the device is probed once for roofline) and fails if any shipped
solution is missing or fails its grading. Problem-validation findings are printed but do not fail this test.
Standard library only; mkb starts the grader with $MKB_PYTHON (default python3). $MKB_SUITE_DSLS names the DSLs
(default all four shipped ones). $MKB_SUITE_PROBLEMS, a --problems glob, checks part of the suite: one grading per
solution of two DSLs took about 18 minutes on the H200, longer than one device call, and four DSLs take longer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile


def main() -> int:
    mkb = os.environ.get("MKB_CLI", "mkb")
    dsls = os.environ.get("MKB_SUITE_DSLS", "triton,cuda,numba,pallas")
    device = os.environ.get("MKB_SUITE_DEVICE", "cuda:0")
    problems = os.environ.get("MKB_SUITE_PROBLEMS", "")
    with tempfile.TemporaryDirectory() as folder:
        report_path = os.path.join(folder, "suite.json")
        command = [mkb, "suite", "check", "--gradings", "1", "--dsls", dsls, "--device", device,
                   "--store", os.path.join(folder, "store.sqlite"), "--json", report_path]
        if problems:
            command += ["--problems", problems]
        print("running:", " ".join(command), flush=True)
        completed = subprocess.run(command)
        if not os.path.exists(report_path):
            print(f"FAIL: mkb suite check exited {completed.returncode} without writing its report")
            return 1
        with open(report_path) as handle:
            report = json.load(handle)
    failures = []
    total = 0
    for problem in report["problems"]:
        for solution in problem["solutions"]:
            total += 1
            if not solution["passed"]:
                failures.append(solution["problem"] or f"{problem['name']} [{solution['dsl']}]: did not pass")
    for issue in report.get("catalog_issues", []):
        failures.append("malformed problem file " + issue)
    wanted = [d for d in dsls.split(",") if d]
    for problem in report["problems"]:  # every problem ships one solution per DSL (74 problems, 4 DSLs: 296)
        present = {solution["dsl"] for solution in problem["solutions"]}
        for dsl in wanted:
            if dsl not in present:
                failures.append(f"{problem['name']}: no shipped {dsl} solution")
    print(report["summary"])
    if failures:
        print(f"FAIL: {len(failures)} of {total} shipped solutions did not pass:")
        for line in failures:
            print("  " + line)
        return 1
    print(f"OK: all {total} shipped solutions passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
