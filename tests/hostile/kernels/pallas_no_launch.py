"""Hostile case: defines a pallas kernel but never launches it; jax.numpy computes the answer."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _kernel(gate_ref, up_ref, out_ref):
    out_ref[...] = gate_ref[...] * up_ref[...]


def _unused(gate, up):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(gate.shape, gate.dtype))(gate, up)


def solve(gate, up):
    g, u = jax.dlpack.from_dlpack(gate.contiguous()), jax.dlpack.from_dlpack(up.contiguous())
    return torch.from_dlpack((jax.nn.silu(g.astype(jnp.float32)) * u.astype(jnp.float32)).astype(g.dtype))
