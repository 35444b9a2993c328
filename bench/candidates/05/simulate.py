#!/usr/bin/env python3
"""Runs the shipped numba solution of quantization/05 and candidates v1, v2 in numba's CUDA simulator on two shrunken
problems, against the problem's reference (exact float64 accumulation, then both scales, then fp16): 64 tokens x 64
channels with K = 512 (two blocks of the candidates, whose warps take 64 K values each: 8 staging steps in v1, 2 in
v2), and 64 x 32 with the problem's K = 4096 (one block; a warp's slice is then 512 long, as on the GPU). int8 values
span -128..127 (the problem draws -127..127), and one token and one channel are all -128, so that output's sum is
the largest there can be (2**23 a warp, 2**26 in all). For a host without a GPU.

Prints, per solution, how many fp16 outputs differ from the reference and the largest difference. The simulator
reads numpy arrays, so each launch gets numpy views of the (CPU) tensors; syncwarp is stood in by a per-warp barrier,
v2's dp4a intrinsic by Python (the same signed dot product and int32 wrap), and the register cap is dropped (the
simulator's jit takes none)."""

import importlib.util
import os
import threading
import types

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402
from numba.cuda.simulator import kernelapi  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PROBLEM = os.path.join(REPO, "problems/quantization/05_int8_w8a8_gemm.py")
SOLUTIONS = {
    "shipped": os.path.join(REPO, "problems/quantization/_solutions/05_int8_w8a8_gemm.numba.py"),
    "v1": os.path.join(REPO, "bench/candidates/05/v1.numba.py"),
    "v2": os.path.join(REPO, "bench/candidates/05/dp4a_ptx.numba.py"),
}
SHAPES = [(64, 64, 512), (64, 32, 4096)]  # tokens, channels, K

_lock = threading.Lock()


def _syncwarp(self, mask=0xFFFFFFFF):
    thread = threading.current_thread()
    with _lock:
        state = thread._manager.__dict__.setdefault("_warps", {})
        key = (tuple(thread.blockIdx), thread.thread_id >> 5)
        if key not in state:
            state[key] = threading.Barrier(32)
        barrier = state[key]
    barrier.wait()


kernelapi.FakeCUDAModule.syncwarp = _syncwarp
_jit = cuda.jit


def _jit_without_register_cap(*args, **kwargs):
    kwargs.pop("max_registers", None)  # the simulator's jit takes no register cap
    return _jit(*args, **kwargs)


cuda.jit = _jit_without_register_cap


def _dp4a(a, b, c):
    """c + the dot product of the four signed bytes of a and b, wrapped to int32 (PTX dp4a.s32.s32)."""
    x = np.array([a], dtype=np.int32).view(np.int8).astype(np.int64)
    y = np.array([b], dtype=np.int32).view(np.int8).astype(np.int64)
    total = int(c) + int((x * y).sum())
    return np.int32(((total + 2**31) % 2**32) - 2**31)


class GarbageTorch(types.ModuleType):
    """torch as the solution sees it, except that torch.empty fills its tensor with garbage (NaN, or -12345 for
    integers), so a check cannot pass on memory that already held the answer."""

    def __init__(self):
        super().__init__("torch")

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def empty(*args, **kwargs):
        tensor = torch.empty(*args, **kwargs)
        return tensor.fill_(float("nan") if tensor.is_floating_point() else -12345)


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shrink(solution) -> None:
    """The kernel given numpy views of the tensors; dp4a stood in; torch.empty filled with garbage."""
    solution.torch = GarbageTorch()
    if hasattr(solution, "_dp4a"):
        solution._dp4a = _dp4a
    kernel = solution._gemm

    class Host:
        def __getitem__(self, config):
            launch = kernel[config]
            return lambda *args: launch(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])

    solution._gemm = Host()


def main() -> None:
    problem = load(PROBLEM, "problem05")
    for tokens, channels, inner in SHAPES:
        torch.manual_seed(0)
        activations = torch.randint(-128, 128, (tokens, inner), dtype=torch.int8)
        weights = torch.randint(-128, 128, (channels, inner), dtype=torch.int8)
        activations[5] = -128  # one token and one channel at the extreme: the largest sum there can be
        weights[9] = -128
        activation_scales = 0.002 + 0.01 * torch.rand(tokens, 1, dtype=torch.float32)
        weight_scales = 0.0005 + 0.002 * torch.rand(1, channels, dtype=torch.float32)
        inputs = [activations, weights, activation_scales, weight_scales]
        before = [t.clone() for t in inputs]
        reference = problem.reference(*inputs)
        for tag, path in SOLUTIONS.items():
            solution = load(path, tag)
            shrink(solution)
            out = solution.solve(*inputs)
            differ = int((out != reference).sum())
            error = float((out.double() - reference.double()).abs().max())
            untouched = all(torch.equal(t, b) for t, b in zip(inputs, before))
            print(f"[{tokens}x{channels}, K={inner}] {tag}: {differ} of {out.numel()} fp16 outputs differ from the "
                  f"reference, largest difference {error:.3g} (largest |reference| "
                  f"{float(reference.double().abs().max()):.3g}, at [5, 9] {float(reference[5, 9]):.6g}); "
                  f"inputs unchanged {untouched}")


if __name__ == "__main__":
    main()
