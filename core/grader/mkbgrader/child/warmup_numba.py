"""The grader's own tiny numba-cuda kernel that a pre-started child launches once while it waits (imported only where
numba-cuda is installed, after the numba adapter's numpy compatibility step): numba's driver binding, its compiler
(NVVM) and its view of torch tensors load here, not in the candidate's first draw."""

from __future__ import annotations

import torch
from numba import cuda


@cuda.jit
def _mkb_warm_copy(source, target):
    index = cuda.grid(1)
    if index < source.size:
        target[index] = source[index]


def launch_once(device: str) -> None:
    source = torch.arange(256, device=device, dtype=torch.float32)
    target = torch.empty_like(source)
    with cuda.gpus[torch.device(device).index or 0]:
        _mkb_warm_copy[1, 256](cuda.as_cuda_array(source), cuda.as_cuda_array(target))
    torch.cuda.synchronize()
