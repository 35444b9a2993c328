"""Triton SiLU-mul with 1x128 fp8 group quantisation: each program turns 8 groups of a token into fp8 and scales."""

import torch
import triton
import triton.language as tl

GROUP_SIZE = 128
GROUPS_PER_PROGRAM = 8
FP8_MAX = 448.0
MIN_AMAX = 1e-10


@triton.jit
def _silu_mul_group_fp8_kernel(gate_up_ptr, q_ptr, scale_ptr, intermediate, groups_per_row,
                               FP8_MAX: tl.constexpr, MIN_AMAX: tl.constexpr, GROUP_SIZE: tl.constexpr,
                               GROUPS_PER_PROGRAM: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    first_group = tl.program_id(1) * GROUPS_PER_PROGRAM
    groups = first_group + tl.arange(0, GROUPS_PER_PROGRAM)
    cols = groups[:, None] * GROUP_SIZE + tl.arange(0, GROUP_SIZE)[None, :]  # [groups, 128] channel indices
    group_mask = groups < groups_per_row
    mask = group_mask[:, None]
    gate = tl.load(gate_up_ptr + row * 2 * intermediate + cols, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_up_ptr + row * 2 * intermediate + intermediate + cols, mask=mask, other=0.0).to(tl.float32)
    hidden = gate / (1.0 + tl.exp(-gate)) * up
    amax = tl.maximum(tl.max(tl.abs(hidden), axis=1), MIN_AMAX)
    scale = amax / FP8_MAX
    q = tl.minimum(tl.maximum(hidden / scale[:, None], -FP8_MAX), FP8_MAX)
    tl.store(q_ptr + row * intermediate + cols, q.to(q_ptr.dtype.element_ty), mask=mask)
    tl.store(scale_ptr + row * groups_per_row + groups, scale, mask=group_mask)


def solve(gate_up):
    gate_up = gate_up.contiguous()
    tokens, width = gate_up.shape
    intermediate = width // 2
    groups_per_row = intermediate // GROUP_SIZE
    q = torch.empty((tokens, intermediate), dtype=torch.float8_e4m3fn, device=gate_up.device)
    scale = torch.empty((tokens, groups_per_row), dtype=torch.float32, device=gate_up.device)
    grid = (tokens, triton.cdiv(groups_per_row, GROUPS_PER_PROGRAM))
    _silu_mul_group_fp8_kernel[grid](gate_up, q, scale, intermediate, groups_per_row, FP8_MAX=FP8_MAX,
                                     MIN_AMAX=MIN_AMAX, GROUP_SIZE=GROUP_SIZE,
                                     GROUPS_PER_PROGRAM=GROUPS_PER_PROGRAM, num_warps=4)
    return q, scale
