"""Hostile case: a Triton submission that launches a numba-cuda kernel, another kernel language."""

import torch
import triton
from numba import cuda


@triton.jit
def _noop(x_ptr):
    pass


@cuda.jit
def _silu_mul_kernel(gate, up, out):
    pass


def solve(gate, up):
    return torch.nn.functional.silu(gate) * up
