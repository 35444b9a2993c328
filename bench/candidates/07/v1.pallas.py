"""JAX Pallas candidate v1 for 07_paged_gqa_decode: split-K flash decoding, the Triton solution's form.

Pass 1: one program per (sequence, KV head, slice of 16 pages) walks its pages through the sequence's block-table row
(16 keys a page, read at page * 16 of the pool viewed as rows) with an online softmax for all the query heads of the
group at once, so each cached row is read once, not once per query head. The group's 8 heads are gathered twice into
16 query rows (the tensor cores' minimum); scores and p @ V are bf16 dots with float32 accumulation. Each program
writes its normalised partial output and log-sum-exp; slices past the sequence's end run no step and write lse = NEG.
Pass 2: one program per (sequence, query head) merges the 16 slices by their log-sum-exps. Imports as shipped (5)."""

import functools
import math

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as plgpu

PAGE = 16
ROWS = 16  # query rows per program: the group of 8 heads, twice (tensor-core dots need 16)
SPLIT_PAGES = 16  # pages per slice of the context: 16 slices of 256 keys for 4096
NEG = -1e30


def _params(num_warps, num_stages):
    make = getattr(plgpu, "CompilerParams", None) or getattr(plgpu, "TritonCompilerParams")
    return make(num_warps=num_warps, num_stages=num_stages)


def _slice_kernel(lens_ref, table_ref, q_ref, k_ref, v_ref, o_ref, lse_ref, *, scale, group, q_base, k_base, v_base):
    b = pl.program_id(0)
    length = lens_ref[b]
    rows = jax.lax.broadcasted_iota(jnp.int32, (ROWS,), 0)
    heads = jnp.where(rows < group, rows, rows - group)  # rows 8-15 repeat heads 0-7; pass 2 reads rows 0-7
    q = q_ref[q_base + b * group + heads, pl.ds(0, q_ref.shape[1])]  # [ROWS, D] bf16
    first = pl.program_id(1) * SPLIT_PAGES
    last = jnp.minimum(first + SPLIT_PAGES, (length + PAGE - 1) // PAGE)  # pages holding a key below length

    def body(i, carry):
        top, total, acc = carry
        page = table_ref[i]
        keys = k_ref[pl.ds(k_base + page * PAGE, PAGE), :]  # [PAGE, D]
        scores = jax.lax.dot_general(q, keys, (((1,), (1,)), ((), ())),
                                     preferred_element_type=jnp.float32) * scale  # [ROWS, PAGE]
        position = i * PAGE + jax.lax.broadcasted_iota(jnp.int32, (1, PAGE), 1)
        scores = jnp.where(position < length, scores, NEG)
        new_top = jnp.maximum(top, jnp.max(scores, axis=1))
        rescale = jnp.exp(top - new_top)
        weights = jnp.exp(scores - new_top[:, None])
        values = v_ref[pl.ds(v_base + page * PAGE, PAGE), :]
        acc = acc * rescale[:, None] + jnp.dot(weights.astype(values.dtype), values,
                                               preferred_element_type=jnp.float32)
        return new_top, total * rescale + jnp.sum(weights, axis=1), acc

    start = (jnp.full((ROWS,), NEG, jnp.float32), jnp.zeros((ROWS,), jnp.float32),
             jnp.zeros((ROWS, q_ref.shape[1]), jnp.float32))
    top, total, acc = jax.lax.fori_loop(first, last, body, start)
    found = total > 0.0
    safe = jnp.where(found, total, 1.0)
    o_ref[...] = acc / safe[:, None]
    lse_ref[...] = jnp.where(found, top + jnp.log(safe), NEG)


def _merge_kernel(part_ref, lse_ref, o_ref):
    lse = lse_ref[...]  # [splits]
    weights = jnp.exp(lse - jnp.max(lse))
    merged = jnp.sum(part_ref[...] * weights[:, None], axis=0) / jnp.sum(weights)
    o_ref[...] = merged.astype(o_ref.dtype)


def _decode(seq_lens, block_table, q_rows, k_rows, v_rows, *, batch, group, q_base, k_base, v_base):
    """Both passes; q_rows, k_rows and v_rows are [rows, dim] arrays (v2 passes one packed array three times)."""
    dim = k_rows.shape[1]
    pages_per_seq = block_table.shape[1]
    splits = pages_per_seq // SPLIT_PAGES
    whole = lambda a: pl.BlockSpec(a.shape, lambda b, s: (0,) * a.ndim)  # noqa: E731
    kernel = functools.partial(_slice_kernel, scale=1.0 / math.sqrt(dim), group=group, q_base=q_base,
                               k_base=k_base, v_base=v_base)
    part, lse = pl.pallas_call(
        kernel, grid=(batch, splits),
        out_shape=(jax.ShapeDtypeStruct((batch, splits, ROWS, dim), jnp.float32),
                   jax.ShapeDtypeStruct((batch, splits, ROWS), jnp.float32)),
        in_specs=[whole(seq_lens), pl.BlockSpec((None, pages_per_seq), lambda b, s: (b, 0)),
                  whole(q_rows), whole(k_rows), whole(v_rows)],
        out_specs=(pl.BlockSpec((None, None, ROWS, dim), lambda b, s: (b, s, 0, 0)),
                   pl.BlockSpec((None, None, ROWS), lambda b, s: (b, s, 0))),
        compiler_params=_params(4, 2))(seq_lens, block_table, q_rows, k_rows, v_rows)
    return pl.pallas_call(
        _merge_kernel, grid=(batch, group), out_shape=jax.ShapeDtypeStruct((batch, group, dim), q_rows.dtype),
        in_specs=[pl.BlockSpec((None, splits, None, dim), lambda b, h: (b, 0, h, 0)),
                  pl.BlockSpec((None, splits, None), lambda b, h: (b, 0, h))],
        out_specs=pl.BlockSpec((None, None, dim), lambda b, h: (b, h, 0)))(part, lse)


@jax.jit
def _attend(q, k_rows, v_rows, block_table, seq_lens):
    batch, query_heads, dim = q.shape
    return _decode(seq_lens, block_table, q.reshape(batch * query_heads, dim), k_rows, v_rows,
                   batch=batch, group=query_heads, q_base=0, k_base=0, v_base=0)


def solve(q, k_cache, v_cache, block_table, seq_lens):
    pages, page_size, kv_heads, dim = k_cache.shape
    splits = block_table.shape[1] // SPLIT_PAGES
    assert kv_heads == 1 and page_size == PAGE  # one KV head per shard: the pool is [pages * 16, dim] rows
    assert q.shape[1] in (8, 16) and block_table.shape[1] % SPLIT_PAGES == 0 and splits & (splits - 1) == 0
    rows = lambda t: jax.dlpack.from_dlpack(t.contiguous().view(pages * page_size, dim))  # noqa: E731
    out = _attend(jax.dlpack.from_dlpack(q.contiguous()), rows(k_cache), rows(v_cache),
                  jax.dlpack.from_dlpack(block_table.to(torch.int32).contiguous()),
                  jax.dlpack.from_dlpack(seq_lens.to(torch.int32)))
    return torch.from_dlpack(out)
