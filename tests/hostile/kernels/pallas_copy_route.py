"""Hostile case: jax.numpy computes the answer and a pallas kernel only copies it."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 8


def _copy_kernel(source_ref, out_ref):
    out_ref[...] = source_ref[...]


@jax.jit
def _routed(gate, up):
    eager = (jax.nn.silu(gate.astype(jnp.float32)) * up.astype(jnp.float32)).astype(gate.dtype)
    spec = pl.BlockSpec((ROWS, gate.shape[1]), lambda i: (i, 0))
    return pl.pallas_call(_copy_kernel, out_shape=jax.ShapeDtypeStruct(gate.shape, gate.dtype),
                          grid=(gate.shape[0] // ROWS,), in_specs=[spec], out_specs=spec)(eager)


def solve(gate, up):
    g, u = jax.dlpack.from_dlpack(gate.contiguous()), jax.dlpack.from_dlpack(up.contiguous())
    return torch.from_dlpack(_routed(g, u))
