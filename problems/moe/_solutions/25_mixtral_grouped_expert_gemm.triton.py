"""Triton solution for the grouped expert GEMM: one program per (expert row tile, output column tile), found from the offsets; tl.dot on bf16."""

import torch
import triton
import triton.language as tl

BLOCK_M = 128
BLOCK_N = 128
BLOCK_K = 64


@triton.jit
def _grouped_gemm_kernel(x_ptr, w_ptr, offsets_ptr, out_ptr, n_size, k_size,
                         NUM_EXPERTS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    tile = tl.program_id(0)
    pid_n = tl.program_id(1)
    # walk the experts' row-tile counts to find which expert (and which of its row tiles) this program owns
    tiles_before = tile * 0  # int32 scalars (tensors, not Python ints)
    expert = tile * 0 - 1
    row_start = tile * 0
    row_end = tile * 0
    for e in tl.static_range(NUM_EXPERTS):
        start = tl.load(offsets_ptr + e)
        end = tl.load(offsets_ptr + e + 1)
        tiles = (end - start + BLOCK_M - 1) // BLOCK_M
        mine = (tile >= tiles_before) & (tile < tiles_before + tiles)
        expert = tl.where(mine, e, expert)
        row_start = tl.where(mine, start + (tile - tiles_before) * BLOCK_M, row_start)
        row_end = tl.where(mine, end, row_end)
        tiles_before = tiles_before + tiles
    if expert >= 0:
        rows = row_start + tl.arange(0, BLOCK_M)
        row_ok = rows < row_end
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        a_ptrs = x_ptr + rows[:, None].to(tl.int64) * k_size + ks[None, :]
        b_ptrs = w_ptr + expert.to(tl.int64) * n_size * k_size + cols[:, None].to(tl.int64) * k_size + ks[None, :]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _ in range(0, k_size, BLOCK_K):
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_ptrs)  # [BLOCK_N, BLOCK_K] of w[expert], rows = output columns
            acc = tl.dot(a, tl.trans(b), acc)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K
        tl.store(out_ptr + rows[:, None].to(tl.int64) * n_size + cols[None, :], acc.to(out_ptr.dtype.element_ty),
                 mask=row_ok[:, None])


def solve(activations, w2, expert_offsets):
    activations = activations.contiguous()
    w2 = w2.contiguous()
    expert_offsets = expert_offsets.contiguous()
    num_rows, k_size = activations.shape
    num_experts, n_size, _ = w2.shape
    out = torch.empty(num_rows, n_size, dtype=activations.dtype, device=activations.device)
    # an upper bound on the row tiles over all experts: each expert wastes at most one partial tile
    row_tiles = triton.cdiv(num_rows, BLOCK_M) + num_experts
    grid = (row_tiles, triton.cdiv(n_size, BLOCK_N))
    _grouped_gemm_kernel[grid](activations, w2, expert_offsets, out, n_size, k_size, NUM_EXPERTS=num_experts,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=8, num_stages=3)
    return out
