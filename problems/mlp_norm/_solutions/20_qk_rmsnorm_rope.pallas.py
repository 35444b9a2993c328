"""JAX Pallas solution for 20_qk_rmsnorm_rope: one program per token normalises its 32 query heads and 8 key heads
(RMS over the head dim, float32) and rotates them (neox halves, cos|sin read at the token's position); the heads
come as two block specs over the fused qkv row."""

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

HEAD_DIM = 128
QUERY_HEADS = 32
KV_HEADS = 8
EPS = 1e-6


def _norm_rotate(x_ref, w_ref, cos, sin, o_ref):
    half = HEAD_DIM // 2
    x1 = x_ref[:, pl.ds(0, half)].astype(jnp.float32)  # [heads, half]
    x2 = x_ref[:, pl.ds(half, half)].astype(jnp.float32)
    inverse_rms = jax.lax.rsqrt((jnp.sum(x1 * x1, axis=1) + jnp.sum(x2 * x2, axis=1)) / HEAD_DIM + EPS)[:, None]
    n1 = x1 * inverse_rms * w_ref[:, pl.ds(0, half)].astype(jnp.float32)
    n2 = x2 * inverse_rms * w_ref[:, pl.ds(half, half)].astype(jnp.float32)
    o_ref[:, pl.ds(0, half)] = (n1 * cos - n2 * sin).astype(o_ref.dtype)
    o_ref[:, pl.ds(half, half)] = (n2 * cos + n1 * sin).astype(o_ref.dtype)


def _kernel(pos_ref, q_ref, k_ref, qw_ref, kw_ref, cs_ref, oq_ref, ok_ref):
    position = pos_ref[pl.program_id(0)]
    half = HEAD_DIM // 2
    cos = cs_ref[pl.ds(position, 1), pl.ds(0, half)]  # [1, half]
    sin = cs_ref[pl.ds(position, 1), pl.ds(half, half)]
    _norm_rotate(q_ref, qw_ref, cos, sin, oq_ref)
    _norm_rotate(k_ref, kw_ref, cos, sin, ok_ref)


@jax.jit
def _norm_rope(qkv, q_weight, k_weight, positions, cos_sin):
    tokens = qkv.shape[0]
    heads = qkv.reshape(tokens, qkv.shape[1] // HEAD_DIM, HEAD_DIM)
    vector = pl.BlockSpec((1, HEAD_DIM), lambda t: (0, 0))
    return pl.pallas_call(
        _kernel, grid=(tokens,),
        out_shape=(jax.ShapeDtypeStruct((tokens, QUERY_HEADS, HEAD_DIM), qkv.dtype),
                   jax.ShapeDtypeStruct((tokens, KV_HEADS, HEAD_DIM), qkv.dtype)),
        in_specs=[pl.BlockSpec(positions.shape, lambda t: (0,)),
                  pl.BlockSpec((None, QUERY_HEADS, HEAD_DIM), lambda t: (t, 0, 0)),
                  # block index 4 of 8 heads = heads 32..39, the key heads
                  pl.BlockSpec((None, KV_HEADS, HEAD_DIM), lambda t: (t, QUERY_HEADS // KV_HEADS, 0)),
                  vector, vector, pl.BlockSpec(cos_sin.shape, lambda t: (0, 0))],
        out_specs=(pl.BlockSpec((None, QUERY_HEADS, HEAD_DIM), lambda t: (t, 0, 0)),
                   pl.BlockSpec((None, KV_HEADS, HEAD_DIM), lambda t: (t, 0, 0))),
    )(positions, heads, heads, q_weight.reshape(1, HEAD_DIM), k_weight.reshape(1, HEAD_DIM), cos_sin)


def solve(qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache):
    j = lambda t: jax.dlpack.from_dlpack(t.contiguous())  # noqa: E731
    rotated_query, rotated_key = _norm_rope(j(qkv), j(q_norm_weight), j(k_norm_weight),
                                            j(positions.to(torch.int32)), j(cos_sin_cache))
    return torch.from_dlpack(rotated_query), torch.from_dlpack(rotated_key)
