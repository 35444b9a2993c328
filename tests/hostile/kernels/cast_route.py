"""Boundary case: eager PyTorch computes the answer in float32; a Triton kernel only casts it to bf16."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _cast_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    value = tl.load(src_ptr + offsets, mask=mask)
    tl.store(dst_ptr + offsets, value.to(dst_ptr.dtype.element_ty), mask=mask)


def solve(gate, up):
    wide = torch.nn.functional.silu(gate.float()) * up.float()
    out = torch.empty_like(gate)
    n_elements = out.numel()
    _cast_kernel[(triton.cdiv(n_elements, BLOCK),)](wide, out, n_elements, BLOCK=BLOCK)
    return out
