"""Hostile case: reaches Inductor through a name assembled at run time, so no text check can see it."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask), mask=mask)


def _copy(src):
    dst = torch.empty_like(src)
    n_elements = src.numel()
    _copy_kernel[(triton.cdiv(n_elements, BLOCK),)](src, dst, n_elements, BLOCK=BLOCK)
    return dst


def _silu_mul(gate, up):
    return torch.nn.functional.silu(gate) * up


_optimizer = getattr(torch, "com" + "pile")
_optimized = _optimizer(_silu_mul)


def solve(gate, up):
    return _copy(_optimized(gate, up))
