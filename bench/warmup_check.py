#!/usr/bin/env python3
"""Whether a pre-started grader child's warm-up launches run: for each DSL, its adapter's preparation and the
grader's own tiny first-launch kernel (child/warmup.py), called here without the warm-up's best-effort guard, so a
failure prints its error instead of passing silently. For a GPU host; it runs only the grader's own kernels.

    python3 bench/warmup_check.py [DSL ...]    (default: triton numba pallas)
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))


def main() -> int:
    dsls = sys.argv[1:] or ["triton", "numba", "pallas"]
    from mkbgrader.child import warmup
    from mkbgrader.child.dsls import adapter_for

    failed = 0
    for dsl in dsls:
        with open(os.path.join(REPO, "resources", "dsls", dsl + ".json"), encoding="utf-8") as handle:
            descriptor = json.load(handle)
        started = time.perf_counter()
        try:
            problem = adapter_for(dsl, descriptor).prepare()
            if problem is not None:
                raise RuntimeError(f"the adapter is not ready: {problem}")
            warmup._FIRST_LAUNCHES[dsl]("cuda:0")
            first = time.perf_counter() - started
            again = time.perf_counter()
            warmup._FIRST_LAUNCHES[dsl]("cuda:0")
            print(f"{dsl}: warm-up launch ran, first {first:.2f} s, again {time.perf_counter() - again:.3f} s")
        except Exception:
            failed += 1
            print(f"{dsl}: warm-up launch FAILED after {time.perf_counter() - started:.2f} s")
            traceback.print_exc(limit=4)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
