"""Grades candidate solutions of one problem beside its shipped solution, in one run, and can ship the best.

    python3 bench/candidates/grade_candidates.py --problem pNN --dsl triton bench/candidates/NN/v*.triton.py [--ship]

Each file (the shipped solution first, as the baseline measured in the same run) is graded by `mkb grade --json`
(the full grading: correctness draws, runtime compliance, paired timing against eager PyTorch). Prints one line per
file: passed or the failing stage, the speedup over eager with its 95% CI, and the grader's message on failure.
With --ship, the best passing candidate replaces the shipped solution when its CI's lower end is above both 1 and the
shipped solution's speedup; otherwise nothing is written. Exits 0 when every file was graded (passed or not), 1 when
a grading could not be made (mkb failed), 2 on a bad command line. Standard library only.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shipped_solution(suite: str, problem: str, dsl: str) -> Optional[str]:
    """problems/<family>/_solutions/NN_slug.<dsl>.py for a problem given as pNN, NN or family/NN_slug."""
    number = problem.split("/")[-1].lstrip("p").split("_")[0]
    if not number.isdigit():
        return None
    found = sorted(glob.glob(os.path.join(suite, "*", "_solutions", f"{int(number):02d}_*.{dsl}.py")))
    return found[0] if len(found) == 1 else None


def grade(mkb: str, path: str, args: argparse.Namespace) -> Optional[dict]:
    command = [mkb, "grade", path, "--problem", args.problem, "--dsl", args.dsl, "--device", args.device,
               "--timeout", str(args.timeout), "--json"]
    if args.suite_given:
        command += ["--suite", args.suite]
    for folder in args.dsl_dir:
        command += ["--dsl-dir", folder]
    completed = subprocess.run(command, capture_output=True, text=True)
    try:
        return json.loads(completed.stdout)
    except json.JSONDecodeError:
        print(f"  {path}: mkb grade exited {completed.returncode} without a verdict: "
              f"{(completed.stderr.strip().splitlines() or ['no message'])[-1]}")
        return None


def shown(path: str) -> str:
    """The path relative to the repository when it lies in it."""
    relative = os.path.relpath(os.path.abspath(path), REPO)
    return path if relative.startswith("..") else relative


def describe(verdict: dict) -> str:
    if verdict.get("passed"):
        low, high = verdict.get("speedup_ci_low"), verdict.get("speedup_ci_high")
        interval = f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else " [no CI]"
        return f"pass {verdict['speedup_vs_eager']:.2f}x{interval}"
    why = verdict.get("error") or verdict.get("mismatch") or ""
    return f"FAIL ({verdict.get('stage', '?')}): {why.splitlines()[0][:300] if why else 'no message'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidates", nargs="+", help="candidate solution files")
    parser.add_argument("--problem", required=True, help="the problem, as mkb grade takes it (p21, 21, name)")
    parser.add_argument("--dsl", required=True, help="the candidates' DSL id")
    parser.add_argument("--mkb", default=os.environ.get("MKB_CLI", os.path.join(REPO, "build/gpu-suite/app/mkb")))
    parser.add_argument("--suite", default=None, help="suite root (default: the shipped problems)")
    parser.add_argument("--dsl-dir", action="append", default=[], help="extra DSL descriptor folder (repeatable)")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--ship", action="store_true", help="copy the best candidate over the shipped solution")
    args = parser.parse_args()
    args.suite_given = args.suite is not None
    args.suite = args.suite or os.path.join(REPO, "problems")
    shipped = shipped_solution(args.suite, args.problem, args.dsl)
    if shipped is None:
        print(f"no single shipped {args.dsl} solution of {args.problem} under {args.suite}", file=sys.stderr)
        return 2
    missing = [path for path in args.candidates if not os.path.isfile(path)]
    if missing:
        print(f"no such candidate file: {missing[0]}", file=sys.stderr)
        return 2

    baseline = grade(args.mkb, shipped, args)
    print(f"shipped   {shown(shipped)}: {describe(baseline) if baseline else 'not graded'}")
    if baseline is None:
        return 1
    best: Optional[tuple[str, dict]] = None
    graded_all = True
    for path in args.candidates:
        verdict = grade(args.mkb, path, args)
        if verdict is None:
            graded_all = False
            continue
        print(f"candidate {path}: {describe(verdict)}")
        if verdict.get("passed") and (best is None or verdict["speedup_vs_eager"] > best[1]["speedup_vs_eager"]):
            best = (path, verdict)
    if args.ship:
        floor = max(1.0, baseline["speedup_vs_eager"] if baseline.get("passed") else 0.0)
        if best is None:
            print("ship: no candidate passed; the shipped solution stays")
        else:
            low = best[1].get("speedup_ci_low")
            low = best[1]["speedup_vs_eager"] if low is None else low
            if low > floor:
                shutil.copyfile(best[0], shipped)
                print(f"ship: {best[0]} is now {shown(shipped)} (CI low {low:.2f} > {floor:.2f})")
            else:
                print(f"ship: the best candidate's CI low {low:.2f} does not clear {floor:.2f}; the shipped "
                      "solution stays")
    return 0 if graded_all else 1


if __name__ == "__main__":
    sys.exit(main())
