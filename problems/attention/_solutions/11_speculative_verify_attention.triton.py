"""Triton solution: split-K flash decoding where each program's 16 rows are 4 tokens x 4 heads of one KV head's group.

Each row sees the cache up to its own token's position (causal among the draft tokens); pass 1 writes normalised
partial outputs and log2-sum-exps per cache slice, pass 2 merges them.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_N = 64  # cached tokens per tile
NUM_SPLITS = 16  # cache slices per (sequence, KV head)


@triton.jit
def _verify_slice(q_ptr, k_ptr, v_ptr, lens_ptr, part_o_ptr, part_lse_ptr,
                  stride_qb, stride_qt, stride_qh, stride_kb, stride_ks, stride_kh,
                  stride_vb, stride_vs, stride_vh, scale_log2, split_len,
                  NEW_TOKENS: tl.constexpr, QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr,
                  GROUP: tl.constexpr, ROWS: tl.constexpr, NUM_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr,
                  BLOCK_N: tl.constexpr):
    pid_bh = tl.program_id(0)
    split = tl.program_id(1)
    b = pid_bh // KV_HEADS
    h = pid_bh % KV_HEADS
    seq_len = tl.load(lens_ptr + b)
    rows = tl.arange(0, ROWS)
    token = rows // GROUP
    heads = h * GROUP + rows % GROUP
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + b * stride_qb + token[:, None] * stride_qt + heads[:, None] * stride_qh + dims[None, :])
    last_visible = seq_len - NEW_TOKENS + token  # the row's own cache position

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
        visible = ok[None, :] & (offs[None, :] <= last_visible[:, None])
        s = tl.where(visible, s, float("-inf"))
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
    part_rows = ((b * NEW_TOKENS + token) * QUERY_HEADS + heads) * NUM_SPLITS + split
    tl.store(part_o_ptr + part_rows[:, None] * HEAD_DIM + dims[None, :], out)
    tl.store(part_lse_ptr + part_rows, lse)


@triton.jit
def _merge_slices(part_o_ptr, part_lse_ptr, out_ptr, NUM_SPLITS: tl.constexpr, HEAD_DIM: tl.constexpr):
    row = tl.program_id(0)  # (sequence, token, query head)
    splits = tl.arange(0, NUM_SPLITS)
    dims = tl.arange(0, HEAD_DIM)
    lse = tl.load(part_lse_ptr + row * NUM_SPLITS + splits)
    weights = tl.exp2(lse - tl.max(lse, 0))
    parts = tl.load(part_o_ptr + (row * NUM_SPLITS + splits)[:, None] * HEAD_DIM + dims[None, :])
    merged = tl.sum(parts * weights[:, None], 0) / tl.sum(weights, 0)
    tl.store(out_ptr + row * HEAD_DIM + dims, merged.to(out_ptr.dtype.element_ty))


def solve(q, k_cache, v_cache, cache_lens):
    q = q.contiguous()
    k_cache = k_cache.contiguous()
    v_cache = v_cache.contiguous()
    batch, new_tokens, query_heads, dim = q.shape
    context, kv_heads = k_cache.shape[1], k_cache.shape[2]
    rows = batch * new_tokens * query_heads
    part_o = torch.empty(rows * NUM_SPLITS, dim, device=q.device, dtype=torch.float32)
    part_lse = torch.empty(rows * NUM_SPLITS, device=q.device, dtype=torch.float32)
    split_len = triton.cdiv(context, NUM_SPLITS)
    _verify_slice[(batch * kv_heads, NUM_SPLITS)](
        q, k_cache, v_cache, cache_lens, part_o, part_lse,
        q.stride(0), q.stride(1), q.stride(2), k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        math.log2(math.e) / math.sqrt(dim), split_len,
        NEW_TOKENS=new_tokens, QUERY_HEADS=query_heads, KV_HEADS=kv_heads, GROUP=query_heads // kv_heads,
        ROWS=new_tokens * (query_heads // kv_heads), NUM_SPLITS=NUM_SPLITS, HEAD_DIM=dim, BLOCK_N=BLOCK_N,
        num_warps=4, num_stages=2)
    out = torch.empty_like(q)
    _merge_slices[(rows,)](part_o, part_lse, out, NUM_SPLITS=NUM_SPLITS, HEAD_DIM=dim, num_warps=4)
    return out
