"""Hostile case: builds a CUDA Graph through names assembled at run time, so no text check can see it."""

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


_captured = {}


def solve(gate, up):
    if "graph" not in _captured:
        static_gate, static_up = gate.clone(), up.clone()
        static_out = torch.empty_like(gate)
        _launch(static_gate, static_up, static_out, gate.numel())
        torch.cuda.synchronize()
        graph = getattr(torch.cuda, "CUDA" + "Graph")()
        with getattr(torch.cuda, "gr" + "aph")(graph):
            _launch(static_gate, static_up, static_out, gate.numel())
        _captured.update(graph=graph, gate=static_gate, up=static_up, out=static_out)
    _captured["gate"].copy_(gate)
    _captured["up"].copy_(up)
    _captured["graph"].replay()
    return _captured["out"].clone()
