"""Triton solution: split-K flash decoding; each program runs one KV head's query group over one slice of the cache.

Pass 1 keeps an online softmax over its slice (tl.dot on fp16 tiles, fp32 state) and writes the normalised partial
output with its log2-sum-exp; pass 2 merges the slices of each query head.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_N = 64  # cached tokens per tile
NUM_SPLITS = 16  # cache slices per (sequence, KV head)
ROWS = 16  # query rows per program: the group of 4 heads, padded to tl.dot's minimum


@triton.jit
def _decode_slice(q_ptr, k_ptr, v_ptr, lens_ptr, part_o_ptr, part_lse_ptr,
                  stride_qb, stride_qh, stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs,
                  scale_log2, split_len,
                  QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, GROUP: tl.constexpr, NUM_SPLITS: tl.constexpr,
                  ROWS: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
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
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    for n0 in range(start, end, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        ok = offs < end
        k = tl.load(k_base + offs[:, None] * stride_ks + dims[None, :], mask=ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale_log2
        s = tl.where(ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs[:, None] * stride_vs + dims[None, :], mask=ok[:, None], other=0.0)
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


def solve(q, k_cache, v_cache, seq_lens):
    q = q.contiguous()
    k_cache = k_cache.contiguous()
    v_cache = v_cache.contiguous()
    batch, query_heads, dim = q.shape
    kv_heads, context = k_cache.shape[1], k_cache.shape[2]
    part_o = torch.empty(batch * query_heads * NUM_SPLITS, dim, device=q.device, dtype=torch.float32)
    part_lse = torch.empty(batch * query_heads * NUM_SPLITS, device=q.device, dtype=torch.float32)
    split_len = triton.cdiv(context, NUM_SPLITS)
    _decode_slice[(batch * kv_heads, NUM_SPLITS)](
        q, k_cache, v_cache, seq_lens, part_o, part_lse,
        q.stride(0), q.stride(1), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        math.log2(math.e) / math.sqrt(dim), split_len,
        QUERY_HEADS=query_heads, KV_HEADS=kv_heads, GROUP=query_heads // kv_heads, NUM_SPLITS=NUM_SPLITS,
        ROWS=ROWS, HEAD_DIM=dim, BLOCK_N=BLOCK_N, num_warps=4, num_stages=2)
    out = torch.empty_like(q)
    _merge_slices[(batch * query_heads,)](part_o, part_lse, out, NUM_SPLITS=NUM_SPLITS, HEAD_DIM=dim, num_warps=4)
    return out
