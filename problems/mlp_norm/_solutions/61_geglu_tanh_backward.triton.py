"""Triton solution for 61_geglu_tanh_backward: one elementwise pass over the flat tensors, tanh through exp, float32 math."""

import torch
import triton
import triton.language as tl

BLOCK = 2048
GELU_C = 0.7978845608028654  # sqrt(2 / pi)
GELU_A = 0.044715


@triton.jit
def _geglu_backward_kernel(gate_ptr, up_ptr, dh_ptr, grad_gate_ptr, grad_up_ptr, count, c, a, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < count
    x = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    inner = c * (x + a * x * x * x)
    t = 1.0 - 2.0 / (1.0 + tl.exp(2.0 * inner))  # tanh(inner); exp overflow gives t = 1
    gelu = 0.5 * x * (1.0 + t)
    derivative = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * a * x * x)
    tl.store(grad_gate_ptr + offsets, (dh * u * derivative).to(grad_gate_ptr.dtype.element_ty), mask=mask)
    tl.store(grad_up_ptr + offsets, (dh * gelu).to(grad_up_ptr.dtype.element_ty), mask=mask)


def solve(gate, up, grad_h):
    gate, up, grad_h = gate.contiguous(), up.contiguous(), grad_h.contiguous()
    grad_gate = torch.empty_like(gate)
    grad_up = torch.empty_like(gate)
    count = gate.numel()
    _geglu_backward_kernel[(triton.cdiv(count, BLOCK),)](gate, up, grad_h, grad_gate, grad_up, count, GELU_C, GELU_A,
                                                          BLOCK=BLOCK, num_warps=8)
    return grad_gate, grad_up
