"""JAX Pallas solution for 07_paged_gqa_decode: two passes (split-K flash decoding) with one DLPack import.

Torch packs every input into one 16-bit buffer with one `torch.cat`, seen as [rows, 128]: the key pool's rows, the
value pool's rows, the query rows, then the block table and the lengths as the raw bits of their int32 values (each
int32 as two 16-bit halves). The kernel reads keys, values and queries straight from that buffer (it is passed three
times, whole, with row offsets in the kernel: no XLA copy); the jitted function takes the table and the lengths back
out of the tail with `lax.slice`, `reshape` and `bitcast_convert_type` (data movement; 64 KB). The kernels:
pass 1, one program per (sequence, KV head, slice of 16 pages) with an online softmax for all the group's query
heads (gathered twice into 16 rows for the tensor cores); pass 2 merges the slices by their log-sum-exps."""

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
    """Both passes; q_rows, k_rows and v_rows are [rows, dim] arrays (solve passes one packed array three times)."""
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


@functools.partial(jax.jit, static_argnames=("batch", "query_heads", "pages_per_seq", "slots"))
def _attend(packed, batch, query_heads, pages_per_seq, slots):
    k_base, v_base, q_base = 0, slots, 2 * slots  # row offsets of the three row blocks in the packed buffer
    entries = batch * pages_per_seq
    tail = jax.lax.slice(packed, (q_base + batch * query_heads, 0), tuple(packed.shape))  # the int32 bits
    ints = jax.lax.bitcast_convert_type(tail.reshape(-1, 2), jnp.int32)
    block_table = jax.lax.slice(ints, (0,), (entries,)).reshape(batch, pages_per_seq)
    seq_lens = jax.lax.slice(ints, (entries,), (entries + batch,))
    return _decode(seq_lens, block_table, packed, packed, packed, batch=batch, group=query_heads, q_base=q_base,
                   k_base=k_base, v_base=v_base)


def solve(q, k_cache, v_cache, block_table, seq_lens):
    pages, page_size, kv_heads, dim = k_cache.shape
    batch, query_heads, _ = q.shape
    splits = block_table.shape[1] // SPLIT_PAGES
    assert kv_heads == 1 and page_size == PAGE  # one KV head per shard: the pool is [pages * 16, dim] rows
    assert query_heads in (8, 16) and block_table.shape[1] % SPLIT_PAGES == 0 and splits & (splits - 1) == 0
    assert k_cache.dtype == v_cache.dtype == q.dtype and q.element_size() == 2
    ints = [block_table.to(torch.int32).reshape(-1), seq_lens.to(torch.int32).reshape(-1)]
    pieces = [k_cache.reshape(-1), v_cache.reshape(-1), q.reshape(-1)] + [t.view(q.dtype) for t in ints]
    padding = -sum(t.numel() for t in pieces) % dim  # whole rows; 0 for the problem's shapes
    if padding:
        pieces.append(q.new_zeros(padding))
    packed = torch.cat(pieces).view(-1, dim)
    out = _attend(jax.dlpack.from_dlpack(packed), batch=batch, query_heads=query_heads,
                  pages_per_seq=block_table.shape[1], slots=pages * page_size)
    return torch.from_dlpack(out)
