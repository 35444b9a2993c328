"""Triton solution: one program per (sequence, 16 kept rows); the rows' original positions, pages and rotation
angles are computed once, then each KV head's two key halves are re-rotated in fp32 and the values copied.
"""

import torch
import triton
import triton.language as tl

ROWS = 16
KEEP = 1024
SINKS = 4


@triton.jit
def _compact(k_ptr, v_ptr, table_ptr, lens_ptr, freq_ptr, k_out_ptr, v_out_ptr, stride_table,
             KEEP: tl.constexpr, SINKS: tl.constexpr, PAGE_SIZE: tl.constexpr, KV_HEADS: tl.constexpr,
             HEAD_DIM: tl.constexpr, HALF: tl.constexpr, ROWS: tl.constexpr):
    b = tl.program_id(0)
    j = tl.program_id(1) * ROWS + tl.arange(0, ROWS)
    seq_len = tl.load(lens_ptr + b)
    pos = tl.where(j < SINKS, j, seq_len - (KEEP - SINKS) + (j - SINKS))
    page = tl.load(table_ptr + b * stride_table + pos // PAGE_SIZE).to(tl.int64)
    src_rows = (page * PAGE_SIZE + pos % PAGE_SIZE) * (KV_HEADS * HEAD_DIM)
    dst_rows = (b * KEEP + j).to(tl.int64) * (KV_HEADS * HEAD_DIM)
    pairs = tl.arange(0, HALF)
    angle = (j - pos).to(tl.float32)[:, None] * tl.load(freq_ptr + pairs)[None, :]
    cos = tl.cos(angle)
    sin = tl.sin(angle)
    dims = tl.arange(0, HEAD_DIM)
    for h in tl.static_range(KV_HEADS):
        lo = src_rows[:, None] + h * HEAD_DIM + pairs[None, :]
        x1 = tl.load(k_ptr + lo).to(tl.float32)
        x2 = tl.load(k_ptr + lo + HALF).to(tl.float32)
        out_lo = dst_rows[:, None] + h * HEAD_DIM + pairs[None, :]
        tl.store(k_out_ptr + out_lo, (x1 * cos - x2 * sin).to(k_out_ptr.dtype.element_ty))
        tl.store(k_out_ptr + out_lo + HALF, (x2 * cos + x1 * sin).to(k_out_ptr.dtype.element_ty))
        row = h * HEAD_DIM + dims[None, :]
        tl.store(v_out_ptr + dst_rows[:, None] + row, tl.load(v_ptr + src_rows[:, None] + row))


def solve(k_cache, v_cache, block_table, seq_lens, inv_freq):
    k_cache, v_cache, block_table = k_cache.contiguous(), v_cache.contiguous(), block_table.contiguous()
    num_pages, page_size, kv_heads, head_dim = k_cache.shape
    batch = block_table.shape[0]
    keys = torch.empty(batch, KEEP, kv_heads, head_dim, device=k_cache.device, dtype=k_cache.dtype)
    values = torch.empty_like(keys)
    _compact[(batch, KEEP // ROWS)](k_cache, v_cache, block_table, seq_lens.contiguous(), inv_freq.contiguous(),
                                    keys, values, block_table.stride(0), KEEP=KEEP, SINKS=SINKS, PAGE_SIZE=page_size,
                                    KV_HEADS=kv_heads, HEAD_DIM=head_dim, HALF=head_dim // 2, ROWS=ROWS,
                                    num_warps=4)
    return keys, values
