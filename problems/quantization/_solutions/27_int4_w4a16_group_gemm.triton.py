"""Triton W4A16 GEMM: int4 nibbles unpacked and dequantised per 128-group in registers, fp16 tensor-core dots, split-K."""

import torch
import triton
import triton.language as tl

BLOCK_M = 16
BLOCK_N = 64
GROUP_K = 128  # one scale/zero group per K step
SPLIT_K = 8


@triton.jit
def _w4a16_partial_kernel(x_ptr, qweight_ptr, scales_ptr, zeros_ptr, partial_ptr, M, N, K, K_PER_SPLIT,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_s = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_g = tl.arange(0, GROUP_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    shifts = (offs_g % 8) * 4  # nibble position of k inside its int32 word
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    k_begin = pid_s * K_PER_SPLIT
    for k0 in range(k_begin, k_begin + K_PER_SPLIT, GROUP_K):
        offs_k = k0 + offs_g
        x = tl.load(x_ptr + offs_m[:, None] * K + offs_k[None, :], mask=mask_m[:, None], other=0.0)
        packed = tl.load(qweight_ptr + (offs_k[:, None] // 8) * N + offs_n[None, :], mask=mask_n[None, :], other=0)
        nibbles = (packed >> shifts[:, None]) & 0xF
        group = k0 // GROUP_K
        scale = tl.load(scales_ptr + group * N + offs_n, mask=mask_n, other=0.0)
        zero = tl.load(zeros_ptr + group * N + offs_n, mask=mask_n, other=0.0)
        weight = (nibbles.to(tl.float16) - zero[None, :]) * scale[None, :]  # [GROUP_K, BLOCK_N] fp16
        acc += tl.dot(x, weight)
    out_ptrs = partial_ptr + pid_s * M * N + offs_m[:, None] * N + offs_n[None, :]
    tl.store(out_ptrs, acc, mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def _split_sum_kernel(partial_ptr, out_ptr, total, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLIT_K):
        acc += tl.load(partial_ptr + s * total + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, acc.to(tl.float16), mask=mask)


def solve(x, qweight, scales, zeros):
    x = x.contiguous()
    qweight = qweight.contiguous()
    scales = scales.contiguous()
    zeros = zeros.contiguous()
    m, k = x.shape
    n = qweight.shape[1]
    assert m <= BLOCK_M and k % (GROUP_K * SPLIT_K) == 0, "decode batch of at most 16 tokens, K in whole groups"
    partial = torch.empty((SPLIT_K, m, n), dtype=torch.float32, device=x.device)
    _w4a16_partial_kernel[(triton.cdiv(n, BLOCK_N), SPLIT_K)](
        x, qweight, scales, zeros, partial, m, n, k, k // SPLIT_K,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, GROUP_K=GROUP_K, num_warps=4, num_stages=3)
    out = torch.empty((m, n), dtype=torch.float16, device=x.device)
    total = m * n
    _split_sum_kernel[(triton.cdiv(total, 1024),)](partial, out, total, SPLIT_K=SPLIT_K, BLOCK=1024)
    return out
