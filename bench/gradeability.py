"""Gradeability probe: grades a generated "eager + Triton copy" kernel against every problem of a suite folder.

Proves that the grader can evaluate each problem end to end (inputs, float64 anchors, correctness draws,
compliance) without running out of memory or breaking its CUDA context, for suites that ship no solutions, such as
a MetaKernelBench checkout's problems/. The generated kernel computes the answer with a copy of the problem's own
eager reference and routes its first returned tensor through a Triton copy kernel, so the expected verdict is a
clean grading failure by a compliance rule (no infrastructure error), never a crash.

Usage: python3 bench/gradeability.py --mkb build/app/mkb --suite DIR [--out DIR] [--timeout S] [--glob PATTERN]
       python3 bench/gradeability.py --server --suite DIR [--timing-draws N] ...

--server grades every probe through one warm grader server (python -m mkbgrader serve, the same protocol mkb uses)
instead of one cold `mkb grade` process per problem, and with few timing draws (default 5): the question here is
whether each problem can be graded, not how fast the probe is, so the cold start and long timing are not repeated.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from warm_grader import WarmServer  # noqa: E402

COPY_KERNEL = '''

# ---- added by bench/gradeability.py: the eager answer, with its first tensor routed through a Triton copy ----
import torch as _torch
import triton  # plain names: the static check looks for "@triton.jit"
import triton.language as tl


@triton.jit
def _copy_bytes(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def _through_triton(tensor):
    flat = tensor.contiguous().view(-1).view(_torch.uint8)
    out = _torch.empty_like(flat)
    if flat.numel():
        _copy_bytes[(triton.cdiv(flat.numel(), 1024),)](flat, out, flat.numel(), BLOCK=1024)
    return out.view(tensor.dtype).view(tensor.shape)


def solve(*inputs):
    result = _eager_reference(*inputs)
    if isinstance(result, _torch.Tensor):
        return _through_triton(result)
    if isinstance(result, (list, tuple)):
        items = list(result)
        for i, item in enumerate(items):
            if isinstance(item, _torch.Tensor):
                items[i] = _through_triton(item)
                break
        return type(result)(items) if isinstance(result, tuple) else items
    return result
'''


def probe_kernel(problem_source: str) -> str:
    """The problem's own code with reference and make_inputs renamed (the grader forbids calling the problem's)."""
    source = re.sub(r"^def reference\(", "def _eager_reference(", problem_source, flags=re.M)
    source = re.sub(r"^def make_inputs\(", "def _unused_make_inputs(", source, flags=re.M)
    source = re.sub(r"\breference\(", "_eager_reference(", source)
    return source + COPY_KERNEL


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mkb", help="the mkb binary (one cold `mkb grade` per problem)")
    parser.add_argument("--server", action="store_true", help="grade through one warm grader server instead")
    parser.add_argument("--python", default=sys.executable, help="the grader's interpreter (--server)")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--timing-draws", type=int, default=5, help="timing draws per grading (--server)")
    parser.add_argument("--suite", required=True, type=Path)
    parser.add_argument("--out", type=Path, default=Path("gradeability"))
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--glob", default="*")
    args = parser.parse_args()
    if not args.server and not args.mkb:
        parser.error("give --mkb MKB, or --server")
    server = WarmServer(args.python, args.device) if args.server else None
    settings = {"timing_draws": args.timing_draws, "warmup_draws": 2, "recheck_draws": 1, "timeout_s": args.timeout}
    args.out.mkdir(parents=True, exist_ok=True)
    problems = sorted(p for p in args.suite.rglob("*.py")
                      if not any(part.startswith(("_", ".")) for part in p.relative_to(args.suite).parts)
                      and fnmatch.fnmatch(p.stem, args.glob))
    rows = []
    print(f"{'problem':<72} {'exit':>4} {'stage':<12} {'correct':<7} {'rule':<16} {'infra':<5} {'s':>6}")
    for problem in problems:
        kernel = args.out / f"{problem.stem}.kernel.py"
        kernel.write_text(probe_kernel(problem.read_text()))
        started = time.monotonic()
        name = problem.relative_to(args.suite).with_suffix("").as_posix()  # "family/NN_slug"
        if server:
            verdict = server.grade(problem, kernel, "triton", settings)
            exit_code = 0 if verdict.get("passed") else 1
        else:
            done = subprocess.run([args.mkb, "grade", str(kernel), "--suite", str(args.suite.resolve()), "--problem",
                                   name, "--dsl", "triton", "--json", "--timeout", str(args.timeout)],
                                  capture_output=True, text=True, timeout=args.timeout + 120)
            exit_code = done.returncode
            try:
                verdict = json.loads(done.stdout)
            except ValueError:
                verdict = {"stage": "no verdict", "error": (done.stderr.strip().splitlines() or [""])[-1]}
        seconds = time.monotonic() - started
        row = {"problem": str(problem.relative_to(args.suite)), "exit": exit_code,
               "stage": verdict.get("stage", ""), "correct": verdict.get("correct"),
               "rule": verdict.get("compliance_rule", ""), "infrastructure": verdict.get("infrastructure_error"),
               "error": verdict.get("error", ""), "seconds": round(seconds, 1)}
        rows.append(row)
        print(f"{row['problem']:<72} {row['exit']:>4} {row['stage']:<12} {str(row['correct']):<7} "
              f"{row['rule'] or '-':<16} {str(row['infrastructure']):<5} {seconds:6.1f}", flush=True)
    if server:
        server.close()
    (args.out / "gradeability.json").write_text(json.dumps(rows, indent=1))
    infra = [r for r in rows if r["infrastructure"] or r["exit"] in (3, 5) or r["stage"] == "no verdict"]
    print(f"{len(rows)} problems graded; {len(rows) - len(infra)} with a clean verdict, {len(infra)} with an "
          f"infrastructure error or no verdict")
    for r in infra:
        print(f"  ! {r['problem']}: {r['error']}")
    return 1 if infra else 0


if __name__ == "__main__":
    sys.exit(main())
