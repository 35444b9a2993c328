"""Triton solution: split-K flash decoding over a paged cache; 64-token tiles gather their pages via the block table.

Pass 1: one program per (sequence, KV head, cache slice) runs an online softmax for the 8 query heads of the group
(tl.dot on bf16 tiles, fp32 state) and writes the normalised partial output plus its log2-sum-exp; pass 2 merges.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_N = 64  # cached tokens per tile (4 pages)
NUM_SPLITS = 16  # cache slices per (sequence, KV head)
ROWS = 16  # query rows per program: the group of 8 heads, padded to tl.dot's minimum


@triton.jit
def _paged_decode_slice(q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, part_o_ptr, part_lse_ptr,
                        stride_qb, stride_qh, stride_tb, stride_kp, stride_ks, stride_kh,
                        stride_vp, stride_vs, stride_vh, scale_log2, split_len,
                        QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, GROUP: tl.constexpr,
                        PAGE_SIZE: tl.constexpr, NUM_SPLITS: tl.constexpr, ROWS: tl.constexpr,
                        HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_bh = tl.program_id(0)
    split = tl.program_id(1)
    b = pid_bh // KV_HEADS
    h = pid_bh % KV_HEADS
    seq_len = tl.load(lens_ptr + b)
    rows = tl.arange(0, ROWS)
    dims = tl.arange(0, HEAD_DIM)
    row_ok = rows < GROUP
    heads = h * GROUP + rows
    q = tl.load(q_ptr + b * stride_qb + heads[:, None] * stride_qh + dims[None, :], mask=row_ok[:, None], other=0.0)

    start = split * split_len
    end = tl.minimum(start + split_len, seq_len)
    m_i = tl.full([ROWS], -1.0e30, tl.float32)
    l_i = tl.zeros([ROWS], tl.float32)
    acc = tl.zeros([ROWS, HEAD_DIM], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        ok = offs < end
        page = tl.load(table_ptr + b * stride_tb + offs // PAGE_SIZE, mask=ok, other=0)
        slot = offs % PAGE_SIZE
        k_rows = page.to(tl.int64) * stride_kp + slot * stride_ks + h * stride_kh
        v_rows = page.to(tl.int64) * stride_vp + slot * stride_vs + h * stride_vh
        k = tl.load(k_ptr + k_rows[:, None] + dims[None, :], mask=ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale_log2
        s = tl.where(ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + v_rows[:, None] + dims[None, :], mask=ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    has_keys = l_i > 0.0
    out = acc / tl.where(has_keys, l_i, 1.0)[:, None]
    lse = tl.where(has_keys, m_i + tl.log2(tl.where(has_keys, l_i, 1.0)), -1.0e30)
    part_rows = (b * QUERY_HEADS + heads) * NUM_SPLITS + split
    tl.store(part_o_ptr + part_rows[:, None] * HEAD_DIM + dims[None, :], out, mask=row_ok[:, None])
    tl.store(part_lse_ptr + part_rows, lse, mask=row_ok)


@triton.jit
def _merge_slices(part_o_ptr, part_lse_ptr, out_ptr, NUM_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr):
    row = tl.program_id(0)  # (sequence, query head)
    splits = tl.arange(0, NUM_SPLITS)
    dims = tl.arange(0, HEAD_DIM)
    lse = tl.load(part_lse_ptr + row * NUM_SPLITS + splits)
    weights = tl.exp2(lse - tl.max(lse, 0))
    parts = tl.load(part_o_ptr + (row * NUM_SPLITS + splits)[:, None] * HEAD_DIM + dims[None, :])
    merged = tl.sum(parts * weights[:, None], 0) / tl.sum(weights, 0)
    tl.store(out_ptr + row * HEAD_DIM + dims, merged.to(out_ptr.dtype.element_ty))


def solve(q, k_cache, v_cache, block_table, seq_lens):
    q = q.contiguous()
    k_cache = k_cache.contiguous()
    v_cache = v_cache.contiguous()
    block_table = block_table.contiguous()
    batch, query_heads, dim = q.shape
    page_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    context = block_table.shape[1] * page_size
    part_o = torch.empty(batch * query_heads * NUM_SPLITS, dim, device=q.device, dtype=torch.float32)
    part_lse = torch.empty(batch * query_heads * NUM_SPLITS, device=q.device, dtype=torch.float32)
    split_len = triton.cdiv(context, NUM_SPLITS)
    _paged_decode_slice[(batch * kv_heads, NUM_SPLITS)](
        q, k_cache, v_cache, block_table, seq_lens, part_o, part_lse,
        q.stride(0), q.stride(1), block_table.stride(0), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        math.log2(math.e) / math.sqrt(dim), split_len,
        QUERY_HEADS=query_heads, KV_HEADS=kv_heads, GROUP=query_heads // kv_heads, PAGE_SIZE=page_size,
        NUM_SPLITS=NUM_SPLITS, ROWS=ROWS, HEAD_DIM=dim, BLOCK_N=BLOCK_N, num_warps=4, num_stages=2)
    out = torch.empty_like(q)
    _merge_slices[(batch * query_heads,)](part_o, part_lse, out, NUM_SPLITS=NUM_SPLITS, HEAD_DIM=dim, num_warps=4)
    return out
