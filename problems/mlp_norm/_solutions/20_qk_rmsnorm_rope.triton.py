"""Triton solution for 20_qk_rmsnorm_rope: one program per token normalises and rotates all its query and key heads."""

import torch
import triton
import triton.language as tl

EPS = 1e-6
QUERY_HEADS = 32
KV_HEADS = 8


@triton.jit
def _qk_norm_rope_kernel(qkv_ptr, q_weight_ptr, k_weight_ptr, positions_ptr, cos_sin_ptr, query_out_ptr, key_out_ptr,
                         eps, QUERY_HEADS: tl.constexpr, KV_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                         HALF: tl.constexpr, ROW: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    position = tl.load(positions_ptr + token).to(tl.int64)
    pair = tl.arange(0, HALF)
    cos = tl.load(cos_sin_ptr + position * HEAD_DIM + pair)[None, :]
    sin = tl.load(cos_sin_ptr + position * HEAD_DIM + HALF + pair)[None, :]
    out_type = query_out_ptr.dtype.element_ty

    # queries: [QUERY_HEADS, HALF] halves of each head
    heads = tl.arange(0, QUERY_HEADS)[:, None]
    source = token * ROW + heads * HEAD_DIM + pair[None, :]
    x1 = tl.load(qkv_ptr + source).to(tl.float32)
    x2 = tl.load(qkv_ptr + source + HALF).to(tl.float32)
    inverse_rms = tl.rsqrt((tl.sum(x1 * x1, axis=1) + tl.sum(x2 * x2, axis=1)) / HEAD_DIM + eps)[:, None]
    n1 = x1 * inverse_rms * tl.load(q_weight_ptr + pair).to(tl.float32)[None, :]
    n2 = x2 * inverse_rms * tl.load(q_weight_ptr + HALF + pair).to(tl.float32)[None, :]
    target = token * (QUERY_HEADS * HEAD_DIM) + heads * HEAD_DIM + pair[None, :]
    tl.store(query_out_ptr + target, (n1 * cos - n2 * sin).to(out_type))
    tl.store(query_out_ptr + target + HALF, (n2 * cos + n1 * sin).to(out_type))

    # keys: [KV_HEADS, HALF], right after the query heads in the fused row
    kv_heads = tl.arange(0, KV_HEADS)[:, None]
    source = token * ROW + QUERY_HEADS * HEAD_DIM + kv_heads * HEAD_DIM + pair[None, :]
    y1 = tl.load(qkv_ptr + source).to(tl.float32)
    y2 = tl.load(qkv_ptr + source + HALF).to(tl.float32)
    key_inverse_rms = tl.rsqrt((tl.sum(y1 * y1, axis=1) + tl.sum(y2 * y2, axis=1)) / HEAD_DIM + eps)[:, None]
    m1 = y1 * key_inverse_rms * tl.load(k_weight_ptr + pair).to(tl.float32)[None, :]
    m2 = y2 * key_inverse_rms * tl.load(k_weight_ptr + HALF + pair).to(tl.float32)[None, :]
    target = token * (KV_HEADS * HEAD_DIM) + kv_heads * HEAD_DIM + pair[None, :]
    tl.store(key_out_ptr + target, (m1 * cos - m2 * sin).to(out_type))
    tl.store(key_out_ptr + target + HALF, (m2 * cos + m1 * sin).to(out_type))


def solve(qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache):
    qkv = qkv.contiguous()
    tokens, row = qkv.shape
    head_dim = q_norm_weight.shape[0]
    query = torch.empty(tokens, QUERY_HEADS, head_dim, device=qkv.device, dtype=qkv.dtype)
    key = torch.empty(tokens, KV_HEADS, head_dim, device=qkv.device, dtype=qkv.dtype)
    _qk_norm_rope_kernel[(tokens,)](qkv, q_norm_weight.contiguous(), k_norm_weight.contiguous(), positions.contiguous(),
                                    cos_sin_cache.contiguous(), query, key, EPS, QUERY_HEADS=QUERY_HEADS,
                                    KV_HEADS=KV_HEADS, HEAD_DIM=head_dim, HALF=head_dim // 2, ROW=row, num_warps=4)
    return query, key
