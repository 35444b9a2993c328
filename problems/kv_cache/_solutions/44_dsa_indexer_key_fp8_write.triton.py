"""Triton solution: a byte copy of the fp8 pool and of the scale cache, then one program per 8 tokens computes each
key's amax, its power-of-two scale, and stores the fp8 codes and the scale at the token's slot.

The outputs are whole caches, so the pool copy (the same traffic as the reference's clone) bounds the speedup.
"""

import torch
import triton
import triton.language as tl

COPY_BLOCK = 16384
TOKENS = 8  # tokens per quantising program


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def _quantize_write(keys_ptr, cache_ptr, scale_ptr, slot_ptr, num_tokens,
                    TOKENS: tl.constexpr, HEAD_DIM: tl.constexpr, FP8_MAX: tl.constexpr, AMAX_FLOOR: tl.constexpr):
    tokens = tl.program_id(0) * TOKENS + tl.arange(0, TOKENS)
    ok = tokens < num_tokens
    dims = tl.arange(0, HEAD_DIM)
    x = tl.load(keys_ptr + tokens.to(tl.int64)[:, None] * HEAD_DIM + dims[None, :], mask=ok[:, None],
                other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), 1), AMAX_FLOOR)
    scale = tl.exp2(tl.ceil(tl.log2(amax / FP8_MAX)))
    codes = tl.minimum(tl.maximum(x / scale[:, None], -FP8_MAX), FP8_MAX)
    slots = tl.load(slot_ptr + tokens, mask=ok, other=0).to(tl.int64)
    tl.store(cache_ptr + slots[:, None] * HEAD_DIM + dims[None, :], codes.to(cache_ptr.dtype.element_ty),
             mask=ok[:, None])
    tl.store(scale_ptr + slots, scale, mask=ok)


def _copy(source):
    target = torch.empty_like(source)
    raw_source, raw_target = source.view(torch.uint8), target.view(torch.uint8)
    n_elements = raw_source.numel()
    _copy_kernel[(triton.cdiv(n_elements, COPY_BLOCK),)](raw_source, raw_target, n_elements, BLOCK=COPY_BLOCK,
                                                         num_warps=8)
    return target


def solve(keys, key_cache, scale_cache, slot_mapping):
    keys = keys.contiguous()
    new_keys = _copy(key_cache.contiguous())
    new_scales = _copy(scale_cache.contiguous())
    num_tokens, head_dim = keys.shape
    _quantize_write[(triton.cdiv(num_tokens, TOKENS),)](keys, new_keys, new_scales, slot_mapping.contiguous(),
                                                        num_tokens, TOKENS=TOKENS, HEAD_DIM=head_dim, FP8_MAX=448.0,
                                                        AMAX_FLOOR=1e-4, num_warps=4)
    return new_keys, new_scales
