"""Hostile case: does the work on a side stream behind a ~2 ms spin and returns without waiting for it.

If only the current stream were synchronised, the output would be read before it is written (a correctness
failure) or the time would miss the side stream's ~2 ms (an impossible speedup). Synchronising the whole device
makes it an honest, slow kernel: a pass is right only with a median of at least 1 ms.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


SPIN_CYCLES = 4_000_000  # >= 2 ms at the H200's top SM clock of 1.98 GHz

@triton.jit
def _silu_mul_kernel(gate_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    result = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(gate, up, out, n_elements):
    _silu_mul_kernel[(triton.cdiv(n_elements, BLOCK),)](gate, up, out, n_elements, BLOCK=BLOCK)


_side_streams = []


def solve(gate, up):
    if not _side_streams:
        _side_streams.append(torch.cuda.Stream(device=gate.device))
    side = _side_streams[0]
    out = torch.empty_like(gate)
    side.wait_stream(torch.cuda.current_stream(gate.device))
    with torch.cuda.stream(side):
        torch.cuda._sleep(SPIN_CYCLES)
        _launch(gate, up, out, gate.numel())
    for tensor in (gate, up, out):
        tensor.record_stream(side)
    return out
