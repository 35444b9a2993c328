"""JAX Pallas solution for 11_speculative_verify_attention: one program per (sequence, draft token, query head) walks
the KV head's slots in blocks of 128 with an online softmax; draft token t sees the slots up to len - 4 + t."""

import functools
import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

BLOCK_K = 128
NEG = -1e30


def _kernel(lens_ref, q_ref, k_ref, v_ref, o_ref, *, scale, new_tokens):
    limit = lens_ref[pl.program_id(0)] - new_tokens + pl.program_id(1) + 1
    q = q_ref[...].astype(jnp.float32) * scale  # [D]

    def body(i, carry):
        top, total, acc = carry
        keys = k_ref[pl.ds(i * BLOCK_K, BLOCK_K), :].astype(jnp.float32)  # [BK, D]
        scores = jnp.sum(keys * q[None, :], axis=1)
        position = i * BLOCK_K + jax.lax.broadcasted_iota(jnp.int32, (BLOCK_K,), 0)
        scores = jnp.where(position < limit, scores, NEG)
        new_top = jnp.maximum(top, jnp.max(scores))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top)
        values = v_ref[pl.ds(i * BLOCK_K, BLOCK_K), :].astype(jnp.float32)
        acc = acc * rescale + jnp.sum(weights[:, None] * values, axis=0)
        return new_top, total * rescale + jnp.sum(weights), acc

    start = (jnp.float32(NEG), jnp.float32(0.0), jnp.zeros(q.shape, jnp.float32))
    _, total, acc = jax.lax.fori_loop(0, k_ref.shape[0] // BLOCK_K, body, start)
    o_ref[...] = (acc / total).astype(o_ref.dtype)


@jax.jit
def _attend(q, k_cache, v_cache, cache_lens):
    batch, new_tokens, query_heads, dim = q.shape
    context, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = query_heads // kv_heads
    cache = pl.BlockSpec((None, context, None, dim), lambda b, t, h: (b, 0, h // group, 0))
    row = pl.BlockSpec((None, None, None, dim), lambda b, t, h: (b, t, h, 0))
    return pl.pallas_call(
        functools.partial(_kernel, scale=1.0 / math.sqrt(dim), new_tokens=new_tokens),
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(batch, new_tokens, query_heads),
        in_specs=[pl.BlockSpec((batch,), lambda b, t, h: (0,)), row, cache, cache],
        out_specs=row)(cache_lens, q, k_cache, v_cache)


def solve(q, k_cache, v_cache, cache_lens):
    out = _attend(jax.dlpack.from_dlpack(q.contiguous()), jax.dlpack.from_dlpack(k_cache.contiguous()),
                  jax.dlpack.from_dlpack(v_cache.contiguous()), jax.dlpack.from_dlpack(cache_lens.to(torch.int32)))
    return torch.from_dlpack(out)
