"""Boundary case: a genuine hybrid. A pallas kernel computes silu(gate); jax.numpy multiplies by up outside it."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 8


def _silu_kernel(gate_ref, out_ref):
    gate = gate_ref[...].astype(jnp.float32)
    out_ref[...] = gate / (1.0 + jnp.exp(-gate))


@jax.jit
def _hybrid(gate, up):
    spec = pl.BlockSpec((ROWS, gate.shape[1]), lambda i: (i, 0))
    activated = pl.pallas_call(_silu_kernel, out_shape=jax.ShapeDtypeStruct(gate.shape, jnp.float32),
                               grid=(gate.shape[0] // ROWS,), in_specs=[spec], out_specs=spec)(gate)
    return (activated * up.astype(jnp.float32)).astype(gate.dtype)


def solve(gate, up):
    g, u = jax.dlpack.from_dlpack(gate.contiguous()), jax.dlpack.from_dlpack(up.contiguous())
    return torch.from_dlpack(_hybrid(g, u))
