"""GPU check of the numba and pallas DSLs (issue 34): interop, timing by the grader's clock, and gradings.

Modes (each prints one line per finding; run on the GPU host with python3 from the repository root):
  probe              numba-cuda and Pallas each read torch tensors and write one (numba through
                     __cuda_array_interface__, Pallas through DLPack); the grader's Clock times a slow kernel on each
                     (JAX runs on its own stream: the device-wide sync must cover it); JAX's preallocation with and
                     without XLA_PYTHON_CLIENT_PREALLOCATE=false.
  grade DSL GLOB...  grades problems/*/_solutions/<NN>_*.<DSL>.py for the given problem numbers through mkbgrader.
  slowdown DSL N     grades one solution plain and as a slowed copy (slowdown 1.0): the slowed median must be ~2x.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "core", "grader"))
SETTINGS = {"correctness_draws": 2, "warmup_draws": 2, "timing_draws": 7, "recheck_draws": 1, "outlier_draws": 1,
            "timeout_s": 150.0}


def say(*parts: object) -> None:
    print(*parts, flush=True)


# ----- probe ----------------------------------------------------------------------------------------------------------
def probe_numba() -> None:
    import torch
    from mkbgrader.child.dsls.numba import numpy_compatibility

    say("numba: numpy aliases restored:", numpy_compatibility())
    import numba
    from numba import cuda

    say("numba", numba.__version__, "numba.cuda from", os.path.dirname(cuda.__file__))

    @cuda.jit
    def axpy(x, y, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = 2.0 * x[i] + y[i]

    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    axpy[(x.numel() + 255) // 256, 256](x, y, out)
    torch.cuda.synchronize()
    say("numba interop: max error", float((out - (2 * x + y)).abs().max()))

    @cuda.jit
    def spin(out, rounds):
        i = cuda.grid(1)
        v = out[i]
        for _ in range(rounds):
            v = v * 0.999999 + 1e-7
        out[i] = v

    buffer = torch.ones(132 * 256, device="cuda")
    spin[132, 256](buffer, 10)  # compile
    clock_check("numba", lambda: spin[132, 256](buffer, 2_000_000), None)


def probe_pallas() -> None:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import torch

    free_before = torch.cuda.mem_get_info()[0]
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    say("jax", jax.__version__, "devices", jax.devices())

    def add_kernel(x_ref, y_ref, o_ref):
        o_ref[...] = 2.0 * x_ref[...] + y_ref[...]

    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    spec = pl.BlockSpec((1024,), lambda i: (i,))
    call = jax.jit(pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct((1 << 20,), jnp.float32),
                                  grid=((1 << 20) // 1024,), in_specs=[spec, spec], out_specs=spec))
    out = torch.from_dlpack(call(jax.dlpack.from_dlpack(x), jax.dlpack.from_dlpack(y)))
    torch.cuda.synchronize()
    say("pallas interop: max error", float((out - (2 * x + y)).abs().max()))
    say("pallas: GPU memory taken by JAX with preallocation off: %.2f GiB" %
        ((free_before - torch.cuda.mem_get_info()[0]) / 2**30))
    say("pallas: jax stream vs torch stream:", torch.cuda.current_stream().cuda_stream)

    def spin_kernel(x_ref, o_ref):
        def body(_, v):
            return v * 0.999999 + 1e-7
        o_ref[...] = jax.lax.fori_loop(0, 2_000_000, body, x_ref[...])

    ones = jax.dlpack.from_dlpack(torch.ones(128 * 128, device="cuda"))
    spec = pl.BlockSpec((128,), lambda i: (i,))
    slow = jax.jit(pl.pallas_call(spin_kernel, out_shape=jax.ShapeDtypeStruct((128 * 128,), jnp.float32),
                                  grid=(128,), in_specs=[spec], out_specs=spec))
    slow(ones).block_until_ready()  # compile
    clock_check("pallas", lambda: slow(ones), lambda r: r.block_until_ready())


def clock_check(name: str, launch, block) -> None:
    """The grader's Clock (device-wide sync) against the kernel's own time, and torch events alone (no sync)."""
    import torch
    from mkbgrader.child import timing

    clock = timing.Clock("cuda:0")
    begin = time.perf_counter()
    result = launch()
    if block is not None:
        block(result)
    torch.cuda.synchronize()
    own_ms = (time.perf_counter() - begin) * 1e3
    clock_ms, result = clock.time_call(launch)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    result = launch()
    end.record()
    end.synchronize()  # torch's stream only: misses work queued elsewhere
    events_ms = start.elapsed_time(end)
    torch.cuda.synchronize()
    say(f"{name} clock check: kernel alone (host wall, blocked) {own_ms:.2f} ms; grader Clock {clock_ms:.2f} ms; "
        f"torch-stream events without device sync {events_ms:.2f} ms -> clock covers the kernel: "
        f"{clock_ms >= 0.9 * own_ms}")


def preallocation_default() -> None:
    """JAX in a fresh process with its default preallocation: how much of the GPU it takes."""
    code = ("import os; os.environ.pop('XLA_PYTHON_CLIENT_PREALLOCATE', None); import torch; "
            "f0, total = torch.cuda.mem_get_info(); import jax, jax.numpy as jnp; jnp.ones(1).block_until_ready(); "
            "f1 = torch.cuda.mem_get_info()[0]; print('pallas: default preallocation took %.1f of %.1f GiB' % "
            "((f0 - f1) / 2**30, total / 2**30))")
    env = {k: v for k, v in os.environ.items() if k != "XLA_PYTHON_CLIENT_PREALLOCATE"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    say(result.stdout.strip() or result.stderr.strip()[-400:])


# ----- gradings -------------------------------------------------------------------------------------------------------
def descriptor(dsl: str) -> dict:
    with open(os.path.join(REPO, "resources", "dsls", dsl + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


def grade_one(problem: str, kernel: str, dsl: str, slowdown: float = 0.0, boundary: str = "mkb") -> dict:
    from mkbgrader.parent.grade import grade
    from mkbgrader.parent.settings import parse_settings

    request = {"problem": problem, "kernel": kernel, "dsl": dsl, "dsl_descriptor": descriptor(dsl),
               "device": "cuda:0"}
    if slowdown:
        request["slowdown"] = slowdown
    return grade(request, parse_settings({**SETTINGS, "boundary": boundary}))


def solution_pairs(dsl: str, numbers: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for number in numbers:
        for kernel in sorted(glob.glob(os.path.join(REPO, "problems", "*", "_solutions", f"{number}_*.{dsl}.py"))):
            stem = os.path.basename(kernel)[: -len(f".{dsl}.py")]
            problem = os.path.join(os.path.dirname(os.path.dirname(kernel)), stem + ".py")
            pairs.append((problem, kernel))
    return pairs


def line(name: str, verdict: dict) -> str:
    if verdict.get("passed"):
        return (f"PASS {name}: kernel {verdict.get('kernel_median_ms', 0):.3f} ms, eager "
                f"{verdict.get('eager_median_ms', 0):.3f} ms, speedup {verdict.get('speedup_vs_eager', 0):.2f}x, "
                f"{verdict.get('eval_seconds', 0):.0f} s")
    detail = " ".join(str(verdict.get(k) or "") for k in ("stage", "compliance_rule", "error", "mismatch"))
    return f"FAIL {name}: {detail[:900]}"


def main(argv: list[str]) -> int:
    mode = argv[0]
    if mode == "probe":
        for step in (probe_numba, probe_pallas, preallocation_default):
            try:
                step()
            except BaseException as error:  # report and go on: each probe is independent
                say(f"{step.__name__} FAILED: {type(error).__name__}: {str(error)[:600]}")
        return 0
    if mode == "grade":
        dsl, numbers = argv[1], argv[2:]
        boundary = os.environ.get("MKB_BOUNDARY", "mkb")
        for problem, kernel in solution_pairs(dsl, numbers):
            say(line(f"{os.path.basename(kernel)} [{boundary}]", grade_one(problem, kernel, dsl, boundary=boundary)))
        return 0
    if mode == "slowdown":
        dsl, number = argv[1], argv[2]
        for problem, kernel in solution_pairs(dsl, [number]):
            plain = grade_one(problem, kernel, dsl)
            slowed = grade_one(problem, kernel, dsl, slowdown=1.0)
            ratio = (slowed.get("kernel_median_ms") or 0) / max(plain.get("kernel_median_ms") or 1e-9, 1e-9)
            say(line(f"{os.path.basename(kernel)} plain", plain))
            say(line(f"{os.path.basename(kernel)} slowed x2", slowed), f"delay {slowed.get('slowdown_delay_ms')} ms,"
                f" slowed/plain median {ratio:.2f} (expect about 2)")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
