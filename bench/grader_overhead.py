"""Per-evaluation cost of our grader (one warm server, a forked child per evaluation) against a cold Python process
per evaluation (MetaKernelBench's design), on the same kernel, in one run. GPU host; prints a ratio.

    python3 bench/grader_overhead.py [--problem FILE --kernel FILE --dsl D] [--evaluations 10] [--python PY]

Both sides run the same evaluation (one correctness draw, one timing draw, no outliers), so the difference is the
overhead: interpreter start, torch import and CUDA initialisation. One throwaway evaluation first fills Triton's and
mkb_cuda's disk caches for both sides alike.
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
SETTINGS = {"correctness_draws": 1, "warmup_draws": 0, "timing_draws": 1, "recheck_draws": 0, "outliers": False}


def environment() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = GRADER + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def descriptor(dsl: str) -> dict:
    for folder in (os.path.join(REPO, "resources", "dsls"), os.path.join(REPO, "tests", "fixtures", "dsls")):
        path = os.path.join(folder, f"{dsl}.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
    raise SystemExit(f"no DSL descriptor {dsl}.json in resources/dsls or tests/fixtures/dsls")


def warm_server(args: argparse.Namespace) -> list[float]:
    """Seconds per evaluation through one `mkbgrader serve` process (what mkb uses)."""
    server = subprocess.Popen([args.python, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=environment())
    assert server.stdin and server.stdout
    ready = json.loads(server.stdout.readline())
    assert ready.get("type") == "ready", ready
    request = {"type": "grade", "problem": args.problem, "kernel": args.kernel, "dsl": args.dsl,
               "dsl_descriptor": descriptor(args.dsl), "device": args.device, "settings": SETTINGS}
    seconds = []
    for index in range(args.evaluations + 1):
        started = time.perf_counter()
        server.stdin.write(json.dumps(dict(request, id=index)) + "\n")
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("type") == "verdict":
                break
        if not reply["verdict"].get("passed"):
            raise SystemExit(f"the kernel failed in the warm server: {reply['verdict'].get('error')}")
        if index > 0:  # the first one also warms the disk caches
            seconds.append(time.perf_counter() - started)
    server.stdin.write(json.dumps({"type": "shutdown"}) + "\n")
    server.stdin.flush()
    server.wait(timeout=60)
    return seconds


def cold_processes(args: argparse.Namespace) -> list[float]:
    """Seconds per evaluation when each one starts a fresh interpreter that imports torch and grades."""
    command = [args.python, "-m", "mkbgrader", "grade", "--problem", args.problem, "--kernel", args.kernel,
               "--dsl", args.dsl, "--device", args.device, "--settings", json.dumps(SETTINGS), "--json"]
    seconds = []
    for _ in range(args.evaluations):
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=environment())
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"the kernel failed in a cold process: {done.stdout[-400:]} {done.stderr[-400:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", default=DEFAULT_PROBLEM)
    parser.add_argument("--kernel", default=DEFAULT_KERNEL)
    parser.add_argument("--dsl", default="triton")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--evaluations", type=int, default=10)
    parser.add_argument("--python", default=os.environ.get("MKB_PYTHON", sys.executable))
    args = parser.parse_args()
    args.problem, args.kernel = os.path.abspath(args.problem), os.path.abspath(args.kernel)
    warm = warm_server(args)
    cold = cold_processes(args)
    warm_median, cold_median = statistics.median(warm), statistics.median(cold)
    print(f"kernel {os.path.relpath(args.kernel, REPO)} ({args.dsl}) on {args.device}, {args.evaluations} evaluations each")
    print(f"warm server, child per evaluation : median {warm_median * 1000:8.1f} ms  (min {min(warm) * 1000:.1f}, "
          f"max {max(warm) * 1000:.1f})")
    print(f"cold process per evaluation       : median {cold_median * 1000:8.1f} ms  (min {min(cold) * 1000:.1f}, "
          f"max {max(cold) * 1000:.1f})")
    print(f"ratio cold / warm per evaluation  : {cold_median / warm_median:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
