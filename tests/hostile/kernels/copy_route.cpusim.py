"""Boundary case (CPU corpus): eager PyTorch computes the answer; a cpusim kernel only copies it out."""

import cpusim
import torch


@cpusim.kernel
def _copy(pid, src, dst):
    dst[:] = src


def solve(gate, up):
    eager = torch.nn.functional.silu(gate) * up
    out = torch.empty_like(eager)
    _copy[(1,)](eager, out)
    return out
