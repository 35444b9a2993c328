"""Hostile case: a real numba-cuda launch into a scratch buffer that is thrown away; the eager result is returned."""

import torch
from numba import cuda


@cuda.jit
def _fill_kernel(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = 1.0


def solve(gate, up):
    scratch = torch.empty(gate.numel(), device=gate.device, dtype=torch.float32)
    _fill_kernel[(scratch.numel() + 255) // 256, 256](scratch)
    return torch.nn.functional.silu(gate) * up
