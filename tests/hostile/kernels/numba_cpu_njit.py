"""Hostile case: host-side numba (njit) computes the answer on the CPU; a trivial CUDA kernel decorates it."""

import numpy
import torch
from numba import cuda, njit


@njit
def _silu_mul(g, u):
    return g / (1.0 + numpy.exp(-g)) * u


@cuda.jit
def _noop(out):
    pass


def solve(gate, up):
    result = _silu_mul(gate.float().cpu().numpy(), up.float().cpu().numpy())
    return torch.from_numpy(result).to(gate.device).to(gate.dtype)
