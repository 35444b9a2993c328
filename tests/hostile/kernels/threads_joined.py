"""Honest but unusual: two Python threads each launch the Triton kernel on one half; solve joins both before returning."""

import threading

import torch
import triton
import triton.language as tl

BLOCK = 1024


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


def _half(gate, up, out, device):
    with torch.cuda.device(device):
        _launch(gate, up, out, gate.numel())


def solve(gate, up):
    out = torch.empty_like(gate)
    flat_gate, flat_up, flat_out = gate.reshape(-1), up.reshape(-1), out.view(-1)
    middle = flat_gate.numel() // 2
    workers = [
        threading.Thread(target=_half, args=(flat_gate[:middle], flat_up[:middle], flat_out[:middle], gate.device)),
        threading.Thread(target=_half, args=(flat_gate[middle:], flat_up[middle:], flat_out[middle:], gate.device)),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return out
