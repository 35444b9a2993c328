"""Triton solution: one program per (sequence, page); for each KV head it moves the page's [16, 128] K and V tiles
into the token-major send rows, so every cached byte of a live slot is read once and written once.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _pack_page(k_ptr, v_ptr, table_ptr, cu_ptr, out_ptr, stride_table, total_tokens,
               KV_HEADS: tl.constexpr, PAGE_SIZE: tl.constexpr, HEAD_DIM: tl.constexpr):
    b = tl.program_id(0)
    page_index = tl.program_id(1)
    seq_start = tl.load(cu_ptr + b)
    seq_len = tl.load(cu_ptr + b + 1) - seq_start
    first = page_index * PAGE_SIZE
    if first < seq_len:
        page = tl.load(table_ptr + b * stride_table + page_index).to(tl.int64)
        slots = tl.arange(0, PAGE_SIZE)
        dims = tl.arange(0, HEAD_DIM)
        ok = (first + slots < seq_len)[:, None]
        rows = (seq_start + first + slots).to(tl.int64)
        value_half = total_tokens.to(tl.int64) * (KV_HEADS * HEAD_DIM)  # send[1] starts after all keys
        for h in tl.static_range(KV_HEADS):
            src = ((page * KV_HEADS + h) * PAGE_SIZE + slots)[:, None] * HEAD_DIM + dims[None, :]
            dst = (rows * KV_HEADS + h)[:, None] * HEAD_DIM + dims[None, :]
            tl.store(out_ptr + dst, tl.load(k_ptr + src, mask=ok), mask=ok)
            tl.store(out_ptr + value_half + dst, tl.load(v_ptr + src, mask=ok), mask=ok)


def solve(k_cache, v_cache, block_table, cu_seq_lens):
    k_cache, v_cache, block_table = k_cache.contiguous(), v_cache.contiguous(), block_table.contiguous()
    num_pages, kv_heads, page_size, head_dim = k_cache.shape
    total = int(cu_seq_lens[-1].item())  # the send buffer's size (a read, no arithmetic)
    out = torch.empty(2, total, kv_heads, head_dim, device=k_cache.device, dtype=k_cache.dtype)
    grid = (block_table.shape[0], block_table.shape[1])
    _pack_page[grid](k_cache, v_cache, block_table, cu_seq_lens, out, block_table.stride(0), total,
                     KV_HEADS=kv_heads, PAGE_SIZE=page_size, HEAD_DIM=head_dim, num_warps=4)
    return out
