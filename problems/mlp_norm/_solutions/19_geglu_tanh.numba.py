"""numba-cuda solution for 19_geglu_tanh: a grid-stride elementwise kernel writes gelu_tanh(gate) * up in float32.
bfloat16 tensors are cast with torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

THREADS = 256
SQRT_2_OVER_PI = 0.7978845608028654


@cuda.jit
def _geglu(gate, up, out):
    for index in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        x = gate[index]
        inner = float32(SQRT_2_OVER_PI) * (x + float32(0.044715) * x * x * x)
        out[index] = float32(0.5) * x * (float32(1.0) + math.tanh(inner)) * up[index]


def solve(gate, up):
    out = torch.empty(gate.numel(), device=gate.device, dtype=torch.float32)
    _geglu[132 * 16, THREADS](gate.float().view(-1), up.float().view(-1), out)
    return out.view(gate.shape).to(gate.dtype)
