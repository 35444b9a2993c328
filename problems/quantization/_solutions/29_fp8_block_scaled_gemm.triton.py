"""Triton fp8 block-scaled GEMM: fp8 tensor-core tiles per 128-wide K block, scaled by both blocks' scales in fp32."""

import torch
import triton
import triton.language as tl

BLOCK_M = 128
BLOCK_N = 128  # one weight scale block along N
BLOCK_K = 128  # one scale block along K
GROUP_M = 8


@triton.jit
def _fp8_block_gemm_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, out_ptr, M, N, K, K_BLOCKS,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                           GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pids_in_group = GROUP_M * num_pid_n
    group = pid // pids_in_group
    first_m = group * GROUP_M
    group_rows = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % pids_in_group) % group_rows
    pid_n = (pid % pids_in_group) // group_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]  # [BLOCK_M, BLOCK_K]
    b_ptrs = b_ptr + offs_n[None, :] * K + offs_k[:, None]  # [BLOCK_K, BLOCK_N], weights stored [N, K]
    a_scale_ptrs = a_scale_ptr + offs_m * K_BLOCKS
    b_scale_ptrs = b_scale_ptr + (pid_n * BLOCK_N // BLOCK_K) * K_BLOCKS
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, K_BLOCKS):
        a = tl.load(a_ptrs)  # whole tiles: solve() checks the shapes
        b = tl.load(b_ptrs)
        a_scale = tl.load(a_scale_ptrs + kb)
        b_scale = tl.load(b_scale_ptrs + kb)
        acc += tl.dot(a, b) * a_scale[:, None] * b_scale
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    out_ptrs = out_ptr + offs_m[:, None] * N + offs_n[None, :]
    tl.store(out_ptrs, acc.to(tl.bfloat16))


def solve(a, a_scales, b, b_scales):
    a = a.contiguous()
    b = b.contiguous()
    a_scales = a_scales.contiguous()
    b_scales = b_scales.contiguous()
    m, k = a.shape
    n = b.shape[0]
    assert m % BLOCK_M == 0 and n % BLOCK_N == 0 and k % BLOCK_K == 0, "shapes must be whole 128 blocks"
    out = torch.empty((m, n), dtype=torch.bfloat16, device=a.device)
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    _fp8_block_gemm_kernel[grid](a, a_scales, b, b_scales, out, m, n, k, k // BLOCK_K,
                                 BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                                 num_warps=8, num_stages=3)
    return out
