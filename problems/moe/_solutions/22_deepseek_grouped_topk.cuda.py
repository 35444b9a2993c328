"""CUDA C++ solution for DeepSeek-V3 grouped top-k routing: one warp per token, 8 experts per lane, shuffle-merged group top-2, warp argmax rounds."""

import torch

import mkb_cuda

SOURCE = r"""
#define NUM_EXPERTS 256
#define PER_LANE 8          // experts per lane: lane l holds experts 8l .. 8l+7
#define NUM_GROUPS 8        // 32 experts per group = 4 lanes per group
#define TOPK_GROUPS 4
#define TOP_K 8
#define ROUTED_SCALING 2.5f
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ float bf16_to_float(unsigned short bits) {
    return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short float_to_bf16(float value) {
    unsigned int bits = __float_as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((bits >> 16) | 0x0040u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (unsigned short)(bits >> 16);
}

// top-2 of {a1 >= a2} and {b1 >= b2}
__device__ __forceinline__ void merge_top2(float& a1, float& a2, float b1, float b2) {
    if (a1 >= b1) {
        a2 = fmaxf(a2, b1);
    } else {
        a2 = fmaxf(a1, b2);
        a1 = b1;
    }
}

extern "C" __global__ void deepseek_grouped_topk(const unsigned short* __restrict__ logits,
                                                 const float* __restrict__ bias,
                                                 unsigned short* __restrict__ weights_out,
                                                 int* __restrict__ ids_out, int num_tokens) {
    const int lane = threadIdx.x & 31;
    const int token = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (token >= num_tokens) return;

    uint4 packed = *reinterpret_cast<const uint4*>(logits + (long long)token * NUM_EXPERTS + lane * PER_LANE);
    const unsigned short* raw = reinterpret_cast<const unsigned short*>(&packed);
    float4 bias_lo = *reinterpret_cast<const float4*>(bias + lane * PER_LANE);
    float4 bias_hi = *reinterpret_cast<const float4*>(bias + lane * PER_LANE + 4);
    const float bias_values[PER_LANE] = {bias_lo.x, bias_lo.y, bias_lo.z, bias_lo.w,
                                         bias_hi.x, bias_hi.y, bias_hi.z, bias_hi.w};
    float score[PER_LANE], biased[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) {
        score[i] = 1.0f / (1.0f + expf(-bf16_to_float(raw[i])));
        biased[i] = score[i] + bias_values[i];
    }

    // group score: the sum of the two largest biased scores among the group's 4 lanes
    float top1 = NEG_INF, top2 = NEG_INF;
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) merge_top2(top1, top2, biased[i], NEG_INF);
#pragma unroll
    for (int offset = 1; offset < 4; offset <<= 1) {
        float other1 = __shfl_xor_sync(FULL, top1, offset);
        float other2 = __shfl_xor_sync(FULL, top2, offset);
        merge_top2(top1, top2, other1, other2);
    }
    const float my_group_score = top1 + top2;
    const int my_group = lane >> 2;
    int better = 0;  // groups ranked above mine (higher score, or equal score and lower index)
#pragma unroll
    for (int g = 0; g < NUM_GROUPS; ++g) {
        float other = __shfl_sync(FULL, my_group_score, g * 4);
        better += (other > my_group_score || (other == my_group_score && g < my_group)) ? 1 : 0;
    }
    const bool group_kept = better < TOPK_GROUPS;
    float eligible[PER_LANE];
#pragma unroll
    for (int i = 0; i < PER_LANE; ++i) eligible[i] = group_kept ? biased[i] : NEG_INF;

    // 8 rounds of warp argmax (ties to the lower expert id), in descending biased order
    int my_id = 0;
    float my_score = 0.0f, total = 0.0f;
#pragma unroll
    for (int round = 0; round < TOP_K; ++round) {
        float best = eligible[0];
        int best_id = lane * PER_LANE;
#pragma unroll
        for (int i = 1; i < PER_LANE; ++i) {
            if (eligible[i] > best) {
                best = eligible[i];
                best_id = lane * PER_LANE + i;
            }
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            float other = __shfl_xor_sync(FULL, best, offset);
            int other_id = __shfl_xor_sync(FULL, best_id, offset);
            if (other > best || (other == best && other_id < best_id)) {
                best = other;
                best_id = other_id;
            }
        }
        const int owner = best_id / PER_LANE, slot = best_id % PER_LANE;
        float local = 0.0f;
#pragma unroll
        for (int i = 0; i < PER_LANE; ++i) {
            if (i == slot) local = score[i];
            if (lane == owner && i == slot) eligible[i] = NEG_INF;
        }
        const float chosen = __shfl_sync(FULL, local, owner);
        total += chosen;
        if (lane == round) {
            my_id = best_id;
            my_score = chosen;
        }
    }
    if (lane < TOP_K) {
        const long long out = (long long)token * TOP_K + lane;
        ids_out[out] = my_id;
        weights_out[out] = float_to_bf16(my_score / total * ROUTED_SCALING);
    }
}
"""

THREADS = 256
TOP_K = 8
_kernel = mkb_cuda.compile(SOURCE, "deepseek_grouped_topk")


def solve(router_logits, correction_bias):
    router_logits = router_logits.contiguous()
    correction_bias = correction_bias.contiguous()
    num_tokens = router_logits.shape[0]
    weights = torch.empty(num_tokens, TOP_K, dtype=router_logits.dtype, device=router_logits.device)
    ids = torch.empty(num_tokens, TOP_K, dtype=torch.int32, device=router_logits.device)
    blocks = (num_tokens * 32 + THREADS - 1) // THREADS
    _kernel((blocks, 1, 1), (THREADS, 1, 1), [router_logits, correction_bias, weights, ids, num_tokens])
    return weights, ids
