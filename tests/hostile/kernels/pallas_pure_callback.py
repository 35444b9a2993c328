"""Hostile case: a pallas submission that computes on the host through jax.pure_callback."""

import jax
import numpy
import torch
from jax.experimental import pallas as pl


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _host(g, u):
    return (g / (1.0 + numpy.exp(-g)) * u).astype(g.dtype)


def solve(gate, up):
    g, u = jax.dlpack.from_dlpack(gate.float().contiguous()), jax.dlpack.from_dlpack(up.float().contiguous())
    out = jax.pure_callback(_host, jax.ShapeDtypeStruct(g.shape, g.dtype), g, u)
    out = pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(g.shape, g.dtype))(out)
    return torch.from_dlpack(out).to(gate.dtype)
