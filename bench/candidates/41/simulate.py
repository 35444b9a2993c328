#!/usr/bin/env python3
"""Runs the shipped numba solution of attention/41 and candidates v1, v2 in numba's CUDA simulator on a shrunken
problem, against the problem's reference run on float64 copies of the inputs (the grader's anchor). For a host
without a GPU.

Shrunken problem: 4 sequences of 300, 700, 17 and 256 cached tokens (partial pages, a partial and an idle 256-row
slice, a single slice, a length on a slice boundary), 2 KV heads (16 query heads; the candidates' KV_HEADS and
ROW_STRIDE module constants are set to match), a 48-page block table row (768-token context: 3 slices), the page
pool shuffled and larger than the live pages. Head dim 128, 8 query heads a KV head and 16-token pages as in the
problem (the kernels' lane layout is tied to them). The inputs the solutions get have NaN in every stale cache row
(slots at or past a sequence's end, and pages no sequence owns) and -12345 in the block-table entries past each
sequence's end; the reference gets a clean copy (its masked matmul would turn NaN values into NaN). Some key rows
are scaled by 30 (sharp softmax), one query by 20. torch.empty fills its tensors with NaN, so nothing can pass on
memory that already held the answer.

Prints, per solution, the max abs error of its bf16 output against the float64 anchor, the grader's allowance (3 x
max(reference error, bf16 eps x max|anchor|), the reference being the problem's own float32 math rounded to bf16),
whether it passes, how many values differ from the anchor rounded to bf16 (and by how many bf16 ulps), and whether
the inputs are unchanged. The simulator reads numpy arrays, so each launch gets numpy views of the (CPU) tensors; a
kernel's register cap is dropped (the simulator takes none); warp shuffles (a per-warp barrier and exchange) and
libdevice.int_as_float (a numpy bit view) are stood in by Python. Usage: /usr/bin/python3 simulate.py [shipped] [v1]
[v2]"""

import importlib.util
import os
import sys
import threading
import time
import types

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROBLEM = os.path.join(REPO, "problems/attention/41_qwen3_paged_decode_large_batch.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/attention/_solutions/41_qwen3_paged_decode_large_batch.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/41/v1.numba.py"),
    "v2": os.path.join(REPO, "bench/candidates/41/v2.numba.py"),
}
LENGTHS = [300, 700, 17, 256]
KV_HEADS, GROUP, DIM, PAGE, PAGES_PER_SEQ, POOL = 2, 8, 128, 16, 48, 224

_lock = threading.Lock()


def _warp(thread):
    """The (barrier, exchange) of the calling simulator thread's warp."""
    with _lock:
        state = thread._manager.__dict__.setdefault("_warps", {})
        key = (tuple(thread.blockIdx), thread.thread_id >> 5)
        if key not in state:
            state[key] = (threading.Barrier(32), {})
        return state[key]


def _exchange(value, source):
    thread = threading.current_thread()
    barrier, exchange = _warp(thread)
    lane = thread.thread_id & 31
    exchange[lane] = value
    barrier.wait()
    result = exchange[source(lane)]
    barrier.wait()
    return result


def _shfl_xor_sync(self, mask, value, lane_mask):
    return _exchange(value, lambda lane: lane ^ lane_mask)


def _shfl_sync(self, mask, value, src_lane):
    return _exchange(value, lambda lane: src_lane)


kernelapi.FakeCUDAModule.shfl_xor_sync = _shfl_xor_sync
kernelapi.FakeCUDAModule.shfl_sync = _shfl_sync
_jit = cuda.jit


def _jit_without_register_cap(*args, **kwargs):
    kwargs.pop("max_registers", None)  # numba 0.56's simulator does not take it
    return _jit(*args, **kwargs)


cuda.jit = _jit_without_register_cap


