"""Triton solution: FlashAttention-2 forward with a causal sliding window and tanh logit soft-capping (Gemma-2).

One program per (64-query block, query head) visits only the key tiles that intersect its window; logits are
soft-capped before the online softmax (tanh written with exp2), tl.dot on bf16 operands with fp32 accumulation.
"""

import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 32
WINDOW = 4096
SOFTCAP = 50.0
QUERY_SCALE = 256**-0.5


@triton.jit
def _window_softcap_forward(q_ptr, k_ptr, v_ptr, o_ptr, seq_len,
                            stride_qt, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh, stride_ot, stride_oh,
                            query_scale, softcap,
                            GROUP: tl.constexpr, WINDOW: tl.constexpr, HEAD_DIM: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    m_block = tl.program_id(0)
    head = tl.program_id(1)
    kv_head = head // GROUP
    offs_m = m_block * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq_len
    q = tl.load(q_ptr + offs_m[:, None] * stride_qt + head * stride_qh + dims[None, :],
                mask=row_ok[:, None], other=0.0)

    m_i = tl.full([BLOCK_M], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    k_base = k_ptr + kv_head * stride_kh
    v_base = v_ptr + kv_head * stride_vh
    lo = tl.maximum(m_block * BLOCK_M - WINDOW + 1, 0)
    lo = (lo // BLOCK_N) * BLOCK_N
    hi = tl.minimum(seq_len, (m_block + 1) * BLOCK_M)
    two_log2e_over_cap = 2.0 * 1.4426950408889634 / softcap
    for n0 in range(lo, hi, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        col_ok = offs_n < hi
        k = tl.load(k_base + offs_n[:, None] * stride_kt + dims[None, :], mask=col_ok[:, None], other=0.0)
        logits = tl.dot(q, tl.trans(k)) * query_scale
        # softcap * tanh(logits / softcap), tanh(x) = 1 - 2 / (exp(2x) + 1); exp2 saturates cleanly at both ends.
        capped = softcap * (1.0 - 2.0 / (tl.exp2(logits * two_log2e_over_cap) + 1.0))
        s = capped * 1.4426950408889634
        distance = offs_m[:, None] - offs_n[None, :]
        visible = col_ok[None, :] & (distance >= 0) & (distance < WINDOW)
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs_n[:, None] * stride_vt + dims[None, :], mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * stride_ot + head * stride_oh + dims[None, :],
             out.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])


def solve(q, k, v):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    seq_len, query_heads, dim = q.shape
    kv_heads = k.shape[1]
    out = torch.empty_like(q)
    grid = (triton.cdiv(seq_len, BLOCK_M), query_heads)
    _window_softcap_forward[grid](
        q, k, v, out, seq_len,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1), out.stride(0), out.stride(1),
        QUERY_SCALE, SOFTCAP, GROUP=query_heads // kv_heads, WINDOW=WINDOW, HEAD_DIM=dim,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=2)
    return out
