#!/usr/bin/env python3
"""Where one grading's time goes: the grader child's evaluation of a shipped solution, run in this process (not
forked) under cProfile with the suite check's settings, printed as seconds per grading stage and the functions with
the most cumulative time. For diagnosis on a GPU host; our own solutions only (a candidate must never run in a process
of ours).

    python3 bench/grading_profile.py NN DSL [--correctness-draws 100] [--top 25] [--boundary mkb]
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import io
import json
import os
import pstats
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("number")
    parser.add_argument("dsl")
    parser.add_argument("--correctness-draws", type=int, default=100)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--boundary", default="mkb")
    args = parser.parse_args()
    kernels = sorted(glob.glob(os.path.join(REPO, "problems", "*", "_solutions", f"{args.number}_*.{args.dsl}.py")))
    if not kernels:
        sys.exit(f"no {args.dsl} solution for problem {args.number}")
    kernel = kernels[0]
    stem = os.path.basename(kernel)[: -len(f".{args.dsl}.py")]
    problem = os.path.join(os.path.dirname(os.path.dirname(kernel)), stem + ".py")
    with open(os.path.join(REPO, "resources", "dsls", args.dsl + ".json"), encoding="utf-8") as handle:
        descriptor = json.load(handle)

    started = time.perf_counter()
    from mkbgrader.parent.child_task import preload_for_server

    preload_for_server()  # what the server imports before it forks a child (torch._dynamo, the DSL packages)
    from mkbgrader.child.evaluate import evaluate  # torch and the child's imports, timed apart
    from mkbgrader.parent.sandbox import freeze_heap
    from mkbgrader.parent.settings import parse_settings

    freeze_heap()  # as the server's heap is when it forks: each draw's collection walks only what grading made

    imported = time.perf_counter() - started
    settings = parse_settings({"correctness_draws": args.correctness_draws, "timeout_s": 2400.0,
                               "boundary": args.boundary})
    request = {"problem": problem, "kernel": kernel, "dsl": args.dsl, "dsl_descriptor": descriptor,
               "device": "cuda:0"}
    marks: list[tuple[str, float]] = []
    messages: list[dict] = []

    def send(message: dict) -> None:
        messages.append(message)
        if message.get("t") == "stage":
            marks.append((str(message.get("stage")), time.perf_counter()))

    profile = cProfile.Profile()
    began = time.perf_counter()
    profile.enable()
    evaluate(request, settings, send)
    profile.disable()
    ended = time.perf_counter()
    errors = [m for m in messages if m.get("t") == "error"]
    print(f"{os.path.basename(kernel)}: {ended - began:.2f} s evaluating ({imported:.2f} s importing the child's "
          f"modules first){'; ERROR ' + str(errors[0])[:300] if errors else ''}")
    ends = [when for _, when in marks[1:]] + [ended]
    print("  stages: " + ", ".join(f"{stage} {end - when:.2f} s" for (stage, when), end in zip(marks, ends)))
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:5000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
