"""CUDA C++ solution for 65_moe_aux_loss: a warp per token (four experts a lane) computes softmax and the top-8 by warp argmax; blocks write partial counts and probability sums; one block folds them in double."""

import torch

import mkb_cuda

SOURCE = r"""
#define EXPERTS 128
#define TOP_K 8
#define WARPS 4
#define ROWS_PER_WARP 16  // a block covers 64 tokens

__device__ __forceinline__ void softmax4(const float4& x, float* p) {
    float m = fmaxf(fmaxf(x.x, x.y), fmaxf(x.z, x.w));
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    p[0] = expf(x.x - m); p[1] = expf(x.y - m); p[2] = expf(x.z - m); p[3] = expf(x.w - m);
    float s = p[0] + p[1] + p[2] + p[3];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
#pragma unroll
    for (int j = 0; j < 4; ++j) p[j] /= s;
}

// Lane l holds experts 4l .. 4l + 3.
extern "C" __global__ void __launch_bounds__(WARPS * 32) aux_partials(const float4* __restrict__ logits,
                                                                       int* __restrict__ counts,
                                                                       float* __restrict__ probs) {
    __shared__ int block_counts[WARPS][EXPERTS];
    __shared__ float block_probs[WARPS][EXPERTS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int my_counts[4] = {0, 0, 0, 0};
    float my_probs[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int r = 0; r < ROWS_PER_WARP; ++r) {
        const long long row = ((long long)blockIdx.x * WARPS + warp) * ROWS_PER_WARP + r;
        const float4 x = logits[row * 32 + lane];
        float p[4];
        softmax4(x, p);
#pragma unroll
        for (int j = 0; j < 4; ++j) my_probs[j] += p[j];
        float remaining[4] = {x.x, x.y, x.z, x.w};
        for (int k = 0; k < TOP_K; ++k) {
            float best = remaining[0];
            int best_index = lane * 4;
#pragma unroll
            for (int j = 1; j < 4; ++j)
                if (remaining[j] > best) { best = remaining[j]; best_index = lane * 4 + j; }
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                const float other = __shfl_xor_sync(0xffffffffu, best, offset);
                const int other_index = __shfl_xor_sync(0xffffffffu, best_index, offset);
                if (other > best || (other == best && other_index < best_index)) {
                    best = other;
                    best_index = other_index;
                }
            }
            if ((best_index >> 2) == lane) {
                my_counts[best_index & 3] += 1;
                remaining[best_index & 3] = __int_as_float(0xff800000) /* -infinity: NVRTC has no math.h */;
            }
        }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        block_counts[warp][lane * 4 + j] = my_counts[j];
        block_probs[warp][lane * 4 + j] = my_probs[j];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < EXPERTS; e += blockDim.x) {
        int c = 0;
        float s = 0.0f;
        for (int w = 0; w < WARPS; ++w) { c += block_counts[w][e]; s += block_probs[w][e]; }
        counts[blockIdx.x * EXPERTS + e] = c;
        probs[blockIdx.x * EXPERTS + e] = s;
    }
}

// One block of FOLD_GROUPS * EXPERTS threads: group g sums partial rows g, g + FOLD_GROUPS, ... of expert e, in
// order; the groups' sums are then added in group order.
#define FOLD_GROUPS 8
extern "C" __global__ void __launch_bounds__(FOLD_GROUPS * EXPERTS) aux_fold(const int* __restrict__ counts,
                                                                             const float* __restrict__ probs,
                                                                             float* __restrict__ loss, int blocks,
                                                                             int tokens, double coef) {
    __shared__ double group_counts[FOLD_GROUPS][EXPERTS], group_probs[FOLD_GROUPS][EXPERTS];
    __shared__ double terms[EXPERTS];
    const int e = threadIdx.x % EXPERTS, group = threadIdx.x / EXPERTS;
    double count = 0.0, prob = 0.0;
    for (int b = group; b < blocks; b += FOLD_GROUPS) {
        count += (double)counts[b * EXPERTS + e];
        prob += (double)probs[b * EXPERTS + e];
    }
    group_counts[group][e] = count;
    group_probs[group][e] = prob;
    __syncthreads();
    if (group == 0) {
        count = 0.0;
        prob = 0.0;
        for (int g = 0; g < FOLD_GROUPS; ++g) {
            count += group_counts[g][e];
            prob += group_probs[g][e];
        }
        terms[e] = (count / ((double)tokens * TOP_K)) * (prob / tokens);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int k = 0; k < EXPERTS; ++k) total += terms[k];
        *loss = (float)(coef * EXPERTS * total);
    }
}
"""

AUX_COEF = 0.001
ROWS_PER_BLOCK = 64
_partials = mkb_cuda.compile(SOURCE, "aux_partials")
_fold = mkb_cuda.compile(SOURCE, "aux_fold")


def solve(logits):
    logits = logits.contiguous()
    tokens, experts = logits.shape  # the kernels are written for 128 experts
    blocks = tokens // ROWS_PER_BLOCK
    counts = torch.empty(blocks, experts, dtype=torch.int32, device=logits.device)
    probs = torch.empty(blocks, experts, dtype=torch.float32, device=logits.device)
    loss = torch.empty((), dtype=torch.float32, device=logits.device)
    _partials((blocks,), (128,), [logits, counts, probs])
    _fold((1,), (8 * experts,), [counts, probs, loss, blocks, tokens, mkb_cuda.float64(AUX_COEF)])
    return loss