class Libdevice:
    @staticmethod
    def int_as_float(x):
        return np.array([int(x) & 0xFFFFFFFF], dtype=np.uint32).view(np.float32)[0]


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GarbageTorch(types.ModuleType):
    """torch as the solution sees it, except that torch.empty fills its tensor with garbage (NaN, or -12345)."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty(*args, **kwargs):
        tensor = torch.empty(*args, **kwargs)
        return tensor.fill_(float("nan") if tensor.is_floating_point() else -12345)


def shrink(solution) -> None:
    """The kernel given numpy views of the tensors; libdevice stood in; torch.empty garbage-filled; the module's
    KV head constants set to the shrunken problem's."""
    solution.torch = GarbageTorch()
    solution.libdevice = Libdevice
    if hasattr(solution, "KV_HEADS"):  # the candidates' compile-time KV head count and row stride, shrunk
        solution.KV_HEADS = KV_HEADS
        solution.ROW_STRIDE = KV_HEADS * solution.WORDS
    kernel = solution._decode

    class Host:
        def __getitem__(self, config):
            launch = kernel[config]
            return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])

    solution._decode = Host()
    if hasattr(solution, "_launches"):
        solution._launches.clear()


def ulps(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| in bf16 ulps (distance between the two values' positions on the bf16 line, sign-magnitude order)."""
    def order(t):
        bits = t.view(torch.int16).to(torch.int32)
        return torch.where(bits < 0, -(bits & 0x7FFF), bits)
    return (order(a) - order(b)).abs()


def make_inputs():
    torch.manual_seed(0)
    batch = len(LENGTHS)
    q = torch.randn(batch, KV_HEADS * GROUP, DIM).to(torch.bfloat16)
    q[1, 3] *= 20.0
    k_cache = torch.randn(POOL, PAGE, KV_HEADS, DIM)
    k_cache[torch.rand(POOL, PAGE) < 0.05] *= 30.0
    k_cache = k_cache.to(torch.bfloat16)
    v_cache = torch.randn(POOL, PAGE, KV_HEADS, DIM).to(torch.bfloat16)
    table = torch.randperm(POOL)[:batch * PAGES_PER_SEQ].to(torch.int32).view(batch, PAGES_PER_SEQ)
    seq_lens = torch.tensor(LENGTHS, dtype=torch.int32)
    clean = [q, k_cache, v_cache, table, seq_lens]
    live = torch.zeros(POOL, PAGE, dtype=torch.bool)
    garbage_table = table.clone()
    for b, length in enumerate(LENGTHS):
        for pos in range(length):
            live[table[b, pos // PAGE], pos % PAGE] = True
        garbage_table[b, (length + PAGE - 1) // PAGE:] = -12345
    k_dirty, v_dirty = k_cache.clone(), v_cache.clone()
    k_dirty[~live] = float("nan")
    v_dirty[~live] = float("nan")
    return clean, [q, k_dirty, v_dirty, garbage_table, seq_lens]


def main() -> None:
    wanted = sys.argv[1:] or list(SOLUTIONS)
    problem = load(PROBLEM, "problem41")
    clean, dirty = make_inputs()
    anchor = problem.reference(*[t.double() if t.is_floating_point() else t for t in clean])
    reference = problem.reference(*clean)
    ref_err = float((reference.double() - anchor).abs().max())
    anchor_max = float(anchor.abs().max())
    rounded = anchor.to(torch.bfloat16)  # the float64 answer rounded to bf16 once
    limit = 3.0 * max(ref_err, 0.0078125 * anchor_max)
    print(f"reference (float32 math, bf16 out) error {ref_err:.3g}, max|anchor| {anchor_max:.3g}, "
          f"allowance {limit:.3g}")
    before = [t.clone() for t in dirty]
    for tag in wanted:
        solution = load(SOLUTIONS[tag], tag)
        shrink(solution)
        began = time.time()
        out = solution.solve(*dirty)
        seconds = time.time() - began
        err = (out.double() - anchor).abs()
        worst = float(err.max()) if bool(torch.isfinite(err).all()) else float("nan")
        untouched = all(torch.equal(t, b) or (t.is_floating_point() and bool(((t == b) | (t.isnan() & b.isnan()))
                                                                             .all()))
                        for t, b in zip(dirty, before))
        apart = ulps(out, rounded)
        print(f"{tag}: {tuple(out.shape)} {out.dtype}, max abs error {worst:.3g} (allowance {limit:.3g}, "
              f"{worst / limit:.2f}x of it), passes {worst <= limit}; against the anchor rounded to bf16 "
              f"{int((apart > 0).sum())} of {apart.numel()} values differ, by at most {int(apart.max())} ulp; "
              f"inputs unchanged {untouched}, {seconds:.0f} s in the simulator")


if __name__ == "__main__":
    main()
