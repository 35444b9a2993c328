"""Triton solution: FlashMLA-style online softmax over the gathered rows. One program per (sequence, 32 heads) walks
the 2048 selected slots in tiles of 32 rows: scores are tl.dot of the 512 latent dims plus tl.dot of the 64 rope
dims (bf16 in, fp32 out), the running max and sum are kept in log2 units, and the [32, 512] fp32 accumulator takes
p @ latent each tile. Padded slots (-1) are masked before the softmax.
"""

import math

import torch
import triton
import triton.language as tl

BLOCK_H = 32
BLOCK_N = 32


@triton.jit
def _sparse_mla(q_ptr, kv_ptr, slot_ptr, out_ptr, scale_log2, top_k,
                HEADS: tl.constexpr, LATENT_DIM: tl.constexpr, ROPE_DIM: tl.constexpr,
                BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    width = LATENT_DIM + ROPE_DIM
    latent_dims = tl.arange(0, LATENT_DIM)
    rope_dims = tl.arange(0, ROPE_DIM)
    q_rows = (b * HEADS + heads).to(tl.int64) * width
    q_nope = tl.load(q_ptr + q_rows[:, None] + latent_dims[None, :])
    q_pe = tl.load(q_ptr + q_rows[:, None] + LATENT_DIM + rope_dims[None, :])
    m_i = tl.full([BLOCK_H], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, LATENT_DIM], tl.float32)
    for n0 in range(0, top_k, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        slots = tl.load(slot_ptr + b * top_k + offs, mask=offs < top_k, other=-1)
        ok = slots >= 0
        rows = tl.where(ok, slots, 0).to(tl.int64) * width
        k_nope = tl.load(kv_ptr + rows[:, None] + latent_dims[None, :], mask=ok[:, None], other=0.0)
        k_pe = tl.load(kv_ptr + rows[:, None] + LATENT_DIM + rope_dims[None, :], mask=ok[:, None], other=0.0)
        s = tl.dot(q_nope, tl.trans(k_nope)) + tl.dot(q_pe, tl.trans(k_pe))
        s = tl.where(ok[None, :], s * scale_log2, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(k_nope.dtype), k_nope)
        m_i = m_new
    out = acc / l_i[:, None]
    out_rows = (b * HEADS + heads).to(tl.int64) * LATENT_DIM
    tl.store(out_ptr + out_rows[:, None] + latent_dims[None, :], out.to(out_ptr.dtype.element_ty))


def solve(q, latent, topk_slots):
    q, latent, topk_slots = q.contiguous(), latent.contiguous(), topk_slots.contiguous()
    batch, heads, width = q.shape
    rope_dim = 64
    latent_dim = width - rope_dim
    top_k = topk_slots.shape[1]
    out = torch.empty(batch, heads, latent_dim, device=q.device, dtype=q.dtype)
    scale_log2 = math.log2(math.e) * 192**-0.5
    _sparse_mla[(batch, heads // BLOCK_H)](q, latent, topk_slots, out, scale_log2, top_k, HEADS=heads,
                                           LATENT_DIM=latent_dim, ROPE_DIM=rope_dim, BLOCK_H=BLOCK_H,
                                           BLOCK_N=BLOCK_N, num_warps=8, num_stages=2)
    return out
