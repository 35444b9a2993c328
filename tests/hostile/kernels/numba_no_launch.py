"""Hostile case: defines a numba-cuda kernel but never launches it; eager PyTorch does the work."""

import math

import torch
from numba import cuda


@cuda.jit
def _silu_mul_kernel(gate, up, out):
    i = cuda.grid(1)
    if i < gate.shape[0]:
        out[i] = gate[i] / (1.0 + math.exp(-gate[i])) * up[i]


def solve(gate, up):
    return torch.nn.functional.silu(gate) * up
