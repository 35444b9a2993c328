"""Triton W8A8 GEMM: int8 tensor-core tiles accumulated exactly in int32, dequantised by both scales into fp16."""

import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 128


@triton.jit
def _w8a8_gemm_kernel(a_ptr, w_ptr, a_scale_ptr, w_scale_ptr, out_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]  # [BLOCK_M, BLOCK_K], row-major activations
    w_ptrs = w_ptr + offs_n[None, :] * K + offs_k[:, None]  # [BLOCK_K, BLOCK_N], weights stored [N, K]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_mask[None, :], other=0)
        w = tl.load(w_ptrs, mask=k_mask[:, None] & mask_n[None, :], other=0)
        acc += tl.dot(a, w)  # int8 x int8 -> exact int32
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    a_scale = tl.load(a_scale_ptr + offs_m, mask=mask_m, other=0.0)
    w_scale = tl.load(w_scale_ptr + offs_n, mask=mask_n, other=0.0)
    result = acc.to(tl.float32) * a_scale[:, None] * w_scale[None, :]
    out_ptrs = out_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(out_ptrs, result.to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])


def solve(activations, weights, activation_scales, weight_scales):
    activations = activations.contiguous()
    weights = weights.contiguous()
    activation_scales = activation_scales.contiguous()
    weight_scales = weight_scales.contiguous()
    m, k = activations.shape
    n = weights.shape[0]
    out = torch.empty((m, n), dtype=torch.float16, device=activations.device)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _w8a8_gemm_kernel[grid](activations, weights, activation_scales, weight_scales, out, m, n, k,
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3)
    return out
