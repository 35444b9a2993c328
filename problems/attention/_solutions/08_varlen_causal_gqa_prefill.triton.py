"""Triton solution: FlashAttention-2 forward over packed variable-length prompts (causal, grouped-query).

One program per (128-query block, query head, prompt); blocks past a prompt's end exit at once. K/V tiles of 64
tokens stream through an online softmax with tl.dot on bf16 operands and fp32 accumulation; the loop stops at the
diagonal, so causally hidden tiles are never loaded.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_M = 128
BLOCK_N = 64


@triton.jit
def _varlen_causal_forward(q_ptr, k_ptr, v_ptr, cu_ptr, o_ptr,
                           stride_qt, stride_qh, stride_kt, stride_kh, stride_vt, stride_vh, stride_ot, stride_oh,
                           scale_log2, GROUP: tl.constexpr, HEAD_DIM: tl.constexpr,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    m_block = tl.program_id(0)
    head = tl.program_id(1)
    seq = tl.program_id(2)
    first = tl.load(cu_ptr + seq)
    length = tl.load(cu_ptr + seq + 1) - first
    if m_block * BLOCK_M >= length:
        return
    kv_head = head // GROUP
    offs_m = m_block * BLOCK_M + tl.arange(0, BLOCK_M)  # positions inside the prompt
    dims = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < length
    q = tl.load(q_ptr + (first + offs_m)[:, None] * stride_qt + head * stride_qh + dims[None, :],
                mask=row_ok[:, None], other=0.0)

    m_i = tl.full([BLOCK_M], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    k_base = k_ptr + first * stride_kt + kv_head * stride_kh
    v_base = v_ptr + first * stride_vt + kv_head * stride_vh
    hi = tl.minimum(length, (m_block + 1) * BLOCK_M)
    for n0 in range(0, hi, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        col_ok = offs_n < hi
        k = tl.load(k_base + offs_n[:, None] * stride_kt + dims[None, :], mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale_log2
        visible = col_ok[None, :] & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + offs_n[:, None] * stride_vt + dims[None, :], mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_ptr + (first + offs_m)[:, None] * stride_ot + head * stride_oh + dims[None, :],
             out.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])


def solve(q, k, v, cu_seqlens):
    q = q.contiguous()
    k = k.contiguous()
    v = v.contiguous()
    total, query_heads, dim = q.shape
    kv_heads = k.shape[1]
    num_seqs = cu_seqlens.shape[0] - 1
    out = torch.empty_like(q)
    grid = (triton.cdiv(total, BLOCK_M), query_heads, num_seqs)  # every prompt is at most `total` long
    _varlen_causal_forward[grid](
        q, k, v, cu_seqlens, out,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1), out.stride(0), out.stride(1),
        math.log2(math.e) / math.sqrt(dim), GROUP=query_heads // kv_heads, HEAD_DIM=dim,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=2)
    return out
