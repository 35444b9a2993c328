"""JAX Pallas candidate v1 for 12_rope_paged_kv_write: the shipped kernel (one program per token rotates its query and
key heads in float32 with the neox halves and the cos|sin row at its position, returns the rotated queries and writes
the rotated key and the value rows into its slot of the caches, which are outputs aliased to the old caches), with
fewer crossings from torch into JAX. Torch packs the queries, keys and values, the float32 cos|sin table and the int64
positions and slots into one bf16 buffer (one torch.cat; the table and the indices keep their bits), so a call imports
three arrays through DLPack (that buffer and the two caches) instead of eight and makes no int32 casts. Inside the one
jit the table and the low words of the indices come back out of the buffer by slices and bitcasts; the kernel reads
the query, key and value rows straight from the buffer, seen as rows of head_dim, through its block index maps."""

import functools

import jax
import jax.numpy as jnp
import torch
from jax.experimental import pallas as pl


def _kernel(pos_ref, slot_ref, q_ref, k_ref, v_ref, cs_ref, kc_ref, vc_ref, oq_ref, ok_ref, ov_ref):
    del kc_ref, vc_ref  # aliased to ok_ref / ov_ref
    token = pl.program_id(0)
    position = pos_ref[token]
    slot = slot_ref[token]
    half = q_ref.shape[1] // 2
    cos = cs_ref[pl.ds(position, 1), pl.ds(0, half)]  # [1, half]
    sin = cs_ref[pl.ds(position, 1), pl.ds(half, half)]
    q1 = q_ref[:, pl.ds(0, half)].astype(jnp.float32)  # [Hq, half]: this token's query rows
    q2 = q_ref[:, pl.ds(half, half)].astype(jnp.float32)
    oq_ref[0, :, pl.ds(0, half)] = (q1 * cos - q2 * sin).astype(oq_ref.dtype)
    oq_ref[0, :, pl.ds(half, half)] = (q2 * cos + q1 * sin).astype(oq_ref.dtype)
    k1 = k_ref[:, pl.ds(0, half)].astype(jnp.float32)  # [Hkv, half]
    k2 = k_ref[:, pl.ds(half, half)].astype(jnp.float32)
    ok_ref[slot, :, pl.ds(0, half)] = (k1 * cos - k2 * sin).astype(ok_ref.dtype)
    ok_ref[slot, :, pl.ds(half, half)] = (k2 * cos + k1 * sin).astype(ok_ref.dtype)
    ov_ref[slot, :, :] = v_ref[...]


def _low_words(packed, start, count):
    """The `count` int64 values stored as bf16 bits from element `start` of the buffer, as int32 (their low words:
    little-endian, and the values are non-negative and below 2**31)."""
    quads = jax.lax.slice(packed, (start,), (start + 4 * count,)).reshape(count, 2, 2)
    words = jax.lax.bitcast_convert_type(quads, jnp.int32)  # [count, 2]: low word, high word
    return jax.lax.slice(words, (0, 0), (count, 1)).reshape(count)


@functools.partial(jax.jit, static_argnames=("layout",))
def _rope_write(packed, key_rows, value_rows, layout):
    tokens, query_heads, kv_heads, dim, max_position = layout
    query_rows, kv_rows = tokens * query_heads, tokens * kv_heads
    table_start = (query_rows + 2 * kv_rows) * dim
    index_start = table_start + max_position * dim * 2  # the float32 table is two bf16 per value
    cos_sin = jax.lax.bitcast_convert_type(
        jax.lax.slice(packed, (table_start,), (index_start,)).reshape(max_position, dim, 2), jnp.float32)
    position_ids = _low_words(packed, index_start, tokens)
    slot_ids = _low_words(packed, index_start + 4 * tokens, tokens)
    rows = packed.reshape(-1, dim)  # queries, then keys, then values, then the table and indices (never read here)
    key_block = query_rows // kv_heads  # index, in blocks of kv_heads rows, of the first key row
    value_block = (query_rows + kv_rows) // kv_heads
    whole = lambda a: pl.BlockSpec(a.shape, lambda t: (0,) * a.ndim)  # noqa: E731
    out = (jax.ShapeDtypeStruct((tokens, query_heads, dim), packed.dtype),
           jax.ShapeDtypeStruct(key_rows.shape, key_rows.dtype),
           jax.ShapeDtypeStruct(value_rows.shape, value_rows.dtype))
    return pl.pallas_call(
        _kernel, out_shape=out, grid=(tokens,),
        in_specs=[whole(position_ids), whole(slot_ids),
                  pl.BlockSpec((query_heads, dim), lambda t: (t, 0)),
                  pl.BlockSpec((kv_heads, dim), lambda t: (key_block + t, 0)),
                  pl.BlockSpec((kv_heads, dim), lambda t: (value_block + t, 0)),
                  whole(cos_sin), whole(key_rows), whole(value_rows)],
        out_specs=(pl.BlockSpec((1, query_heads, dim), lambda t: (t, 0, 0)), whole(key_rows), whole(value_rows)),
        input_output_aliases={6: 1, 7: 2},
    )(position_ids, slot_ids, rows, rows, rows, cos_sin, key_rows, value_rows)


def _bits(tensor, dtype):
    """The tensor's bytes as a flat tensor of `dtype` (a view when it is contiguous)."""
    return tensor.reshape(-1).view(dtype)


def solve(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    tokens, query_heads, dim = query.shape
    kv_heads = key.shape[1]
    pages, page_size = key_cache.shape[0], key_cache.shape[1]
    dtype = query.dtype
    assert dtype in (torch.bfloat16, torch.float16) and key.dtype == value.dtype == key_cache.dtype == dtype
    assert cos_sin_cache.dtype == torch.float32 and cos_sin_cache.shape[1] == dim and tokens % 16 == 0
    packed = torch.cat([query.reshape(-1), key.reshape(-1), value.reshape(-1), _bits(cos_sin_cache, dtype),
                        _bits(positions.to(torch.int64), dtype), _bits(slot_mapping.to(torch.int64), dtype)])
    rows = lambda cache: jax.dlpack.from_dlpack(cache.contiguous().view(pages * page_size, kv_heads, dim))  # noqa: E731
    rotated, new_keys, new_values = _rope_write(
        jax.dlpack.from_dlpack(packed), rows(key_cache), rows(value_cache),
        layout=(tokens, query_heads, kv_heads, dim, cos_sin_cache.shape[0]))
    return (torch.from_dlpack(rotated), torch.from_dlpack(new_keys).view(key_cache.shape),
            torch.from_dlpack(new_values).view(value_cache.shape))
