"""The grader's own tiny Triton kernel that a pre-started child launches once while it waits (imported only where
Triton is installed; Triton resolves a kernel's names through its module's globals, hence a module of its own)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _mkb_warm_copy(source, target, count, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < count
    tl.store(target + offsets, tl.load(source + offsets, mask=mask), mask=mask)


def launch_once(device: str) -> None:
    """Triton's driver, launcher and compile pipeline load here, not in the candidate's first draw (the compiled
    kernel comes from Triton's disk cache after the first time)."""
    source = torch.arange(256, device=device, dtype=torch.float32)
    target = torch.empty_like(source)
    _mkb_warm_copy[(1,)](source, target, source.numel(), BLOCK=256)
    torch.cuda.synchronize()
