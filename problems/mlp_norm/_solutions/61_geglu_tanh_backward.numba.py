"""numba-cuda solution for 61_geglu_tanh_backward: a grid-stride elementwise kernel reads gate, up and grad_h once and
writes both gradients in float32 (one tanh per element serves gelu and its derivative). bfloat16 tensors are cast
with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


@cuda.jit
def _geglu_backward(gate, up, grad_h, grad_gate, grad_up):
    for index in range(cuda.grid(1), gate.shape[0], cuda.gridsize(1)):
        x = gate[index]
        dh = grad_h[index]
        t = math.tanh(float32(GELU_C) * (x + float32(GELU_A) * x * x * x))
        gelu = float32(0.5) * x * (float32(1.0) + t)
        derivative = (float32(0.5) * (float32(1.0) + t) + float32(0.5) * x * (float32(1.0) - t * t) * float32(GELU_C)
                      * (float32(1.0) + float32(3.0 * GELU_A) * x * x))
        grad_gate[index] = dh * up[index] * derivative
        grad_up[index] = dh * gelu


def solve(gate, up, grad_h):
    grad_gate = torch.empty(gate.numel(), device=gate.device, dtype=torch.float32)
    grad_up = torch.empty(gate.numel(), device=gate.device, dtype=torch.float32)
    flat = lambda t: t.float().view(-1)  # noqa: E731
    _geglu_backward[132 * 16, THREADS](flat(gate), flat(up), flat(grad_h), grad_gate, grad_up)
    return grad_gate.view(gate.shape).to(gate.dtype), grad_up.view(gate.shape).to(gate.dtype)
