"""Triton solution for 69_mxfp4_moe_expert_gemv: a program per (token slot, 64 weight rows) streams the slot's expert rows once, decoding e2m1 nibbles arithmetically and applying each 32-value e8m0 scale to the block's partial dot product."""

import torch
import triton
import triton.language as tl

BLOCK_N = 64
MX_BLOCK = 32


@triton.jit
def _e2m1_to_float(codes):
    c = codes.to(tl.int32)
    magnitude = c & 7
    exponent = magnitude >> 1
    half = (magnitude & 1).to(tl.float32) * 0.5
    power = tl.where(exponent == 3, 4.0, tl.where(exponent == 2, 2.0, 1.0))
    value = tl.where(exponent == 0, half, (1.0 + half) * power)
    return tl.where((c & 8) != 0, -value, value)


@triton.jit
def _mxfp4_gemv_kernel(x_ptr, blocks_ptr, scales_ptr, bias_ptr, ids_ptr, out_ptr, out_rows, hidden,
                       TOP_K: tl.constexpr, BLOCK_N: tl.constexpr, MX_BLOCK: tl.constexpr):
    pair = tl.program_id(0)
    token = pair // TOP_K
    expert = tl.load(ids_ptr + pair).to(tl.int64)
    ns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = expert * out_rows + ns
    j = tl.arange(0, MX_BLOCK // 2)
    packed_row = hidden // 2
    scale_row = hidden // MX_BLOCK
    x_row = x_ptr + token.to(tl.int64) * hidden
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for kb in range(0, scale_row):
        packed = tl.load(blocks_ptr + rows[:, None] * packed_row + kb * (MX_BLOCK // 2) + j[None, :])
        scale_bits = tl.load(scales_ptr + rows * scale_row + kb).to(tl.int32) << 23
        scale = scale_bits.to(tl.float32, bitcast=True)  # 2^(byte - 127)
        x_even = tl.load(x_row + kb * MX_BLOCK + 2 * j).to(tl.float32)
        x_odd = tl.load(x_row + kb * MX_BLOCK + 2 * j + 1).to(tl.float32)
        low = _e2m1_to_float(packed & 15)
        high = _e2m1_to_float(packed >> 4)
        acc += tl.sum(low * x_even[None, :] + high * x_odd[None, :], axis=1) * scale
    bias = tl.load(bias_ptr + rows).to(tl.float32)
    tl.store(out_ptr + pair.to(tl.int64) * out_rows + ns, (acc + bias).to(out_ptr.dtype.element_ty))


def solve(x, w_blocks, w_scales, bias, topk_ids):
    x, w_blocks, w_scales = x.contiguous(), w_blocks.contiguous(), w_scales.contiguous()
    bias, topk_ids = bias.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    _, out_rows, packed_row = w_blocks.shape
    hidden = packed_row * 2
    out = torch.empty(tokens, top_k, out_rows, dtype=x.dtype, device=x.device)
    _mxfp4_gemv_kernel[(tokens * top_k, out_rows // BLOCK_N)](x, w_blocks, w_scales, bias, topk_ids, out, out_rows,
                                                              hidden, TOP_K=top_k, BLOCK_N=BLOCK_N,
                                                              MX_BLOCK=MX_BLOCK, num_warps=4)
    return out
