"""Grades every shipped solution of a suite once through warm grader servers, with few timing draws, and prints one
row per solution: passed, the stage it ended at, the compliance rule, the speedup. A quick check that each solution
is correct and compliant under an implementation boundary (--boundary mkb|strict), e.g. on the H200 after a change
to the grader's rules; it is not `mkb suite check` (no validation, no 20/20 flakiness, no store).

    python3 bench/solutions_sweep.py [--suite problems] [--boundary strict] [--dsls triton,cuda] [--glob 'NN_*' ...]
                                     [--servers 2] [--device cuda:0] [--timing-draws 5] [--json FILE]

With --servers N the solutions are dealt round-robin to N servers running side by side (timing is then not
meaningful; correctness and compliance are). Exit 0 when every solution passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from warm_grader import WarmServer  # noqa: E402


def shipped_solutions(suite: Path, dsls: list[str], patterns: list[str]) -> list[tuple[Path, Path, str]]:
    """(problem, solution, dsl) for each <family>/_solutions/NN_slug.<dsl>.py whose problem file exists."""
    found = []
    for family in sorted(p for p in suite.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        for problem in sorted(family.glob("*.py")):
            if not any(fnmatch.fnmatch(problem.name, pattern) for pattern in patterns):
                continue
            for dsl in dsls:
                solution = family / "_solutions" / f"{problem.stem}.{dsl}.py"
                if solution.is_file():
                    found.append((problem, solution, dsl))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=Path(__file__).resolve().parent.parent / "problems")
    parser.add_argument("--boundary", default="mkb", choices=["mkb", "strict"])
    parser.add_argument("--dsls", default="triton,cuda")
    parser.add_argument("--glob", action="append", default=[],
                        help="problem file name pattern, e.g. '3[7-9]_*' (repeatable: the union; default all)")
    parser.add_argument("--servers", type=int, default=1)
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--timing-draws", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = shipped_solutions(args.suite, [d for d in args.dsls.split(",") if d], args.glob or ["*"])
    if not work:
        print(f"solutions_sweep: no shipped solution under {args.suite} matches", file=sys.stderr)
        return 1
    settings = {"timing_draws": args.timing_draws, "warmup_draws": 2, "recheck_draws": 1,
                "timeout_s": args.timeout, "boundary": args.boundary}
    lanes = [work[i::max(1, args.servers)] for i in range(max(1, args.servers))]
    print(f"{len(work)} solutions, boundary {args.boundary}, {len(lanes)} server(s), device {args.device}",
          flush=True)

    def run_lane(lane: list[tuple[Path, Path, str]]) -> list[dict]:
        server = WarmServer(args.python, args.device)
        rows = []
        try:
            for problem, solution, dsl in lane:
                started = time.monotonic()
                verdict = server.grade(problem, solution, dsl, settings)
                row = {"solution": str(solution.relative_to(args.suite)), "dsl": dsl,
                       "passed": bool(verdict.get("passed")), "stage": verdict.get("stage", ""),
                       "rule": verdict.get("compliance_rule") or "", "boundary": verdict.get("boundary", ""),
                       "speedup": verdict.get("speedup_vs_eager"), "error": verdict.get("error") or "",
                       "seconds": round(time.monotonic() - started, 1)}
                speedup = f"{row['speedup']:.2f}x" if isinstance(row["speedup"], (int, float)) else "-"
                print(f"{'PASS' if row['passed'] else 'FAIL'} {row['solution']:<64} {row['stage']:<12} "
                      f"{row['rule'] or '-':<20} {speedup:>8} {row['seconds']:6.1f}s "
                      f"{row['error'][:120] if not row['passed'] else ''}", flush=True)
                rows.append(row)
        finally:
            server.close()
        return rows

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(lanes)) as pool:
        rows = [row for lane_rows in pool.map(run_lane, lanes) for row in lane_rows]
    failed = [row for row in rows if not row["passed"]]
    print(f"{len(rows) - len(failed)} of {len(rows)} passed under boundary {args.boundary}", flush=True)
    for row in failed:
        print(f"  FAILED {row['solution']}: {row['stage']} {row['rule']} {row['error'][:200]}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
