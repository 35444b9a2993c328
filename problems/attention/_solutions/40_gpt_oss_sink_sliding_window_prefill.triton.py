"""Triton solution: banded flash attention. One program per (sequence, query head, 64 queries) visits only the key
tiles that meet the 128-token band (at most three), and starts its online softmax from the sink: running max = sink,
running sum = 1, accumulator 0, so the sink joins the denominator without a value. fp32 state, log2 units.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
WINDOW = 128
LOG2E = 1.4426950408889634


@triton.jit
def _banded_attention(q_ptr, k_ptr, v_ptr, sink_ptr, out_ptr, seq_len, scale_log2,
                      QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                      WINDOW: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, LOG2E: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // QUERY_HEADS
    h = bh % QUERY_HEADS
    kv_h = h // (QUERY_HEADS // KV_HEADS)
    rows = start_m + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    row_ok = rows < seq_len
    q_offs = ((b * seq_len + rows).to(tl.int64) * QUERY_HEADS + h) * HEAD_DIM
    q = tl.load(q_ptr + q_offs[:, None] + dims[None, :], mask=row_ok[:, None], other=0.0)
    sink = tl.load(sink_ptr + h) * LOG2E
    m_i = tl.zeros([BLOCK_M], tl.float32) + sink
    l_i = tl.zeros([BLOCK_M], tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    lo = tl.maximum(start_m - (WINDOW - 1), 0) // BLOCK_N * BLOCK_N
    hi = tl.minimum(start_m + BLOCK_M, seq_len)
    for n0 in range(lo, hi, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        col_ok = cols < seq_len
        kv_offs = ((b * seq_len + cols).to(tl.int64) * KV_HEADS + kv_h) * HEAD_DIM
        k = tl.load(k_ptr + kv_offs[:, None] + dims[None, :], mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale_log2
        visible = (cols[None, :] <= rows[:, None]) & (rows[:, None] - cols[None, :] < WINDOW) & col_ok[None, :]
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_offs[:, None] + dims[None, :], mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(out_ptr + q_offs[:, None] + dims[None, :], out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


def solve(q, k, v, sinks):
    q, k, v, sinks = q.contiguous(), k.contiguous(), v.contiguous(), sinks.contiguous()
    batch, seq_len, query_heads, dim = q.shape
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, BLOCK_M), batch * query_heads)
    _banded_attention[grid](q, k, v, sinks, out, seq_len, LOG2E / math.sqrt(dim), QUERY_HEADS=query_heads,
                            KV_HEADS=k.shape[2], HEAD_DIM=dim, WINDOW=WINDOW, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                            LOG2E=LOG2E, num_warps=4, num_stages=2)
    return out
