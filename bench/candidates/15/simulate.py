#!/usr/bin/env python3
"""Runs the shipped numba solution of kv_cache/15 and candidates v1, v2 in numba's CUDA simulator on a shrunken
problem (10 tokens, so the last block has two idle warps; a 4-page cache of 4 slots; 16 positions; the 512 + 64
entry width as in the problem, since the kernels' lane layout is tied to it), against the problem's reference run on
float64 copies of the inputs (the grader's anchor) and on the bf16 inputs as given. For a host without a GPU.

Prints, per solution: how many of the written slots' bf16 values differ from the float64 anchor rounded to bf16, the
largest difference in bf16 ulps, the same against the reference on the bf16 inputs, and whether the unwritten slots
and the inputs are unchanged. The simulator reads numpy arrays, so each launch gets numpy views of the (CPU)
tensors; warp shuffles (a per-warp barrier and exchange), libdevice.int_as_float and float_as_int (numpy bit
views, float32 results) are stood in by Python."""

import importlib.util
import os
import threading

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROBLEM = os.path.join(REPO, "problems/kv_cache/15_mla_latent_cache_write.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/kv_cache/_solutions/15_mla_latent_cache_write.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/15/v1.numba.py"),
    "v2": os.path.join(REPO, "bench/candidates/15/v2.numba.py"),
}
TOKENS, PAGES, PAGE_SIZE, MAX_POSITION = 10, 4, 4, 16

_lock = threading.Lock()


def _warp(thread):
    """The (barrier, exchange) of the calling simulator thread's warp."""
    with _lock:
        state = thread._manager.__dict__.setdefault("_warps", {})
        key = (tuple(thread.blockIdx), thread.thread_id >> 5)
        if key not in state:
            state[key] = (threading.Barrier(32), {})
        return state[key]


def _shfl_xor_sync(self, mask, value, lane_mask):
    thread = threading.current_thread()
    barrier, exchange = _warp(thread)
    lane = thread.thread_id & 31
    exchange[lane] = value
    barrier.wait()
    result = exchange[lane ^ lane_mask]
    barrier.wait()
    return result


def _syncwarp(self, mask=0xFFFFFFFF):
    _warp(threading.current_thread())[0].wait()


kernelapi.FakeCUDAModule.shfl_xor_sync = _shfl_xor_sync
kernelapi.FakeCUDAModule.syncwarp = _syncwarp


class Libdevice:
    @staticmethod
    def int_as_float(x):
        return np.array([int(x) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]

    @staticmethod
    def float_as_int(x):
        return int(np.array([x], dtype=np.float32).view(np.int32)[0])


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shrink(solution) -> None:
    """The kernels given numpy views of the tensors; libdevice stood in."""
    solution.libdevice = Libdevice
    for name in ("_write", "_norm_rope", "_scatter_rows"):
        kernel = getattr(solution, name, None)
        if kernel is None:
            continue

        class Host:
            def __init__(self, kernel):
                self.kernel = kernel

            def __getitem__(self, config):
                launch = self.kernel[config]
                return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])

        setattr(solution, name, Host(kernel))


def ulps(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| in bf16 ulps (distance between the two values' positions on the bf16 line, sign-magnitude order)."""
    def order(t):
        bits = t.view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)
    return (order(a) - order(b)).abs()


def check_rounding(solution) -> int:
    """The candidate's float32 -> bf16 bit rounding against torch's cast, on ties, specials and random bit patterns;
    returns the number of mismatches."""
    special = [0x3F808000, 0x3F818000, 0x3F80FFFF, 0x7F7FFFFF, 0x7F7F8000, 0xFF7FFFFF, 0x7F800000, 0xFF800000,
               0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x00000000, 0x80000000, 0x00008000, 0x00018000, 0x807FFFFF]
    bits = torch.cat([torch.tensor(special, dtype=torch.int64),
                      torch.randint(0, 2**32, (20000,), generator=torch.Generator().manual_seed(1))])
    values = torch.from_numpy(bits.numpy().astype(np.uint32).view(np.float32))
    want = values.to(torch.bfloat16).view(torch.int16).to(torch.int64) & 0xFFFF
    got = torch.tensor([int(solution._bf16.py_func(np.float32(v))) for v in values.numpy()])
    nan = torch.isnan(values)
    # NaN: both must be NaN bf16 (exponent all ones, mantissa non-zero); the exact payload may differ
    got_nan = ((got & 0x7F80) == 0x7F80) & ((got & 0x7F) != 0)
    return int(((got != want) & ~nan).sum()) + int((nan & ~got_nan).sum())


def main() -> None:
    problem = load(PROBLEM, "problem15")
    torch.manual_seed(0)
    width = problem.KV_LORA_RANK + problem.ROPE_DIM
    kv_latent = torch.randn(TOKENS, width, dtype=torch.bfloat16)
    kv_latent[3] *= 40.0  # one large row, one tiny one
    kv_latent[7] *= 1e-3
    norm_weight = (1.0 + 0.1 * torch.randn(problem.KV_LORA_RANK)).to(torch.bfloat16)
    positions = torch.randint(0, MAX_POSITION, (TOKENS,))
    exponents = torch.arange(0, problem.ROPE_DIM, 2, dtype=torch.float64) / problem.ROPE_DIM
    angles = torch.arange(MAX_POSITION, dtype=torch.float64).unsqueeze(1) / 10000.0**exponents
    cos_sin_cache = torch.cat([angles.cos(), angles.sin()], dim=-1).to(torch.float32)
    kv_cache = torch.randn(PAGES, PAGE_SIZE, width, dtype=torch.bfloat16)
    slot_mapping = torch.randperm(PAGES * PAGE_SIZE)[:TOKENS]
    inputs = [kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping]
    before = [t.clone() for t in inputs]
    wide = [t.double() if t.is_floating_point() else t for t in inputs]
    anchor = problem.reference(*wide).to(torch.bfloat16)  # the float64 entry rounded to bf16 once
    reference = problem.reference(*inputs)
    written = torch.zeros(PAGES * PAGE_SIZE, dtype=torch.bool)
    written[slot_mapping] = True
    for tag, path in SOLUTIONS.items():
        solution = load(path, tag)
        shrink(solution)
        if hasattr(solution, "_bf16"):
            print(f"{tag}: float32 -> bf16 rounding, mismatches against torch's cast in 20016 values: "
                  f"{check_rounding(solution)}")
        out = solution.solve(*inputs)
        rows = out.view(PAGES * PAGE_SIZE, width)
        to_anchor = ulps(rows[written], anchor.view(-1, width)[written])
        to_reference = ulps(rows[written], reference.view(-1, width)[written])
        kept = torch.equal(rows[~written], kv_cache.view(-1, width)[~written])
        untouched = all(torch.equal(t, b) for t, b in zip(inputs, before))
        print(f"{tag}: vs float64 anchor {int((to_anchor > 0).sum())} of {to_anchor.numel()} values differ, "
              f"max {int(to_anchor.max())} ulp; vs bf16-input reference {int((to_reference > 0).sum())} differ, "
              f"max {int(to_reference.max())} ulp; other slots kept {kept}, inputs unchanged {untouched}")


if __name__ == "__main__":
    main()
