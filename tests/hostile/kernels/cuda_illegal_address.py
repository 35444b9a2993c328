"""Hostile case (cuda DSL): a CUDA C++ kernel that also stores through address 0x10 (an illegal address)."""

import torch

import mkb_cuda

SOURCE = r"""
extern "C" __global__ void stray_store(const unsigned short* __restrict__ gate, unsigned short* __restrict__ out,
                                       long long n_elements) {
    long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n_elements) {
        return;
    }
    out[index] = gate[index];
    if (index == 0) {
        *((volatile unsigned int*)0x10) = 1u;
    }
}
"""

THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "stray_store")


def solve(gate, up):
    out = torch.empty_like(gate)
    n_elements = gate.numel()
    _kernel(((n_elements + THREADS - 1) // THREADS, 1, 1), (THREADS, 1, 1), [gate.contiguous(), out, n_elements])
    return out
