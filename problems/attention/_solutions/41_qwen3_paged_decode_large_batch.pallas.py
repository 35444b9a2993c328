"""JAX Pallas solution for 41_qwen3_paged_decode_large_batch: one program per (sequence, query head) walks the
sequence's pages through its block-table row (16 keys a page, read at page * 16 of the pool viewed as [slots, KV
heads, dim], at the query head's KV head) with an online softmax."""

import functools
import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl

PAGE = 16
NEG = -1e30


def _kernel(lens_ref, table_ref, q_ref, k_ref, v_ref, o_ref, *, scale, group):
    length = lens_ref[pl.program_id(0)]
    kv = pl.program_id(1) // group
    q = q_ref[...].astype(jnp.float32) * scale  # [D]

    def body(i, carry):
        top, total, acc = carry
        page = table_ref[i]
        keys = k_ref[pl.ds(page * PAGE, PAGE), kv, :].astype(jnp.float32)  # [PAGE, D]
        scores = jnp.sum(keys * q[None, :], axis=1)
        position = i * PAGE + jax.lax.broadcasted_iota(jnp.int32, (PAGE,), 0)
        scores = jnp.where(position < length, scores, NEG)
        new_top = jnp.maximum(top, jnp.max(scores))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top)
        values = v_ref[pl.ds(page * PAGE, PAGE), kv, :].astype(jnp.float32)
        acc = acc * rescale + jnp.sum(weights[:, None] * values, axis=0)
        return new_top, total * rescale + jnp.sum(weights), acc

    start = (jnp.float32(NEG), jnp.float32(0.0), jnp.zeros(q.shape, jnp.float32))
    _, total, acc = jax.lax.fori_loop(0, table_ref.shape[0], body, start)
    o_ref[...] = (acc / total).astype(o_ref.dtype)


@jax.jit
def _attend(q, k_rows, v_rows, block_table, seq_lens):
    batch, query_heads, dim = q.shape
    pages_per_seq = block_table.shape[1]
    pool = pl.BlockSpec(k_rows.shape, lambda b, h: (0, 0, 0))
    row = pl.BlockSpec((None, None, dim), lambda b, h: (b, h, 0))
    return pl.pallas_call(
        functools.partial(_kernel, scale=1.0 / math.sqrt(dim), group=query_heads // k_rows.shape[1]),
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype), grid=(batch, query_heads),
        in_specs=[pl.BlockSpec((batch,), lambda b, h: (0,)),
                  pl.BlockSpec((None, pages_per_seq), lambda b, h: (b, 0)), row, pool, pool],
        out_specs=row)(seq_lens, block_table, q, k_rows, v_rows)


def solve(q, k_cache, v_cache, block_table, seq_lens):
    pages, page_size, kv_heads, dim = k_cache.shape
    assert page_size == PAGE  # the pool is [pages * 16 slots, KV heads, dim]
    rows = lambda t: jax.dlpack.from_dlpack(t.contiguous().view(pages * page_size, kv_heads, dim))  # noqa: E731
    out = _attend(jax.dlpack.from_dlpack(q.contiguous()), rows(k_cache), rows(v_cache),
                  jax.dlpack.from_dlpack(block_table.to(torch.int32).contiguous()),
                  jax.dlpack.from_dlpack(seq_lens.to(torch.int32)))
    return torch.from_dlpack(out)
