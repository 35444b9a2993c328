"""Triton solution: each program convolves 16 channels over 512 positions of one sequence; the 4 taps are 4 shifted
masked loads of the same row (served from L1/L2), fp32 accumulation, SiLU in registers, one bf16 store.
"""

import torch
import triton
import triton.language as tl

BLOCK_C = 16
BLOCK_T = 512


@triton.jit
def _causal_conv(x_ptr, w_ptr, b_ptr, out_ptr, channels, seq_len,
                 WIDTH: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_T: tl.constexpr):
    b = tl.program_id(0)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    t = tl.program_id(2) * BLOCK_T + tl.arange(0, BLOCK_T)
    c_ok = c < channels
    rows = (b * channels + c).to(tl.int64) * seq_len
    acc = tl.zeros([BLOCK_C, BLOCK_T], tl.float32) + tl.load(b_ptr + c, mask=c_ok, other=0.0).to(tl.float32)[:, None]
    for j in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + j
        ok = c_ok[:, None] & (src >= 0)[None, :] & (src < seq_len)[None, :]
        xv = tl.load(x_ptr + rows[:, None] + src[None, :], mask=ok, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + c * WIDTH + j, mask=c_ok, other=0.0).to(tl.float32)
        acc += xv * wv[:, None]
    out = acc / (1.0 + tl.exp(-acc))
    ok = c_ok[:, None] & (t < seq_len)[None, :]
    tl.store(out_ptr + rows[:, None] + t[None, :], out.to(out_ptr.dtype.element_ty), mask=ok)


def solve(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    batch, channels, seq_len = x.shape
    out = torch.empty_like(x)
    grid = (batch, triton.cdiv(channels, BLOCK_C), triton.cdiv(seq_len, BLOCK_T))
    _causal_conv[grid](x, weight, bias, out, channels, seq_len, WIDTH=weight.shape[1], BLOCK_C=BLOCK_C,
                       BLOCK_T=BLOCK_T, num_warps=8)
    return out
