"""Triton solution for 19_geglu_tanh: one pass over gate and up; 0.5 (1 + tanh z) is evaluated as sigmoid(2 z)."""

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _gelu_tanh_and_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    inner = 0.7978845608028654 * (gate + 0.044715 * gate * gate * gate)  # sqrt(2 / pi) (x + 0.044715 x^3)
    result = gate * tl.sigmoid(2.0 * inner) * up
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate, up):
    gate, up = gate.contiguous(), up.contiguous()
    out = torch.empty_like(gate)
    n_elements = gate.numel()
    _gelu_tanh_and_mul_kernel[(triton.cdiv(n_elements, BLOCK),)](gate, up, out, n_elements, BLOCK=BLOCK, num_warps=8)
    return out
