"""CUDA C++ solution for 68_capacity_token_dispatch: per-expert stable ranks by a block-wide scan over contiguous slot ranges, a block per token copying its kept slots, a block per unused capacity row zero-filling it."""

import torch

import mkb_cuda

SOURCE = r"""
#define RANK_THREADS 1024

extern "C" __global__ void __launch_bounds__(RANK_THREADS) expert_ranks(const int* __restrict__ ids,
                                                                         int* __restrict__ rank,
                                                                         int* __restrict__ counts, int slots) {
    __shared__ int scan[RANK_THREADS];
    const int expert = blockIdx.x, t = threadIdx.x;
    const int span = (slots + RANK_THREADS - 1) / RANK_THREADS;
    const int begin = min(t * span, slots), end = min(begin + span, slots);
    int mine = 0;
    for (int i = begin; i < end; ++i) mine += ids[i] == expert;
    scan[t] = mine;
    __syncthreads();
    for (int offset = 1; offset < RANK_THREADS; offset <<= 1) {  // inclusive Hillis-Steele scan
        const int add = t >= offset ? scan[t - offset] : 0;
        __syncthreads();
        scan[t] += add;
        __syncthreads();
    }
    int next = scan[t] - mine;
    for (int i = begin; i < end; ++i)
        if (ids[i] == expert) rank[i] = next++;
    if (t == RANK_THREADS - 1) counts[expert] = scan[t];
}

extern "C" __global__ void dispatch_rows(const uint4* __restrict__ x, const int* __restrict__ ids,
                                         const int* __restrict__ rank, uint4* __restrict__ dispatched,
                                         int* __restrict__ slot_of, int row_vectors, int top_k, int capacity) {
    const long long token = blockIdx.x;
    for (int k = 0; k < top_k; ++k) {
        const long long slot = token * top_k + k;
        const int r = rank[slot];
        const bool kept = r < capacity;
        const long long destination = (long long)ids[slot] * capacity + r;
        if (threadIdx.x == 0) slot_of[slot] = kept ? (int)destination : -1;
        if (!kept) continue;
        for (int v = threadIdx.x; v < row_vectors; v += blockDim.x)
            dispatched[destination * row_vectors + v] = x[token * row_vectors + v];
    }
}

// Block (r, e): capacity row r of expert e, zeroed when no kept slot landed there.
extern "C" __global__ void zero_unused(const int* __restrict__ counts, uint4* __restrict__ dispatched,
                                       int row_vectors, int capacity) {
    const int r = blockIdx.x, expert = blockIdx.y;
    if (r < counts[expert]) return;
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    const long long row = (long long)expert * capacity + r;
    for (int v = threadIdx.x; v < row_vectors; v += blockDim.x) dispatched[row * row_vectors + v] = zero;
}
"""

NUM_EXPERTS = 8
_ranks = mkb_cuda.compile(SOURCE, "expert_ranks")
_dispatch = mkb_cuda.compile(SOURCE, "dispatch_rows")
_zero = mkb_cuda.compile(SOURCE, "zero_unused")


def solve(x, topk_ids):
    x, topk_ids = x.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    hidden = x.shape[1]
    slots = tokens * top_k
    capacity = slots // NUM_EXPERTS
    device = x.device
    rank = torch.empty(slots, dtype=torch.int32, device=device)
    counts = torch.empty(NUM_EXPERTS, dtype=torch.int32, device=device)
    dispatched = torch.empty(NUM_EXPERTS, capacity, hidden, dtype=x.dtype, device=device)
    slot_of = torch.empty(tokens, top_k, dtype=torch.int32, device=device)
    row_vectors = hidden // 8
    _ranks((NUM_EXPERTS,), (1024,), [topk_ids, rank, counts, slots])
    _dispatch((tokens,), (256,), [x, topk_ids, rank, dispatched, slot_of, row_vectors, top_k, capacity])
    _zero((capacity, NUM_EXPERTS), (256,), [counts, dispatched, row_vectors, capacity])
    return dispatched, slot_of
