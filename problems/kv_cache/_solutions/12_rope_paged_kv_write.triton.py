"""Triton solution for 12_rope_paged_kv_write: cache copies, then one program per token rotates q/k and stores k/v."""

import torch
import triton
import triton.language as tl

COPY_BLOCK = 8192


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def _rope_write_kernel(positions_ptr, query_ptr, key_ptr, value_ptr, cos_sin_ptr, query_out_ptr, key_cache_ptr,
                       value_cache_ptr, slot_ptr, QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr,
                       HEAD_DIM: tl.constexpr, HALF: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    position = tl.load(positions_ptr + token).to(tl.int64)
    slot = tl.load(slot_ptr + token).to(tl.int64)
    pair = tl.arange(0, HALF)
    cos = tl.load(cos_sin_ptr + position * HEAD_DIM + pair)[None, :]
    sin = tl.load(cos_sin_ptr + position * HEAD_DIM + HALF + pair)[None, :]

    query_heads = tl.arange(0, QUERY_HEADS)[:, None]
    query_offsets = token * (QUERY_HEADS * HEAD_DIM) + query_heads * HEAD_DIM + pair[None, :]
    q1 = tl.load(query_ptr + query_offsets).to(tl.float32)
    q2 = tl.load(query_ptr + query_offsets + HALF).to(tl.float32)
    out_type = query_out_ptr.dtype.element_ty
    tl.store(query_out_ptr + query_offsets, (q1 * cos - q2 * sin).to(out_type))
    tl.store(query_out_ptr + query_offsets + HALF, (q2 * cos + q1 * sin).to(out_type))

    kv_heads = tl.arange(0, KV_HEADS)[:, None]
    key_offsets = token * (KV_HEADS * HEAD_DIM) + kv_heads * HEAD_DIM + pair[None, :]
    cache_offsets = slot * (KV_HEADS * HEAD_DIM) + kv_heads * HEAD_DIM + pair[None, :]
    k1 = tl.load(key_ptr + key_offsets).to(tl.float32)
    k2 = tl.load(key_ptr + key_offsets + HALF).to(tl.float32)
    cache_type = key_cache_ptr.dtype.element_ty
    tl.store(key_cache_ptr + cache_offsets, (k1 * cos - k2 * sin).to(cache_type))
    tl.store(key_cache_ptr + cache_offsets + HALF, (k2 * cos + k1 * sin).to(cache_type))

    row = tl.arange(0, KV_HEADS * HEAD_DIM)
    values = tl.load(value_ptr + token * (KV_HEADS * HEAD_DIM) + row)
    tl.store(value_cache_ptr + slot * (KV_HEADS * HEAD_DIM) + row, values)


def _copy(source):
    target = torch.empty_like(source)
    n_elements = source.numel()
    _copy_kernel[(triton.cdiv(n_elements, COPY_BLOCK),)](source, target, n_elements, BLOCK=COPY_BLOCK, num_warps=8)
    return target


def solve(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    query, key, value = query.contiguous(), key.contiguous(), value.contiguous()
    cos_sin_cache = cos_sin_cache.contiguous()
    new_keys = _copy(key_cache.contiguous())
    new_values = _copy(value_cache.contiguous())
    rotated_query = torch.empty_like(query)
    num_tokens, query_heads, head_dim = query.shape
    _rope_write_kernel[(num_tokens,)](positions.contiguous(), query, key, value, cos_sin_cache, rotated_query,
                                      new_keys, new_values, slot_mapping.contiguous(), QUERY_HEADS=query_heads,
                                      KV_HEADS=key.shape[1], HEAD_DIM=head_dim, HALF=head_dim // 2, num_warps=4)
    return rotated_query, new_keys, new_values
