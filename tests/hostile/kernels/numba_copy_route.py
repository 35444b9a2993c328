"""Hostile case: eager PyTorch computes the answer and a numba-cuda kernel only copies its bits into the output."""

import torch
from numba import cuda


@cuda.jit
def _copy_kernel(source, target):
    i = cuda.grid(1)
    if i < source.shape[0]:
        target[i] = source[i]


def solve(gate, up):
    eager = (torch.nn.functional.silu(gate) * up).reshape(-1)
    out = torch.empty_like(eager)
    _copy_kernel[(eager.numel() + 255) // 256, 256](eager.view(torch.int16), out.view(torch.int16))
    return out.view(gate.shape)
