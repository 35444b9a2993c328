"""JAX Pallas solution for 06_chunked_retention: one program per (head, block of 32 value columns) walks the 64-token
chunks, carrying its [128, 32] slice of the state: each chunk's output is the decayed intra-chunk attention plus the
queries against the carried state, and the state decays by gamma^64 and takes the chunk's decayed keys x values."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

CHUNK = 64
COLUMNS = 32
HIGHEST = jax.lax.Precision.HIGHEST


def _dot(a, b):
    return jnp.dot(a, b, precision=HIGHEST, preferred_element_type=jnp.float32)


def _kernel(decay_ref, q_ref, k_ref, v_ref, o_ref):
    dim = q_ref.shape[1]
    log_decay = jnp.log(decay_ref[pl.program_id(0)])
    i = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 0)
    j = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, CHUNK), 1)
    distance = (i - j).astype(jnp.float32)
    intra = jnp.where(i >= j, jnp.exp(log_decay * jnp.maximum(distance, 0.0)), 0.0)
    index = jax.lax.broadcasted_iota(jnp.int32, (CHUNK, 1), 0).astype(jnp.float32)
    query_decay = jnp.exp(log_decay * (index + 1.0))
    key_decay = jnp.exp(log_decay * (CHUNK - 1.0 - index))
    chunk_decay = jnp.exp(log_decay * CHUNK)
    scale = dim**-0.5

    def body(c, state):
        rows = pl.ds(c * CHUNK, CHUNK)
        q = q_ref[rows, :].astype(jnp.float32) * scale  # [C, D]
        k = k_ref[rows, :].astype(jnp.float32)
        v = v_ref[rows, :].astype(jnp.float32)  # [C, COLUMNS]
        scores = _dot(q, k.T) * intra
        o_ref[rows, :] = (_dot(scores, v) + _dot(q * query_decay, state)).astype(o_ref.dtype)
        return state * chunk_decay + _dot((k * key_decay).T, v)

    jax.lax.fori_loop(0, q_ref.shape[0] // CHUNK, body, jnp.zeros((dim, COLUMNS), jnp.float32))


@jax.jit
def _retention(q, k, v, decay):
    heads, seq_len, dim = q.shape
    rows = pl.BlockSpec((None, seq_len, dim), lambda h, c: (h, 0, 0))
    columns = pl.BlockSpec((None, seq_len, COLUMNS), lambda h, c: (h, 0, c))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(heads, dim // COLUMNS),
        in_specs=[pl.BlockSpec((heads,), lambda h, c: (0,)), rows, rows, columns], out_specs=columns,
    )(decay, q, k, v)


def solve(q, k, v, decay):
    batch, heads, seq_len, dim = q.shape
    assert batch == 1
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous().view(heads, seq_len, dim))  # noqa: E731
    out = _retention(j(q), j(k), j(v), jax.dlpack.from_dlpack(decay.contiguous()))
    return torch.from_dlpack(out).view(q.shape)
