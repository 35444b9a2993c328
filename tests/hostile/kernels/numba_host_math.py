"""Hostile case: copies the inputs to the host through numba, computes with numpy there, and routes the host result
back through a numba copy kernel."""

import numpy
import torch
from numba import cuda


@cuda.jit
def _copy_kernel(source, target):
    i = cuda.grid(1)
    if i < source.shape[0]:
        target[i] = source[i]


def solve(gate, up):
    g = cuda.as_cuda_array(gate.reshape(-1).float()).copy_to_host()
    u = cuda.as_cuda_array(up.reshape(-1).float()).copy_to_host()
    host = cuda.to_device((g / (1.0 + numpy.exp(-g)) * u).astype(numpy.float32))
    out = torch.empty(gate.numel(), device=gate.device, dtype=torch.float32)
    _copy_kernel[(out.numel() + 255) // 256, 256](host, out)
    return out.to(gate.dtype).view(gate.shape)
