"""Triton solution for 70_nvfp4_dequant_gemm: 64x64 output tiles; each step decodes 32 packed bytes per weight row into bf16 (e2m1 value times its e4m3 block scale, exact in bf16) for the even and odd input columns and accumulates two tl.dot; the tensor scale is applied at the end."""

import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
BLOCK_BYTES = 32  # 64 input columns per step
NV_BLOCK = 16


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
def _nvfp4_gemm_kernel(x_ptr, w_ptr, scales_ptr, tensor_scale_ptr, out_ptr, m_size, n_size, k_size,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_BYTES: tl.constexpr,
                       NV_BLOCK: tl.constexpr):
    ns = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ms = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    m_ok = ms < m_size
    bytes_in_row = k_size // 2
    scales_in_row = k_size // NV_BLOCK
    jb = tl.arange(0, BLOCK_BYTES)
    x_rows = ms.to(tl.int64)[:, None] * k_size
    w_rows = ns.to(tl.int64)[:, None] * bytes_in_row
    s_rows = ns.to(tl.int64)[:, None] * scales_in_row
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for byte0 in range(0, bytes_in_row, BLOCK_BYTES):
        byte_cols = byte0 + jb
        a_even = tl.load(x_ptr + x_rows + 2 * byte_cols[None, :], mask=m_ok[:, None], other=0.0)
        a_odd = tl.load(x_ptr + x_rows + 2 * byte_cols[None, :] + 1, mask=m_ok[:, None], other=0.0)
        packed = tl.load(w_ptr + w_rows + byte_cols[None, :])
        scale = tl.load(scales_ptr + s_rows + (byte_cols // (NV_BLOCK // 2))[None, :]).to(tl.float32)
        w_even = (_e2m1_to_float(packed & 15) * scale).to(tl.bfloat16)
        w_odd = (_e2m1_to_float(packed >> 4) * scale).to(tl.bfloat16)
        acc = tl.dot(a_even, tl.trans(w_even), acc)
        acc = tl.dot(a_odd, tl.trans(w_odd), acc)
    tensor_scale = tl.load(tensor_scale_ptr)
    tl.store(out_ptr + ms.to(tl.int64)[:, None] * n_size + ns[None, :],
             (acc * tensor_scale).to(out_ptr.dtype.element_ty), mask=m_ok[:, None])


def solve(x, w_packed, block_scales, tensor_scale):
    x, w_packed = x.contiguous(), w_packed.contiguous()
    block_scales, tensor_scale = block_scales.contiguous(), tensor_scale.contiguous()
    m_size, k_size = x.shape
    n_size = w_packed.shape[0]
    out = torch.empty(m_size, n_size, dtype=x.dtype, device=x.device)
    grid = (n_size // BLOCK_N, triton.cdiv(m_size, BLOCK_M))
    _nvfp4_gemm_kernel[grid](x, w_packed, block_scales, tensor_scale, out, m_size, n_size, k_size, BLOCK_M=BLOCK_M,
                             BLOCK_N=BLOCK_N, BLOCK_BYTES=BLOCK_BYTES, NV_BLOCK=NV_BLOCK, num_warps=4, num_stages=3)
    return out
