"""JAX Pallas solution for 53_gated_delta_chunk_wy_transform: one program per (sequence, head, 64-token chunk) takes
the chunk's cumulative log decay (a masked row sum), builds the strictly lower A = beta_i (k_i . k_j)
exp(g_i - g_j) with a tensor-core dot, and solves (I + A) u = beta v and (I + A) w = beta exp(g) k by forward
substitution over the 64 rows (rows picked and placed with one-hot masks)."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 64


def _kernel(k_ref, v_ref, beta_ref, g_ref, w_ref, u_ref):
    k = k_ref[...].astype(jnp.float32)  # [C, D]
    beta = beta_ref[...].astype(jnp.float32)  # [C]
    row = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    col = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    cumulative = jnp.sum(jnp.where(col <= row, g_ref[...][None, :], 0.0), axis=1)  # [C]
    gram = jnp.dot(k, k.T, precision=jax.lax.Precision.HIGHEST, preferred_element_type=jnp.float32)
    a = jnp.where(col < row, beta[:, None] * gram * jnp.exp(cumulative[:, None] - cumulative[None, :]), 0.0)
    bv = beta[:, None] * v_ref[...].astype(jnp.float32)
    bk = (beta * jnp.exp(cumulative))[:, None] * k
    rows = jax.lax.broadcasted_iota(jnp.int32, bv.shape, 0)

    def substitute(i, carry):
        u, w = carry
        a_row = jnp.sum(jnp.where(row == i, a, 0.0), axis=0)  # A[i, :], zero from column i on
        u_i = jnp.sum(jnp.where(rows == i, bv, 0.0), axis=0) - jnp.sum(a_row[:, None] * u, axis=0)
        w_i = jnp.sum(jnp.where(rows == i, bk, 0.0), axis=0) - jnp.sum(a_row[:, None] * w, axis=0)
        return jnp.where(rows == i, u_i[None, :], u), jnp.where(rows == i, w_i[None, :], w)

    zeros = jnp.zeros(bv.shape, jnp.float32)
    u, w = jax.lax.fori_loop(0, CHUNK, substitute, (zeros, zeros))
    u_ref[...] = u.astype(u_ref.dtype)
    w_ref[...] = w.astype(w_ref.dtype)


@jax.jit
def _wy(k, v, beta, g):
    batch, seq_len, heads, dim = k.shape
    rows = pl.BlockSpec((None, CHUNK, None, dim), lambda b, h, c: (b, c, h, 0))
    gates = pl.BlockSpec((None, CHUNK, None), lambda b, h, c: (b, c, h))
    return pl.pallas_call(
        _kernel, grid=(batch, heads, seq_len // CHUNK),
        out_shape=(jax.ShapeDtypeStruct(k.shape, k.dtype), jax.ShapeDtypeStruct(v.shape, v.dtype)),
        in_specs=[rows, rows, gates, gates], out_specs=(rows, rows))(k, v, beta, g)


def solve(k, v, beta, g):
    assert k.shape[1] % CHUNK == 0
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    w, u = _wy(j(k), j(v), j(beta), j(g))
    return torch.from_dlpack(w), torch.from_dlpack(u)
