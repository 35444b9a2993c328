"""Grades every shipped solution of a suite under one implementation boundary, cheaply, in one grader process.

It answers one question: does each solution pass the correctness check and the boundary's rules (`--boundary
strict` asks whether it keeps all arithmetic in its DSL)? Timing is cut to the least that still completes a grading
(1 correctness draw, which carries the dependence and boundary probe, no warm-up, 1 timing draw, no re-check, no
outlier draws), so speedups printed here mean nothing. The parent imports torch and the DSL packages once; each
solution is evaluated in its own forked, sandboxed child, as mkb grades.

    python3 tests/hostile/check_solutions.py --boundary strict --device cuda:0          # problems/*/_solutions
    python3 tests/hostile/check_solutions.py --suite DIR --dsls cpusim --device cpu     # a CPU test suite

Exits 0 when every solution passed, 1 when one failed (each failure named with its rule), 2 on a bad command line.
Needs torch: run it with the grader's interpreter.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from typing import List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.realpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))
from mkbgrader.parent.settings import BOUNDARIES, parse_settings  # noqa: E402 (after its path)

QUICK = {"correctness_draws": 1, "warmup_draws": 0, "timing_draws": 1, "recheck_draws": 0, "outliers": False}


def solutions_of(suite: str, dsls: List[str]) -> List[Tuple[str, str, str]]:
    """(problem file, solution file, dsl) for <family>/_solutions/NN_slug.<dsl>.py beside <family>/NN_slug.py."""
    found = []
    for family in sorted(glob.glob(os.path.join(suite, "*", ""))):
        for dsl in dsls:
            for solution in sorted(glob.glob(os.path.join(family, "_solutions", f"*.{dsl}.py"))):
                stem = os.path.basename(solution)[: -len(f".{dsl}.py")]
                problem = os.path.join(family, stem + ".py")
                if os.path.isfile(problem):
                    found.append((problem, solution, dsl))
    return found


def descriptor(dsl: str) -> dict:
    for folder in (os.path.join(REPO, "resources", "dsls"), os.path.join(REPO, "tests", "fixtures", "dsls")):
        path = os.path.join(folder, dsl + ".json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
    return {"id": dsl, "compliance": {"adapter": dsl}}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=os.path.join(REPO, "problems"), help="suite root (default: problems/)")
    parser.add_argument("--dsls", default="triton,cuda", help="comma-separated DSLs (default triton,cuda)")
    parser.add_argument("--boundary", default="strict", choices=BOUNDARIES, help="default strict")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--timeout", type=float, default=300.0, help="bound of each evaluation in seconds")
    parser.add_argument("--only", default="", help="only solutions whose file name contains this text")
    parser.add_argument("--json", dest="json_path", help="also write every verdict here")
    options = parser.parse_args(argv)
    os.environ.setdefault("MKB_CPUSIM_PATH", os.path.join(REPO, "tests", "fixtures", "cpusim_lib"))
    from mkbgrader.parent.child_task import preload_for_server
    from mkbgrader.parent.grade import grade

    entries = [e for e in solutions_of(options.suite, options.dsls.split(",")) if options.only in e[1]]
    if not entries:
        print(f"check_solutions: no solution of {options.dsls} under {options.suite}", file=sys.stderr)
        return 2
    preload_for_server()
    settings = parse_settings({**QUICK, "boundary": options.boundary, "timeout_s": options.timeout})
    started = time.monotonic()
    failures, report = [], []
    print(f"{len(entries)} solutions under boundary {options.boundary} on {options.device}", flush=True)
    for problem, solution, dsl in entries:
        request = {"problem": problem, "kernel": solution, "dsl": dsl, "dsl_descriptor": descriptor(dsl),
                   "device": options.device}
        verdict = grade(request, settings)
        name = os.path.relpath(solution, options.suite)
        ok = bool(verdict.get("passed")) and verdict.get("boundary") == options.boundary
        rule = verdict.get("compliance_rule") or ""
        print(f"{'ok  ' if ok else 'FAIL'} {name:70} {verdict.get('eval_seconds', 0):6.1f} s"
              + ("" if ok else f"  [{rule}] {verdict.get('error') or verdict.get('mismatch')}"), flush=True)
        if not ok:
            failures.append(name)
        report.append({"solution": name, "verdict": verdict})
    print(f"\n{len(entries) - len(failures)} of {len(entries)} passed under {options.boundary} "
          f"({(time.monotonic() - started) / 60:.1f} min)", flush=True)
    if options.json_path:
        with open(options.json_path, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
