"""CUDA C++ solution for 58_cross_entropy_fwd_bwd: a 1024-thread block per token, bf16 pairs, an online (max, sum) per thread merged across the block, then the gradient pass; count and mean in one-block kernels."""

import torch

import mkb_cuda

SOURCE = r"""
#include <cuda_bf16.h>

#define THREADS 1024
#define IGNORE_INDEX (-100LL)
#define NEG_INF __int_as_float(0xff800000)  // -infinity: NVRTC has no math.h, so no INFINITY

extern "C" __global__ void count_labels(const long long* __restrict__ labels, int* __restrict__ count, int tokens) {
    __shared__ int partial[32];
    int mine = 0;
    for (int i = threadIdx.x; i < tokens; i += blockDim.x) mine += labels[i] != IGNORE_INDEX;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, offset);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        int total = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += partial[w];
        *count = total;
    }
}

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    const float top = fmaxf(m, m2);
    if (top == NEG_INF) return;
    s = s * expf(m - top) + s2 * expf(m2 - top);
    m = top;
}

// vocab is even; each thread walks bf16 pairs with stride THREADS.
extern "C" __global__ void __launch_bounds__(THREADS) cross_entropy_rows(
    const __nv_bfloat162* __restrict__ logits, const long long* __restrict__ labels, const int* __restrict__ count,
    float* __restrict__ row_loss, __nv_bfloat162* __restrict__ grad, int vocab) {
    __shared__ float warp_max[32], warp_sum[32];
    const long long row = blockIdx.x;
    const int pairs = vocab / 2;
    const __nv_bfloat162* in = logits + row * pairs;
    float m = NEG_INF, s = 0.0f;
    for (int p = threadIdx.x; p < pairs; p += THREADS) {
        const float2 v = __bfloat1622float2(in[p]);
        const float top = fmaxf(m, fmaxf(v.x, v.y));
        s = s * expf(m - top) + expf(v.x - top) + expf(v.y - top);
        m = top;
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m, offset), s2 = __shfl_xor_sync(0xffffffffu, s, offset);
        merge(m, s, m2, s2);
    }
    if ((threadIdx.x & 31) == 0) {
        warp_max[threadIdx.x >> 5] = m;
        warp_sum[threadIdx.x >> 5] = s;
    }
    __syncthreads();
    m = warp_max[0];
    s = warp_sum[0];
    for (int w = 1; w < THREADS / 32; ++w) merge(m, s, warp_max[w], warp_sum[w]);
    const float log_z = m + logf(s);
    const long long label = labels[row];
    const bool counted = label != IGNORE_INDEX;
    const long long safe_label = counted ? label : 0;
    const int n = max(*count, 1);
    if (threadIdx.x == 0) {
        const __nv_bfloat16* flat = reinterpret_cast<const __nv_bfloat16*>(in);
        row_loss[row] = counted ? log_z - __bfloat162float(flat[safe_label]) : 0.0f;
    }
    const float scale = counted ? 1.0f / (float)n : 0.0f;
    __nv_bfloat162* out = grad + row * pairs;
    for (int p = threadIdx.x; p < pairs; p += THREADS) {
        const float2 v = __bfloat1622float2(in[p]);
        float ga = expf(v.x - log_z), gb = expf(v.y - log_z);
        if (2LL * p == safe_label) ga -= 1.0f;
        if (2LL * p + 1 == safe_label) gb -= 1.0f;
        out[p] = __floats2bfloat162_rn(ga * scale, gb * scale);
    }
}

extern "C" __global__ void mean_loss(const float* __restrict__ row_loss, const int* __restrict__ count,
                                     float* __restrict__ loss, int tokens) {
    __shared__ float partial[32];
    float mine = 0.0f;
    for (int i = threadIdx.x; i < tokens; i += blockDim.x) mine += row_loss[i];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, offset);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += partial[w];
        *loss = total / (float)max(*count, 1);
    }
}
"""

_count = mkb_cuda.compile(SOURCE, "count_labels")
_rows = mkb_cuda.compile(SOURCE, "cross_entropy_rows")
_mean = mkb_cuda.compile(SOURCE, "mean_loss")


def solve(logits, labels):
    logits, labels = logits.contiguous(), labels.contiguous()
    tokens, vocab = logits.shape  # vocab must be even (151936)
    count = torch.empty(1, dtype=torch.int32, device=logits.device)
    row_loss = torch.empty(tokens, dtype=torch.float32, device=logits.device)
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    grad = torch.empty_like(logits)
    _count((1,), (1024,), [labels, count, tokens])
    _rows((tokens,), (1024,), [logits, labels, count, row_loss, grad, vocab])
    _mean((1,), (1024,), [row_loss, count, loss, tokens])
    return loss, grad
