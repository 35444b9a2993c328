"""Hostile case: a pallas submission that launches a numba-cuda kernel, another kernel language."""

import torch
from jax.experimental import pallas as pl
from numba import cuda


@cuda.jit
def _noop(out):
    pass


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def solve(gate, up):
    pl.pallas_call  # noqa: B018
    return torch.nn.functional.silu(gate) * up
