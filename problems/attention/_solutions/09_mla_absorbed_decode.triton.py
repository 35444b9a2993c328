"""Triton solution: split-K flash decoding for absorbed MLA; one program runs all 16 heads of a sequence over one slice.

Each 576-wide cache row is loaded once per program as its 512-dim latent and 64-dim RoPE parts: scores are two
tl.dot products, the latent tile is reused for the weighted sum. Pass 2 merges the slices per (sequence, head).
"""

import torch
import triton
import triton.language as tl

BLOCK_N = 16  # cached tokens per tile (small: the 16x512 fp32 accumulator already takes 64 registers a thread)
NUM_SPLITS = 16  # cache slices per sequence
LATENT_DIM = 512
ROPE_DIM = 64
SOFTMAX_SCALE = (128 + 64) ** -0.5  # qk_nope_head_dim + qk_rope_head_dim, as in the problem
LOG2E = 1.4426950408889634


@triton.jit
def _mla_slice(q_ptr, kv_ptr, lens_ptr, part_o_ptr, part_lse_ptr,
               stride_qb, stride_qh, stride_kb, stride_ks, scale_log2, split_len,
               HEADS: tl.constexpr, LATENT_DIM: tl.constexpr, ROPE_DIM: tl.constexpr,
               NUM_SPLITS: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    split = tl.program_id(1)
    seq_len = tl.load(lens_ptr + b)
    heads = tl.arange(0, HEADS)
    latent = tl.arange(0, LATENT_DIM)
    rope = tl.arange(0, ROPE_DIM)
    q_rows = q_ptr + b * stride_qb + heads[:, None] * stride_qh
    q_latent = tl.load(q_rows + latent[None, :])
    q_rope = tl.load(q_rows + LATENT_DIM + rope[None, :])

    start = split * split_len
    end = tl.minimum(start + split_len, seq_len)
    m_i = tl.full([HEADS], -1.0e30, tl.float32)
    l_i = tl.zeros([HEADS], tl.float32)
    acc = tl.zeros([HEADS, LATENT_DIM], tl.float32)
    kv_base = kv_ptr + b * stride_kb
    for n0 in range(start, end, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        ok = offs < end
        kv_rows = kv_base + offs[:, None] * stride_ks
        c = tl.load(kv_rows + latent[None, :], mask=ok[:, None], other=0.0)  # [BLOCK_N, 512]
        pe = tl.load(kv_rows + LATENT_DIM + rope[None, :], mask=ok[:, None], other=0.0)  # [BLOCK_N, 64]
        s = tl.dot(q_latent, tl.trans(c)) + tl.dot(q_rope, tl.trans(pe))
        s = tl.where(ok[None, :], s * scale_log2, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(c.dtype), c)
        m_i = m_new

    has_keys = l_i > 0.0
    out = acc / tl.where(has_keys, l_i, 1.0)[:, None]
    lse = tl.where(has_keys, m_i + tl.log2(tl.where(has_keys, l_i, 1.0)), -1.0e30)
    part_rows = (b * HEADS + heads) * NUM_SPLITS + split
    tl.store(part_o_ptr + part_rows[:, None] * LATENT_DIM + latent[None, :], out)
    tl.store(part_lse_ptr + part_rows, lse)


@triton.jit
def _merge_slices(part_o_ptr, part_lse_ptr, out_ptr, NUM_SPLITS: tl.constexpr, DIM: tl.constexpr):
    row = tl.program_id(0)  # (sequence, head)
    splits = tl.arange(0, NUM_SPLITS)
    dims = tl.arange(0, DIM)
    lse = tl.load(part_lse_ptr + row * NUM_SPLITS + splits)
    weights = tl.exp2(lse - tl.max(lse, 0))
    parts = tl.load(part_o_ptr + (row * NUM_SPLITS + splits)[:, None] * DIM + dims[None, :])
    merged = tl.sum(parts * weights[:, None], 0) / tl.sum(weights, 0)
    tl.store(out_ptr + row * DIM + dims, merged.to(out_ptr.dtype.element_ty))


def solve(q, kv_cache, seq_lens):
    q = q.contiguous()
    kv_cache = kv_cache.contiguous()
    batch, heads, _ = q.shape
    context = kv_cache.shape[1]
    part_o = torch.empty(batch * heads * NUM_SPLITS, LATENT_DIM, device=q.device, dtype=torch.float32)
    part_lse = torch.empty(batch * heads * NUM_SPLITS, device=q.device, dtype=torch.float32)
    split_len = triton.cdiv(context, NUM_SPLITS)
    _mla_slice[(batch, NUM_SPLITS)](
        q, kv_cache, seq_lens, part_o, part_lse,
        q.stride(0), q.stride(1), kv_cache.stride(0), kv_cache.stride(1), SOFTMAX_SCALE * LOG2E, split_len,
        HEADS=heads, LATENT_DIM=LATENT_DIM, ROPE_DIM=ROPE_DIM, NUM_SPLITS=NUM_SPLITS, BLOCK_N=BLOCK_N,
        num_warps=8, num_stages=1)
    out = torch.empty(batch, heads, LATENT_DIM, device=q.device, dtype=q.dtype)
    _merge_slices[(batch * heads,)](part_o, part_lse, out, NUM_SPLITS=NUM_SPLITS, DIM=LATENT_DIM, num_warps=4)
    return out
