"""Triton solution for 63_moe_permute_backward: a program per token gathers its 8 gradient rows and sums them in slot order in float32."""

import torch
import triton
import triton.language as tl


@triton.jit
def _permute_backward_kernel(grad_ptr, positions_ptr, out_ptr, hidden, TOP_K: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    columns = tl.arange(0, BLOCK)
    mask = columns < hidden
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for k in tl.static_range(TOP_K):
        row = tl.load(positions_ptr + token * TOP_K + k).to(tl.int64)
        acc += tl.load(grad_ptr + row * hidden + columns, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + token * hidden + columns, acc.to(out_ptr.dtype.element_ty), mask=mask)


def solve(grad_permuted, positions):
    grad_permuted, positions = grad_permuted.contiguous(), positions.contiguous()
    tokens, top_k = positions.shape
    hidden = grad_permuted.shape[1]
    out = torch.empty(tokens, hidden, dtype=grad_permuted.dtype, device=grad_permuted.device)
    _permute_backward_kernel[(tokens,)](grad_permuted, positions, out, hidden, TOP_K=top_k,
                                        BLOCK=triton.next_power_of_2(hidden), num_warps=4)
    return out
