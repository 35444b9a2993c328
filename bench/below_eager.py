#!/usr/bin/env python3
"""The shipped solutions that run below eager in suite-check reports, and where their time goes: the grader's clock
(wall, host work included) beside the summed device time of the same calls (CUDA activity records, `gpu_median_ms`).
A solution whose device time is below eager's median loses to eager outside the device (its DSL's per-call host
work); one whose device time is above it loses on the device. It also says whether the problem file gives a reason
(a comment naming the DSL and "below eager"), which docs/suite.md asks of every solution far below eager.

    python3 bench/below_eager.py REPORT.json [REPORT.json ...] [--below 0.8] [--dsls numba,pallas]

A problem in several reports is read from the first that holds it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gives_reason(problem_path: str, dsl: str) -> bool:
    try:
        with open(problem_path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return False
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    return re.search(rf"\b{dsl}\b[^\n]*\bbelow eager\b", comments, re.IGNORECASE) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--below", type=float, default=0.8, help="speedup under which a solution is listed")
    parser.add_argument("--dsls", default="numba,pallas")
    args = parser.parse_args()
    dsls = set(args.dsls.split(","))
    seen: dict[str, tuple[str, dict]] = {}
    for path in args.reports:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        for problem in report.get("problems", []):
            if problem["name"] not in seen and problem.get("solutions"):
                seen[problem["name"]] = (os.path.basename(path), problem)
    print("| problem | DSL | speedup [95% CI] | eager ms | wall ms | device ms | wall - device ms | loses | reason in file |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    missing = 0
    for name, (source, problem) in sorted(seen.items(), key=lambda item: item[1][1]["number"]):
        for solution in problem["solutions"]:
            verdict = solution.get("verdict") or {}
            speedup = verdict.get("speedup_vs_eager")
            if solution["dsl"] not in dsls or not verdict.get("passed") or speedup is None or speedup >= args.below:
                continue
            eager, wall, device = verdict.get("eager_median_ms"), verdict.get("kernel_median_ms"), verdict.get(
                "gpu_median_ms")
            where = "?" if device is None or eager is None else ("outside the device" if device < eager else
                                                                 "on the device")
            path = os.path.join(REPO, "problems", problem["family"], os.path.basename(problem["path"]))
            reason = gives_reason(path, solution["dsl"])
            missing += 0 if reason else 1
            outside = "" if device is None else f"{wall - device:.3f}"
            print(f"| {name} | {solution['dsl']} | {speedup:.2f}x [{verdict.get('speedup_ci_low', 0):.2f}, "
                  f"{verdict.get('speedup_ci_high', 0):.2f}] | {eager:.3f} | {wall:.3f} | "
                  f"{'' if device is None else f'{device:.3f}'} | {outside} | {where} | "
                  f"{'yes' if reason else 'no'} |")
    print(f"\n{missing} listed solution(s) without a reason in their problem file", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
