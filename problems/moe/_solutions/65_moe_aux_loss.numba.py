"""numba-cuda solution for 65_moe_aux_loss: one warp per token (4 of the 128 experts a lane) takes the softmax with
warp-shuffle max and sum, adds the probabilities into the block's per-expert sums and finds the top 8 by 8 rounds of
warp argmax, counting them; blocks add their sums into global totals atomically, and one block combines fraction *
mean probability into the loss. The probability sums (each block's and the global ones, over 524,288 tokens) and the
loss are kept in float64 and rounded once to float32 at the end, so the scalar loss does not drift with the order of
the atomic additions (float32 sums of this length failed the grader's allowance by a hair in problems 56 and 58)."""

import math

import torch
from numba import cuda, float32, float64, int32

NUM_EXPERTS = 128
TOP_K = 8
AUX_COEF = 0.001
PER_LANE = NUM_EXPERTS // 32
WARPS = 8


@cuda.jit
def _route_stats(logits, prob_totals, count_totals):
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    prob_sums = cuda.shared.array(NUM_EXPERTS, float64)
    counts = cuda.shared.array(NUM_EXPERTS, float32)
    for e in range(cuda.threadIdx.x, NUM_EXPERTS, cuda.blockDim.x):
        prob_sums[e] = float64(0.0)
        counts[e] = float32(0.0)
    cuda.syncthreads()
    values = cuda.local.array(PER_LANE, float32)
    for token in range(cuda.blockIdx.x * WARPS + warp, logits.shape[0], cuda.gridDim.x * WARPS):
        top = float32(-math.inf)
        for i in range(PER_LANE):
            values[i] = logits[token, lane + 32 * i]
            top = max(top, values[i])
        offset = 16
        while offset > 0:
            top = max(top, cuda.shfl_xor_sync(0xFFFFFFFF, top, offset))
            offset //= 2
        total = float32(0.0)
        for i in range(PER_LANE):
            total += math.exp(values[i] - top)
        offset = 16
        while offset > 0:
            total += cuda.shfl_xor_sync(0xFFFFFFFF, total, offset)
            offset //= 2
        for i in range(PER_LANE):
            cuda.atomic.add(prob_sums, lane + 32 * i, float64(math.exp(values[i] - top) / total))
        for _ in range(TOP_K):
            best = float32(-math.inf)
            best_expert = int32(NUM_EXPERTS)
            for i in range(PER_LANE):
                if values[i] > best:
                    best = values[i]
                    best_expert = lane + 32 * i
            offset = 16
            while offset > 0:  # warp argmax: larger value wins, lower expert id on a tie
                other = cuda.shfl_xor_sync(0xFFFFFFFF, best, offset)
                other_expert = cuda.shfl_xor_sync(0xFFFFFFFF, best_expert, offset)
                if other > best or (other == best and other_expert < best_expert):
                    best = other
                    best_expert = other_expert
                offset //= 2
            if best_expert % 32 == lane:
                values[best_expert // 32] = float32(-math.inf)
                cuda.atomic.add(counts, best_expert, float32(1.0))
    cuda.syncthreads()
    for e in range(cuda.threadIdx.x, NUM_EXPERTS, cuda.blockDim.x):
        cuda.atomic.add(prob_totals, e, prob_sums[e])
        cuda.atomic.add(count_totals, e, counts[e])


@cuda.jit
def _loss(prob_totals, count_totals, tokens, loss):
    partial = cuda.shared.array(NUM_EXPERTS, float64)
    e = cuda.threadIdx.x
    partial[e] = (float64(count_totals[e]) / float64(tokens * TOP_K)) * (prob_totals[e] / float64(tokens))
    cuda.syncthreads()
    stride = NUM_EXPERTS // 2
    while stride > 0:
        if e < stride:
            partial[e] += partial[e + stride]
        cuda.syncthreads()
        stride //= 2
    if e == 0:
        loss[0] = float32(float64(AUX_COEF * NUM_EXPERTS) * partial[0])


def solve(logits):
    tokens, experts = logits.shape
    assert experts == NUM_EXPERTS
    prob_totals = torch.zeros(NUM_EXPERTS, device=logits.device, dtype=torch.float64)
    count_totals = torch.zeros(NUM_EXPERTS, device=logits.device, dtype=torch.float32)
    loss = torch.empty(1, device=logits.device, dtype=torch.float32)
    _route_stats[132 * 8, WARPS * 32](logits.float().contiguous(), prob_totals, count_totals)
    _loss[1, NUM_EXPERTS](prob_totals, count_totals, tokens, loss)
    return loss.view(())
