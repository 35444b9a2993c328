#!/usr/bin/env python3
"""Where a suite check's device time went, from its JSON report alone (no GPU needed): validation, each solution's
own evaluation by stage, and the rest of each problem's check time (the evaluations that run shared draws, starting
and stopping children). The timing stage is split into the timed calls themselves (timing draws x (the solution's
median + eager's median)) and what the grader spent around them (drawing each call's inputs, synchronising,
sampling the clock). Every figure comes from one check, so none has an interval.

    python3 bench/suite_check_stages.py REPORT.json [--timing-draws 50] [--top 8]

--timing-draws must be the check's own (the grader's default, settings.py, unless the check overrode it).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report")
    parser.add_argument("--timing-draws", type=int, default=50)
    parser.add_argument("--top", type=int, default=8, help="problems listed by the grader's own timing cost")
    args = parser.parse_args()
    try:
        with open(args.report, encoding="utf-8") as handle:
            report = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"{args.report}: cannot read a suite report: {error}", file=sys.stderr)
        return 1
    problems = report.get("problems") if isinstance(report, dict) else None
    if not isinstance(problems, list) or not all(isinstance(p, dict) for p in problems):
        print(f"{args.report}: not a suite report (`mkb suite check --json`): no \"problems\" list of objects",
              file=sys.stderr)
        return 1

    stages: dict[str, float] = defaultdict(float)
    total = validation = own = calls = 0.0
    solutions = 0
    per_problem: list[tuple[float, float, str, int]] = []
    for problem in problems:
        checked = problem.get("check_s")
        if checked is None:
            continue
        total += checked
        validation += (problem.get("validation") or {}).get("seconds") or 0.0
        problem_timing = problem_calls = 0.0
        timed = 0
        for solution in problem.get("solutions", []):
            verdict = solution.get("verdict") or {}
            if not solution.get("present") or not verdict:
                continue
            solutions += 1
            own += verdict.get("eval_seconds") or 0.0
            stage_s = verdict.get("stage_s") or {}
            for stage, seconds in stage_s.items():
                stages[stage] += seconds
            if "timing" in stage_s:
                kernel, eager = verdict.get("kernel_median_ms") or 0.0, verdict.get("eager_median_ms") or 0.0
                spent = args.timing_draws * (kernel + eager) / 1e3
                calls += spent
                problem_calls += spent
                problem_timing += stage_s["timing"]
                timed += 1
        per_problem.append((problem_timing - problem_calls, problem_timing, problem.get("name", "?"), timed))

    if not solutions:
        print(f"{args.report}: no checked solution with a verdict", file=sys.stderr)
        return 1
    rest = total - validation - own
    print(f"{args.report}: {len(per_problem)} problems, {solutions} solution checks, {total:.0f} s of check time "
          f"({total / solutions:.1f} s per solution check, validation included)")
    print(f"  validation                     {validation:7.0f} s")
    print(f"  solutions' own evaluations     {own:7.0f} s")
    for stage, seconds in sorted(stages.items(), key=lambda item: -item[1]):
        line = f"    {stage:28} {seconds:7.0f} s"
        if stage == "timing":
            line += (f"  (the timed calls {calls:.0f} s at {args.timing_draws} draws x (solution + eager median); "
                     f"the grader around them {seconds - calls:.0f} s)")
        print(line)
    print(f"  the rest (shared draws' evaluations, children starting and stopping) {rest:.0f} s")
    if not stages:
        print("  (this report's verdicts hold no stage_s: it predates the per-stage clock)")
        return 0
    print("problems whose timing stage costs the grader most (timing s - timed calls s):")
    for overhead, timing, name, count in sorted(per_problem, reverse=True)[:args.top]:
        print(f"  {name:48} {overhead:6.1f} of {timing:6.1f} s over {count} timed solutions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
