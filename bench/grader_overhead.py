"""Per-evaluation cost of our grader, three ways side by side on the same kernel in one run: a cold Python process
per evaluation (MetaKernelBench's design), one warm server that forks a fresh child per request (pre-starting off,
as before), and the warm server whose next child is forked ahead of time and waits with its CUDA context and DSL
ready (the default). Prints each median and the ratios, and whether the goal (<= 0.3 s, >= 30x faster than cold)
is met.

    python3 bench/grader_overhead.py [--problem FILE --kernel FILE --dsl D] [--device cuda:0|cpu]
                                     [--evaluations 10] [--cold-evaluations N] [--pause 1.5] [--python PY]

Every side runs the same evaluation (one correctness draw, one timing draw, no outliers), so what differs is the
overhead: interpreter start, torch import, fork, CUDA context, the DSL's first launch. One throwaway evaluation
first fills Triton's and mkb_cuda's disk caches for all sides alike. Between requests to a server the bench pauses
`--pause` seconds, as an agent's turn would, and does not count the pause: the pre-started child is forked after a
verdict, so it warms up in that gap and never beside a candidate being timed. The pre-started side is also run
back to back (no pause), which is what a queue of gradings gets.
On a CPU host: --device cpu --dsl cpusim (the defaults then pick the cpusim fixtures).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
GRADER = os.path.join(REPO, "core", "grader")
DEFAULT_PROBLEM = os.path.join(REPO, "tests", "hostile", "problem", "mlp_norm", "01_silu_mul.py")
DEFAULT_KERNEL = os.path.join(REPO, "tests", "hostile", "good", "good_triton.py")
CPU_PROBLEM = os.path.join(REPO, "tests", "fixtures", "problems", "basic", "01_vector_add.py")
CPU_KERNEL = os.path.join(REPO, "tests", "fixtures", "solutions", "01_vector_add.cpusim.py")
GOAL_SECONDS, GOAL_RATIO = 0.3, 30.0
SETTINGS = {"correctness_draws": 1, "warmup_draws": 0, "timing_draws": 1, "recheck_draws": 0, "outliers": False}


def environment(prestart: bool = True) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = GRADER + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env["MKB_GRADER_PRESTART"] = "1" if prestart else "0"
    return env


def descriptor(dsl: str) -> dict:
    for folder in (os.path.join(REPO, "resources", "dsls"), os.path.join(REPO, "tests", "fixtures", "dsls")):
        path = os.path.join(folder, f"{dsl}.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
    raise SystemExit(f"no DSL descriptor {dsl}.json in resources/dsls or tests/fixtures/dsls")


def warm_server(args: argparse.Namespace, prestart: bool, pause_s: float) -> tuple[list[float], int, dict]:
    """Seconds per evaluation through one `mkbgrader serve` process (what mkb uses), how many of the counted
    evaluations ran in a pre-started child, and the seconds each counted evaluation spent per stage (from the
    server's stage events as they arrive: a stage lasts until the next one starts, the last until the verdict;
    "request" is the time from sending the request to its first stage)."""
    server = subprocess.Popen([args.python, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=environment(prestart))
    assert server.stdin and server.stdout
    ready = json.loads(server.stdout.readline())
    assert ready.get("type") == "ready", ready
    request = {"type": "grade", "problem": args.problem, "kernel": args.kernel, "dsl": args.dsl,
               "dsl_descriptor": descriptor(args.dsl), "device": args.device, "settings": SETTINGS}
    seconds, prestarted, stages = [], 0, {}
    for index in range(args.evaluations + 1):
        if index > 0:
            time.sleep(pause_s)
        started = time.perf_counter()
        server.stdin.write(json.dumps(dict(request, id=index)) + "\n")
        server.stdin.flush()
        marks = [("request", started)]
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("type") == "stage":
                marks.append((str(reply.get("stage")), time.perf_counter()))
            if reply.get("type") == "verdict":
                break
        if not reply["verdict"].get("passed"):
            raise SystemExit(f"the kernel failed in the warm server: {reply['verdict'].get('error')}")
        took = time.perf_counter() - started
        print(f"  {'pre-started' if prestart else 'forked'} server{'' if pause_s else ', back to back'}, evaluation "
              f"{index}{' (fills the caches, not counted)' if index == 0 else ''}: {took * 1000:.1f} ms"
              f"{' [pre-started child]' if reply.get('prestarted') else ''}", flush=True)
        if index > 0:  # the first one also warms the disk caches
            seconds.append(took)
            prestarted += bool(reply.get("prestarted"))
            ends = [when for _, when in marks[1:]] + [started + took]
            for (stage, when), end in zip(marks, ends):
                stages.setdefault(stage, []).append(end - when)
    server.stdin.write(json.dumps({"type": "shutdown"}) + "\n")
    server.stdin.flush()
    server.wait(timeout=60)
    return seconds, prestarted, stages


def stage_line(stages: dict) -> str:
    """Median milliseconds per stage, in the order the stages ran, with the medians' sum."""
    medians = {stage: statistics.median(values) * 1000 for stage, values in stages.items()}
    parts = ", ".join(f"{stage} {value:.1f}" for stage, value in medians.items())
    return f"{parts} (sum of medians {sum(medians.values()):.1f} ms)"


