"""CUDA C++ solution for the Mixtral top-2 router: one warp per 4 tokens, 16-byte fp16 loads (header-free PTX conversions), fp32 dot products, warp-shuffle sums, softmax/top-2 in registers."""

import torch

import mkb_cuda

SOURCE = r"""
#define NUM_EXPERTS 8
#define TOKENS_PER_WARP 4

__device__ __forceinline__ float half_to_float(unsigned short bits) {
    float value;
    asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
    return value;
}

__device__ __forceinline__ void accumulate8(float* acc, uint4 x, uint4 w) {
    const unsigned short* xh = reinterpret_cast<const unsigned short*>(&x);
    const unsigned short* wh = reinterpret_cast<const unsigned short*>(&w);
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) sum = fmaf(half_to_float(xh[i]), half_to_float(wh[i]), sum);
    *acc += sum;
}

extern "C" __global__ void mixtral_top2_router(const unsigned short* __restrict__ hidden,
                                               const unsigned short* __restrict__ weight,
                                               float* __restrict__ out, int num_tokens, int hidden_size) {
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int token0 = warp * TOKENS_PER_WARP;
    if (token0 >= num_tokens) return;

    float acc[TOKENS_PER_WARP][NUM_EXPERTS];
#pragma unroll
    for (int t = 0; t < TOKENS_PER_WARP; ++t)
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e) acc[t][e] = 0.0f;

    for (int k = lane * 8; k < hidden_size; k += 32 * 8) {
        uint4 w[NUM_EXPERTS];
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e)
            w[e] = __ldg(reinterpret_cast<const uint4*>(weight + (long long)e * hidden_size + k));
#pragma unroll
        for (int t = 0; t < TOKENS_PER_WARP; ++t) {
            if (token0 + t < num_tokens) {
                uint4 x = __ldg(reinterpret_cast<const uint4*>(hidden + (long long)(token0 + t) * hidden_size + k));
#pragma unroll
                for (int e = 0; e < NUM_EXPERTS; ++e) accumulate8(&acc[t][e], x, w[e]);
            }
        }
    }
#pragma unroll
    for (int t = 0; t < TOKENS_PER_WARP; ++t)
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e)
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1)
                acc[t][e] += __shfl_xor_sync(0xffffffffu, acc[t][e], offset);

    if (lane < TOKENS_PER_WARP && token0 + lane < num_tokens) {
        float logits[NUM_EXPERTS];
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e) {  // select this lane's token without dynamic register indexing
            float value = acc[0][e];
#pragma unroll
            for (int t = 1; t < TOKENS_PER_WARP; ++t) value = (lane == t) ? acc[t][e] : value;
            logits[e] = value;
        }
        int first = 0;
#pragma unroll
        for (int e = 1; e < NUM_EXPERTS; ++e) first = logits[e] > logits[first] ? e : first;
        int second = first == 0 ? 1 : 0;
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e) second = (e != first && logits[e] > logits[second]) ? e : second;
        const float top = logits[first];
        float total = 0.0f;
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e) total += expf(logits[e] - top);
        const float p1 = 1.0f / total;
        const float p2 = expf(logits[second] - top) / total;
        const float w1 = p1 / (p1 + p2);
        const float w2 = p2 / (p1 + p2);
        float* row = out + (long long)(token0 + lane) * NUM_EXPERTS;
#pragma unroll
        for (int e = 0; e < NUM_EXPERTS; ++e) row[e] = e == first ? w1 : (e == second ? w2 : 0.0f);
    }
}
"""

THREADS = 256
TOKENS_PER_WARP = 4
_kernel = mkb_cuda.compile(SOURCE, "mixtral_top2_router")


def solve(hidden, gate_weight):
    hidden = hidden.contiguous()
    gate_weight = gate_weight.contiguous()
    num_tokens, hidden_size = hidden.shape
    out = torch.empty(num_tokens, gate_weight.shape[0], dtype=torch.float32, device=hidden.device)
    warps = (num_tokens + TOKENS_PER_WARP - 1) // TOKENS_PER_WARP
    blocks = (warps * 32 + THREADS - 1) // THREADS
    _kernel((blocks, 1, 1), (THREADS, 1, 1), [hidden, gate_weight, out, num_tokens, hidden_size])
    return out
