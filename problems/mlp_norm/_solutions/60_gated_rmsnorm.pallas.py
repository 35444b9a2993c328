"""JAX Pallas solution for 60_gated_rmsnorm: the heads are rows of 128; one program per 32 rows reduces the squares
along each row and writes rmsnorm(o) * weight * silu(z) in float32 math."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

HEAD_DIM = 128
ROWS = 32
EPS = 1e-6


def _kernel(o_ref, z_ref, w_ref, out_ref):
    o = o_ref[...].astype(jnp.float32)
    z = z_ref[...].astype(jnp.float32)
    inverse_rms = jax.lax.rsqrt(jnp.sum(o * o, axis=1, keepdims=True) / HEAD_DIM + EPS)
    gated = o * inverse_rms * w_ref[...].astype(jnp.float32) * z / (1.0 + jnp.exp(-z))
    out_ref[...] = gated.astype(out_ref.dtype)


@jax.jit
def _gated_rmsnorm(o, z, weight):
    rows = o.size // HEAD_DIM
    tile = pl.BlockSpec((ROWS, HEAD_DIM), lambda i: (i, 0))
    out = pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct((rows, HEAD_DIM), o.dtype), grid=(rows // ROWS,),
        in_specs=[tile, tile, pl.BlockSpec((1, HEAD_DIM), lambda i: (0, 0))], out_specs=tile,
    )(o.reshape(rows, HEAD_DIM), z.reshape(rows, HEAD_DIM), weight.reshape(1, HEAD_DIM))
    return out.reshape(o.shape)


def solve(o, z, weight):
    assert (o.numel() // HEAD_DIM) % ROWS == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    return torch.from_dlpack(_gated_rmsnorm(j(o), j(z), j(weight)))
