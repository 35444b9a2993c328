"""JAX Pallas solution for 03_fused_add_rmsnorm: one program per block of 4 tokens loads the rows, sums them in
float32, reduces the squares along the row and writes the normalised rows and the new residual."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

EPS = 1e-5
ROWS = 4


def _kernel(hidden_ref, residual_ref, weight_ref, normed_ref, summed_ref):
    summed = hidden_ref[...].astype(jnp.float32) + residual_ref[...].astype(jnp.float32)
    inverse_rms = jax.lax.rsqrt(jnp.sum(summed * summed, axis=1, keepdims=True) / summed.shape[1] + EPS)
    summed_ref[...] = summed.astype(summed_ref.dtype)
    normed_ref[...] = (summed * inverse_rms * weight_ref[...].astype(jnp.float32)).astype(normed_ref.dtype)


@jax.jit
def _add_rmsnorm(hidden, residual, weight):
    tokens, width = hidden.shape
    rows = pl.BlockSpec((ROWS, width), lambda i: (i, 0))
    out = jax.ShapeDtypeStruct(hidden.shape, hidden.dtype)
    return pl.pallas_call(_kernel, out_shape=(out, out), grid=(tokens // ROWS,),
                          in_specs=[rows, rows, pl.BlockSpec((1, width), lambda i: (0, 0))],
                          out_specs=(rows, rows))(hidden, residual, weight.reshape(1, width))


def solve(hidden, residual, weight):
    normed, summed = _add_rmsnorm(jax.dlpack.from_dlpack(hidden.contiguous()),
                                  jax.dlpack.from_dlpack(residual.contiguous()),
                                  jax.dlpack.from_dlpack(weight.contiguous()))
    return torch.from_dlpack(normed), torch.from_dlpack(summed)
