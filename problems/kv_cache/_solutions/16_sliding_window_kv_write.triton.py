"""Triton solution for 16_sliding_window_kv_write: cache copies, then one program per new token writes its ring slot."""

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
def _ring_write_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, start_ptr, CHUNK: tl.constexpr,
                       KV_HEADS: tl.constexpr, WINDOW: tl.constexpr, HEAD_DIM: tl.constexpr):
    program = tl.program_id(0)
    sequence = program // CHUNK
    step = program % CHUNK
    slot = (tl.load(start_ptr + sequence).to(tl.int64) + step) % WINDOW
    heads = tl.arange(0, KV_HEADS)[:, None]
    dims = tl.arange(0, HEAD_DIM)[None, :]
    source = program.to(tl.int64) * (KV_HEADS * HEAD_DIM) + heads * HEAD_DIM + dims  # key is [B, T, H, D]
    target = ((sequence.to(tl.int64) * KV_HEADS + heads) * WINDOW + slot) * HEAD_DIM + dims  # cache is [B, H, W, D]
    tl.store(key_cache_ptr + target, tl.load(key_ptr + source))
    tl.store(value_cache_ptr + target, tl.load(value_ptr + source))


def _copy(source):
    target = torch.empty_like(source)
    n_elements = source.numel()
    _copy_kernel[(triton.cdiv(n_elements, COPY_BLOCK),)](source, target, n_elements, BLOCK=COPY_BLOCK, num_warps=8)
    return target


def solve(key, value, key_cache, value_cache, start_positions):
    key, value = key.contiguous(), value.contiguous()
    new_keys = _copy(key_cache.contiguous())
    new_values = _copy(value_cache.contiguous())
    batch, chunk, kv_heads, head_dim = key.shape
    _ring_write_kernel[(batch * chunk,)](key, value, new_keys, new_values, start_positions.contiguous(), CHUNK=chunk,
                                         KV_HEADS=kv_heads, WINDOW=key_cache.shape[2], HEAD_DIM=head_dim, num_warps=4)
    return new_keys, new_values
