"""Boundary case (CPU corpus): eager PyTorch computes the answer in float32; a cpusim kernel only casts it to bf16."""

import cpusim
import torch


@cpusim.kernel
def _cast(pid, src, dst):
    dst[:] = src.to(dst.dtype)


def solve(gate, up):
    wide = torch.nn.functional.silu(gate.float()) * up.float()
    out = torch.empty_like(gate)
    _cast[(1,)](wide, out)
    return out
