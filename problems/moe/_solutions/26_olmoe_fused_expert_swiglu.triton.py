"""Triton solution for the fused expert gate/up GEMM + SwiGLU: per (expert row tile, column tile) two tl.dot accumulators, SiLU(gate) * up in the epilogue."""

import torch
import triton
import triton.language as tl

BLOCK_M = 64
BLOCK_N = 64
BLOCK_K = 64


@triton.jit
def _fused_gate_up_kernel(x_ptr, w_ptr, offsets_ptr, out_ptr, intermediate, k_size,
                          NUM_EXPERTS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    tile = tl.program_id(0)
    pid_n = tl.program_id(1)
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
        expert_base = w_ptr + expert.to(tl.int64) * 2 * intermediate * k_size
        a_ptrs = x_ptr + rows[:, None].to(tl.int64) * k_size + ks[None, :]
        gate_ptrs = expert_base + cols[:, None].to(tl.int64) * k_size + ks[None, :]
        up_ptrs = gate_ptrs + intermediate * k_size
        gate_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        up_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _ in range(0, k_size, BLOCK_K):
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            gate_w = tl.load(gate_ptrs)
            up_w = tl.load(up_ptrs)
            gate_acc = tl.dot(a, tl.trans(gate_w), gate_acc)
            up_acc = tl.dot(a, tl.trans(up_w), up_acc)
            a_ptrs += BLOCK_K
            gate_ptrs += BLOCK_K
            up_ptrs += BLOCK_K
        activated = gate_acc / (1.0 + tl.exp(-gate_acc)) * up_acc
        tl.store(out_ptr + rows[:, None].to(tl.int64) * intermediate + cols[None, :],
                 activated.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])


def solve(hidden, w13, expert_offsets):
    hidden = hidden.contiguous()
    w13 = w13.contiguous()
    expert_offsets = expert_offsets.contiguous()
    num_rows, k_size = hidden.shape
    num_experts, twice_intermediate, _ = w13.shape
    intermediate = twice_intermediate // 2
    out = torch.empty(num_rows, intermediate, dtype=hidden.dtype, device=hidden.device)
    row_tiles = triton.cdiv(num_rows, BLOCK_M) + num_experts
    grid = (row_tiles, triton.cdiv(intermediate, BLOCK_N))
    _fused_gate_up_kernel[grid](hidden, w13, expert_offsets, out, intermediate, k_size, NUM_EXPERTS=num_experts,
                                BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4, num_stages=3)
    return out
