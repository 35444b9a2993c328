"""numba-cuda solution for 22_deepseek_grouped_topk: one warp per token, lane l holding experts l + 32 i, so that its
i-th value lies in group i. The warp takes sigmoid scores and biased scores, each group's top-two sum by a shuffle
merge, the four best groups (every lane computes the same), then the top 8 eligible experts by 8 rounds of warp
argmax (in descending biased score) and their renormalised, scaled sigmoid weights. bfloat16 logits are cast with
torch (numba reads no bfloat16)."""

import math

import torch
from numba import cuda, float32

NUM_EXPERTS = 256
NUM_GROUPS = 8
TOPK_GROUPS = 4
TOP_K = 8
ROUTED_SCALING = 2.5
WARPS = 8


@cuda.jit
def _grouped_topk(logits, bias, weights, ids):
    lane = cuda.threadIdx.x % 32
    token = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    valid = token < logits.shape[0]
    row = token if valid else 0  # every lane joins the shuffles
    scores = cuda.local.array(NUM_GROUPS, float32)
    biased = cuda.local.array(NUM_GROUPS, float32)
    group_scores = cuda.local.array(NUM_GROUPS, float32)
    for i in range(NUM_GROUPS):
        expert = lane + 32 * i
        scores[i] = float32(1.0) / (float32(1.0) + math.exp(-logits[row, expert]))
        biased[i] = scores[i] + bias[expert]
        first = biased[i]  # the warp's best two of group i
        second = float32(-math.inf)
        offset = 16
        while offset > 0:
            other_first = cuda.shfl_xor_sync(0xFFFFFFFF, first, offset)
            other_second = cuda.shfl_xor_sync(0xFFFFFFFF, second, offset)
            if other_first > first:
                second = max(first, other_second)
                first = other_first
            else:
                second = max(second, other_first)
            offset //= 2
        group_scores[i] = first + second
    # the TOPK_GROUPS best groups: a group is kept when fewer than TOPK_GROUPS groups beat it (lower index on ties)
    for i in range(NUM_GROUPS):
        better = 0
        for j in range(NUM_GROUPS):
            if group_scores[j] > group_scores[i] or (group_scores[j] == group_scores[i] and j < i):
                better += 1
        if better >= TOPK_GROUPS:
            biased[i] = float32(-math.inf)
    total = float32(0.0)
    for k in range(TOP_K):
        best = float32(-math.inf)
        best_expert = NUM_EXPERTS
        best_score = float32(0.0)
        for i in range(NUM_GROUPS):
            if biased[i] > best:
                best = biased[i]
                best_expert = lane + 32 * i
                best_score = scores[i]
        offset = 16
        while offset > 0:  # warp argmax: larger biased score wins, lower expert id on a tie
            other = cuda.shfl_xor_sync(0xFFFFFFFF, best, offset)
            other_expert = cuda.shfl_xor_sync(0xFFFFFFFF, best_expert, offset)
            other_score = cuda.shfl_xor_sync(0xFFFFFFFF, best_score, offset)
            if other > best or (other == best and other_expert < best_expert):
                best = other
                best_expert = other_expert
                best_score = other_score
            offset //= 2
        if best_expert % 32 == lane:
            biased[best_expert // 32] = float32(-math.inf)
        total += best_score
        if lane == 0 and valid:
            ids[token, k] = best_expert
            weights[token, k] = best_score
    if lane == 0 and valid:
        for k in range(TOP_K):
            weights[token, k] = weights[token, k] / total * float32(ROUTED_SCALING)


def solve(router_logits, correction_bias):
    tokens, experts = router_logits.shape
    assert experts == NUM_EXPERTS
    weights = torch.empty(tokens, TOP_K, device=router_logits.device, dtype=torch.float32)
    ids = torch.empty(tokens, TOP_K, device=router_logits.device, dtype=torch.int32)
    blocks = (tokens + WARPS - 1) // WARPS
    _grouped_topk[blocks, WARPS * 32](router_logits.float(), correction_bias.float().contiguous(), weights, ids)
    return weights.to(router_logits.dtype), ids