def cold_processes(args: argparse.Namespace) -> list[float]:
    """Seconds per evaluation when each one starts a fresh interpreter that imports torch and grades."""
    command = [args.python, "-m", "mkbgrader", "grade", "--problem", args.problem, "--kernel", args.kernel,
               "--dsl", args.dsl, "--device", args.device, "--settings", json.dumps(SETTINGS), "--json"]
    seconds = []
    for _ in range(args.cold_evaluations):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=environment())
        seconds.append(time.perf_counter() - started)
        print(f"  cold process {len(seconds)}: {seconds[-1] * 1000:.1f} ms", flush=True)
        if done.returncode != 0:
            raise SystemExit(f"the kernel failed in a cold process: {done.stdout[-400:]} {done.stderr[-400:]}")
    return seconds


def line(label: str, values: list[float], note: str = "") -> str:
    median = statistics.median(values)
    return (f"{label:<44}: median {median * 1000:8.1f} ms  (min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f}, "
            f"n {len(values)}){note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem")
    parser.add_argument("--kernel")
    parser.add_argument("--dsl", default="triton")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--evaluations", type=int, default=10, help="counted evaluations per server side")
    parser.add_argument("--cold-evaluations", type=int, help="cold processes to time (default: --evaluations)")
    parser.add_argument("--pause", type=float, default=1.5, help="seconds between requests to a server, not counted")
    parser.add_argument("--python", default=os.environ.get("MKB_PYTHON", sys.executable))
    args = parser.parse_args()
    cpu = args.device == "cpu"
    args.problem = os.path.abspath(args.problem or (CPU_PROBLEM if cpu else DEFAULT_PROBLEM))
    args.kernel = os.path.abspath(args.kernel or (CPU_KERNEL if cpu else DEFAULT_KERNEL))
    args.cold_evaluations = args.cold_evaluations or args.evaluations
    if args.evaluations < 1 or args.cold_evaluations < 1 or args.pause < 0:
        raise SystemExit("--evaluations and --cold-evaluations must be at least 1, --pause not negative")
    # Each side prints its evaluations as they finish, so a bench cut short still shows what it measured.
    before, _, before_stages = warm_server(args, prestart=False, pause_s=args.pause)
    warm, warm_used, warm_stages = warm_server(args, prestart=True, pause_s=args.pause)
    queued, queued_used, _ = warm_server(args, prestart=True, pause_s=0.0)
    cold = cold_processes(args)
    cold_median, before_median, warm_median = statistics.median(cold), statistics.median(before), statistics.median(warm)
    print(f"kernel {os.path.relpath(args.kernel, REPO)} ({args.dsl}) on {args.device}; pause {args.pause:g} s between "
          "server requests (not counted)")
    print(line("cold process per evaluation", cold))
    print(line("warm server, child forked per request", before))
    print(line("warm server, pre-started child", warm, f"  [{warm_used}/{len(warm)} pre-started]"))
    print(line("warm server, pre-started, back to back", queued, f"  [{queued_used}/{len(queued)} pre-started]"))
    print(f"stages, forked per request (median ms)   : {stage_line(before_stages)}")
    print(f"stages, pre-started (median ms)          : {stage_line(warm_stages)}")
    print(f"ratio cold / forked per request              : {cold_median / before_median:.2f}x")
    print(f"ratio cold / pre-started                     : {cold_median / warm_median:.2f}x")
    print(f"ratio forked per request / pre-started       : {before_median / warm_median:.2f}x")
    met = warm_median <= GOAL_SECONDS and cold_median / warm_median >= GOAL_RATIO
    print(f"goal (pre-started <= {GOAL_SECONDS:g} s and >= {GOAL_RATIO:g}x faster than cold): "
          f"{'met' if met else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
