"""Boundary case (CPU corpus): eager PyTorch computes the answer transposed; a cpusim kernel transposes it back."""

import cpusim
import torch


@cpusim.kernel
def _transpose(pid, src, dst):
    dst[:] = src.t()


def solve(gate, up):
    flipped = (torch.nn.functional.silu(gate.t()) * up.t()).contiguous()
    out = torch.empty_like(gate)
    _transpose[(1,)](flipped, out)
    return out
