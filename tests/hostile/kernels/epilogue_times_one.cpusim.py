"""Boundary case (CPU corpus): the cpusim kernel computes the whole answer, then a trivial eager epilogue `y * 1.0`."""

import cpusim
import torch


@cpusim.kernel
def _silu_mul_row(row, gate, up, out):
    g = gate[row].float()
    out[row] = (g * torch.sigmoid(g) * up[row].float()).to(out.dtype)


def solve(gate, up):
    out = torch.empty_like(gate)
    _silu_mul_row[(gate.shape[0],)](gate, up, out)
    return out * 1.0
