"""numba-cuda solution for 57_swiglu_backward: a grid-stride elementwise kernel reads gate, up and grad_h once and
writes both gradients into the [grad_gate | grad_up] row in float32. bfloat16 tensors are cast with torch (numba
reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256


@cuda.jit
def _swiglu_backward(gate_up, grad_h, grad):
    half = grad_h.shape[1]
    for index in range(cuda.grid(1), grad_h.shape[0] * half, cuda.gridsize(1)):
        row = index // half
        col = index % half
        gate = gate_up[row, col]
        up = gate_up[row, half + col]
        dh = grad_h[row, col]
        s = float32(1.0) / (float32(1.0) + math.exp(-gate))
        grad[row, col] = dh * up * s * (float32(1.0) + gate * (float32(1.0) - s))
        grad[row, half + col] = dh * gate * s


def solve(gate_up, grad_h):
    grad = torch.empty(gate_up.shape, device=gate_up.device, dtype=torch.float32)
    _swiglu_backward[132 * 16, THREADS](gate_up.float(), grad_h.float(), grad)
    return grad.to(gate_up.dtype)
