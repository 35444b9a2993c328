"""Hostile case (cuda DSL): silu is a Triton kernel; only the multiply is a CUDA C++ kernel launched through mkb_cuda."""

import torch
import triton
import triton.language as tl

import mkb_cuda

BLOCK = 1024
THREADS = 256

MULTIPLY_SOURCE = r"""
__device__ __forceinline__ float bf16_bits_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short float_to_bf16_bits(float value) {
    unsigned int bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        return (unsigned short)((bits >> 16) | 0x0040u);
    }
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (unsigned short)(bits >> 16);
}

extern "C" __global__ void multiply(const float* __restrict__ activated, const unsigned short* __restrict__ up,
                                    unsigned short* __restrict__ out, long long n_elements) {
    long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n_elements) {
        return;
    }
    out[index] = float_to_bf16_bits(activated[index] * bf16_bits_to_float(up[index]));
}
"""

_multiply = mkb_cuda.compile(MULTIPLY_SOURCE, "multiply")


@triton.jit
def _silu_kernel(gate_ptr, activated_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    gate = tl.load(gate_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(activated_ptr + offsets, gate * tl.sigmoid(gate), mask=mask)


def solve(gate, up):
    gate = gate.contiguous()
    up = up.contiguous()
    n_elements = gate.numel()
    activated = torch.empty(gate.shape, dtype=torch.float32, device=gate.device)
    _silu_kernel[(triton.cdiv(n_elements, BLOCK),)](gate, activated, n_elements, BLOCK=BLOCK)
    out = torch.empty_like(gate)
    _multiply(((n_elements + THREADS - 1) // THREADS, 1, 1), (THREADS, 1, 1), [activated, up, out, n_elements])
    return out
