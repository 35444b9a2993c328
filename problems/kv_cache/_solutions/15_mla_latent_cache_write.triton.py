"""Triton solution for 15_mla_latent_cache_write: cache copy, then one program per token normalises, rotates, stores."""

import torch
import triton
import triton.language as tl

COPY_BLOCK = 8192
KV_LORA_RANK = 512
EPS = 1e-6


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def _latent_write_kernel(latent_ptr, weight_ptr, positions_ptr, cos_sin_ptr, cache_ptr, slot_ptr, eps,
                         RANK: tl.constexpr, ROPE_DIM: tl.constexpr, HALF: tl.constexpr, WIDTH: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + token).to(tl.int64)
    position = tl.load(positions_ptr + token).to(tl.int64)
    source = latent_ptr + token * WIDTH
    target = cache_ptr + slot * WIDTH
    out_type = cache_ptr.dtype.element_ty

    columns = tl.arange(0, RANK)
    compressed = tl.load(source + columns).to(tl.float32)
    inverse_rms = tl.rsqrt(tl.sum(compressed * compressed, axis=0) / RANK + eps)
    weight = tl.load(weight_ptr + columns).to(tl.float32)
    tl.store(target + columns, (compressed * inverse_rms * weight).to(out_type))

    pair = tl.arange(0, HALF)
    even = tl.load(source + RANK + 2 * pair).to(tl.float32)
    odd = tl.load(source + RANK + 2 * pair + 1).to(tl.float32)
    cos = tl.load(cos_sin_ptr + position * ROPE_DIM + pair)
    sin = tl.load(cos_sin_ptr + position * ROPE_DIM + HALF + pair)
    tl.store(target + RANK + 2 * pair, (even * cos - odd * sin).to(out_type))
    tl.store(target + RANK + 2 * pair + 1, (odd * cos + even * sin).to(out_type))


def solve(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    kv_latent, cos_sin_cache = kv_latent.contiguous(), cos_sin_cache.contiguous()
    kv_cache = kv_cache.contiguous()
    new_cache = torch.empty_like(kv_cache)
    n_elements = kv_cache.numel()
    _copy_kernel[(triton.cdiv(n_elements, COPY_BLOCK),)](kv_cache, new_cache, n_elements, BLOCK=COPY_BLOCK,
                                                         num_warps=8)
    num_tokens, width = kv_latent.shape
    rope_dim = width - KV_LORA_RANK
    _latent_write_kernel[(num_tokens,)](kv_latent, norm_weight.contiguous(), positions.contiguous(), cos_sin_cache,
                                        new_cache, slot_mapping.contiguous(), EPS, RANK=KV_LORA_RANK,
                                        ROPE_DIM=rope_dim, HALF=rope_dim // 2, WIDTH=width, num_warps=4)
    return new_cache
