"""Reproducibility of a speedup: one kernel graded N times through `mkb grade --json` (default settings), in one run.
GPU host; prints every speedup and max/min.

    python3 bench/grade_repro.py --mkb build/app/mkb --problem P --kernel FILE --dsl D [--times 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mkb", required=True)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--dsl", required=True)
    parser.add_argument("--times", type=int, default=5)
    parser.add_argument("--suite", action="append", default=[])
    args = parser.parse_args()
    speedups, kernel_ms, eager_ms = [], [], []
    for index in range(args.times):
        command = [args.mkb, "grade", args.kernel, "--problem", args.problem, "--dsl", args.dsl, "--json"]
        for suite in args.suite:
            command += ["--suite", suite]
        done = subprocess.run(command, capture_output=True, text=True)
        try:
            verdict = json.loads(done.stdout)
        except ValueError:
            print(f"grading {index + 1} printed no verdict (exit {done.returncode}): {done.stderr[-300:]}")
            return 1
        if not verdict.get("passed"):
            print(f"grading {index + 1} failed: {verdict.get('error')}")
            return 1
        speedups.append(verdict["speedup_vs_eager"])
        kernel_ms.append(verdict["kernel_median_ms"])
        eager_ms.append(verdict["eager_median_ms"])
        print(f"grading {index + 1}: kernel {kernel_ms[-1]:.4f} ms, eager {eager_ms[-1]:.4f} ms, "
              f"speedup {speedups[-1]:.3f}x")
    print(f"{os.path.relpath(args.kernel, REPO)} ({args.dsl}), {args.times} gradings: speedup min {min(speedups):.3f}x, "
          f"max {max(speedups):.3f}x, max/min {max(speedups) / min(speedups):.3f}")
    print(f"kernel median ms max/min {max(kernel_ms) / min(kernel_ms):.3f}; eager max/min "
          f"{max(eager_ms) / min(eager_ms):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
