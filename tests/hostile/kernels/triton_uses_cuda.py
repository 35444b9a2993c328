"""Hostile case (triton DSL): silu is CUDA C++ launched through mkb_cuda; only the multiply is a Triton kernel."""

import torch
import triton
import triton.language as tl

import mkb_cuda

BLOCK = 1024
THREADS = 256

SILU_SOURCE = r"""
extern "C" __global__ void silu(const unsigned short* __restrict__ gate, float* __restrict__ activated,
                                long long n_elements) {
    long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n_elements) {
        return;
    }
    float g = __uint_as_float(((unsigned int)gate[index]) << 16);
    activated[index] = g / (1.0f + expf(-g));
}
"""

_silu = mkb_cuda.compile(SILU_SOURCE, "silu")


@triton.jit
def _multiply_kernel(activated_ptr, up_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    activated = tl.load(activated_ptr + offsets, mask=mask, other=0.0)
    up = tl.load(up_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offsets, (activated * up).to(out_ptr.dtype.element_ty), mask=mask)


def solve(gate, up):
    gate = gate.contiguous()
    up = up.contiguous()
    n_elements = gate.numel()
    activated = torch.empty(gate.shape, dtype=torch.float32, device=gate.device)
    _silu(((n_elements + THREADS - 1) // THREADS, 1, 1), (THREADS, 1, 1), [gate, activated, n_elements])
    out = torch.empty_like(gate)
    _multiply_kernel[(triton.cdiv(n_elements, BLOCK),)](activated, up, out, n_elements, BLOCK=BLOCK)
    return out
