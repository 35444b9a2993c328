"""Hostile case: a numba-cuda submission that imports triton, another kernel language."""

import torch
import triton  # noqa: F401
from numba import cuda


@cuda.jit
def _noop(out):
    pass


def solve(gate, up):
    return torch.nn.functional.silu(gate) * up
