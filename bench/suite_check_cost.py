#!/usr/bin/env python3
"""Device seconds per solution check of `mkb suite check`, two ways side by side in one run (issue: the four-DSL suite
check must fit the device time of one session).

Each sampled problem is checked alone by both sides, in alternating order (the first problem by BEFORE first, the
next by AFTER first), so that Triton's and NVRTC's disk caches, which the first side to compile a kernel fills, favour
neither. A side's figure is the sum of the problems' check times from its JSON report (validation, full gradings and
flakiness repeats; not the grader's start or the device probe, which a whole-suite check pays once), divided by the
solution checks it made. Prints each problem's time per side, then both sides' seconds per solution check and the
ratio BEFORE / AFTER.

Usage:
  python3 bench/suite_check_cost.py --before MKB --before-flags "..." --after MKB --after-flags "..." \\
      --problems 'p01,p06,p12' [--out DIR]
The flags are `mkb suite check`'s; each side also gets --problems, --json and a store of its own under DIR. AFTER's
reports are kept as DIR/after-<problem>.json, so that a whole-suite check with the same flags can --resume them.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time


def check(mkb: str, flags: list[str], problem: str, json_path: str, store: str) -> dict:
    started = time.monotonic()
    command = [mkb, "suite", "check", *flags, "--problems", problem, "--store", store, "--json", json_path]
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if not os.path.isfile(json_path):
        sys.exit(f"{shlex.join(command)} wrote no report (exit {run.returncode}):\n{run.stdout[-2000:]}"
                 f"{run.stderr[-2000:]}")
    with open(json_path, encoding="utf-8") as handle:
        report = json.load(handle)
    checked = [p for p in report.get("problems", []) if not p.get("reused")]
    seconds = sum(p.get("check_s") or 0.0 for p in checked)
    validation = sum((p.get("validation") or {}).get("seconds") or 0.0 for p in checked)
    solutions = sum(1 for p in checked for s in p.get("solutions", []) if s.get("present"))
    passed = sum(1 for p in checked for s in p.get("solutions", []) if s.get("passed"))
    return {"problem": problem, "seconds": seconds, "validation_s": validation, "solutions": solutions,
            "passed": passed, "wall_s": wall, "exit": run.returncode, "clean": report.get("clean")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--before-flags", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--after-flags", required=True)
    parser.add_argument("--problems", required=True, help="comma list of --problems globs, one problem each")
    parser.add_argument("--out", default="suite-cost")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sides = {"before": (args.before, shlex.split(args.before_flags)),
             "after": (args.after, shlex.split(args.after_flags))}
    results: dict[str, list[dict]] = {"before": [], "after": []}
    for index, problem in enumerate(p for p in args.problems.split(",") if p):
        order = ["before", "after"] if index % 2 == 0 else ["after", "before"]
        for side in order:
            mkb, flags = sides[side]
            tag = problem.replace("/", "_").replace("*", "").replace("?", "")
            row = check(mkb, flags, problem, os.path.join(args.out, f"{side}-{tag}.json"),
                        os.path.join(args.out, f"{side}.mkb"))
            results[side].append(row)
            print(f"{side:6} {problem:10} {row['seconds']:7.1f} s checking ({row['validation_s']:.1f} s validation), "
                  f"{row['solutions']} solutions, {row['passed']} passed, {row['wall_s']:.1f} s wall, "
                  f"exit {row['exit']}", flush=True)
    per_solution = {}
    for side, rows in results.items():
        seconds = sum(r["seconds"] for r in rows)
        solutions = sum(r["solutions"] for r in rows)
        per_solution[side] = seconds / solutions if solutions else float("nan")
        print(f"{side}: {seconds:.1f} s for {solutions} solution checks over {len(rows)} problems, "
              f"{per_solution[side]:.2f} s per solution check (validation included)")
    print(f"ratio before/after: {per_solution['before'] / per_solution['after']:.2f}x")
    with open(os.path.join(args.out, "cost.json"), "w", encoding="utf-8") as handle:
        json.dump({"results": results, "per_solution_s": per_solution}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
