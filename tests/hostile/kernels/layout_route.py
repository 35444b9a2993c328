"""Boundary case: eager PyTorch computes the answer transposed; a Triton kernel only transposes it back."""

import torch
import triton
import triton.language as tl

BLOCK = 32


@triton.jit
def _transpose_kernel(src_ptr, dst_ptr, rows, cols, BLOCK: tl.constexpr):
    # src is [cols, rows], dst is [rows, cols]; one BLOCK x BLOCK tile per program
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)[:, None]
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)[None, :]
    mask = (r < rows) & (c < cols)
    tile = tl.load(src_ptr + c * rows + r, mask=mask)
    tl.store(dst_ptr + r * cols + c, tile, mask=mask)


def solve(gate, up):
    flipped = (torch.nn.functional.silu(gate.t()) * up.t()).contiguous()
    out = torch.empty_like(gate)
    rows, cols = out.shape
    _transpose_kernel[(triton.cdiv(rows, BLOCK), triton.cdiv(cols, BLOCK))](flipped, out, rows, cols, BLOCK=BLOCK)
    return out
