"""Hostile case: a real pallas launch whose result is thrown away; the jax.numpy result is returned."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

ROWS = 8


def _kernel(gate_ref, out_ref):
    out_ref[...] = gate_ref[...] * 2


def solve(gate, up):
    g, u = jax.dlpack.from_dlpack(gate.contiguous()), jax.dlpack.from_dlpack(up.contiguous())
    spec = pl.BlockSpec((ROWS, g.shape[1]), lambda i: (i, 0))
    pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(g.shape, g.dtype), grid=(g.shape[0] // ROWS,),
                   in_specs=[spec], out_specs=spec)(g).block_until_ready()
    return torch.from_dlpack((jax.nn.silu(g.astype(jnp.float32)) * u.astype(jnp.float32)).astype(g.dtype))
