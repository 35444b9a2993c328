"""CUDA C++ solution for 66_moe_contiguous_layout_permute: per-expert stable ranks by a block-wide scan over contiguous slot ranges, segment starts by one serial scan, a block per token scattering its rows, a block per padding row zero-filling it."""

import torch

import mkb_cuda

SOURCE = r"""
#define RANK_THREADS 1024

// Block e ranks the slots of expert e in ascending slot order; thread t scans slots [t * span, (t + 1) * span).
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

extern "C" __global__ void segment_starts(const int* __restrict__ counts, int* __restrict__ starts, int experts,
                                          int align) {
    if (threadIdx.x != 0) return;
    int total = 0;
    for (int e = 0; e < experts; ++e) {
        starts[e] = total;
        total += (counts[e] + align - 1) / align * align;
    }
}

extern "C" __global__ void scatter_rows(const uint4* __restrict__ x, const int* __restrict__ ids,
                                        const int* __restrict__ rank, const int* __restrict__ starts,
                                        uint4* __restrict__ permuted, int* __restrict__ m_indices,
                                        int* __restrict__ row_of, int row_vectors, int top_k) {
    const long long token = blockIdx.x;
    for (int k = 0; k < top_k; ++k) {
        const long long slot = token * top_k + k;
        const int expert = ids[slot];
        const int row = starts[expert] + rank[slot];
        if (threadIdx.x == 0) {
            row_of[slot] = row;
            m_indices[row] = expert;
        }
        for (int v = threadIdx.x; v < row_vectors; v += blockDim.x)
            permuted[(long long)row * row_vectors + v] = x[token * row_vectors + v];
    }
}

// Block p: row p of the output; rows that hold no slot get m_indices -1 and zeros.
extern "C" __global__ void pad_rows(const int* __restrict__ starts, const int* __restrict__ counts,
                                    uint4* __restrict__ permuted, int* __restrict__ m_indices, int experts,
                                    int row_vectors) {
    const int row = blockIdx.x;
    int low = 0, high = experts - 1;  // the last expert whose start is <= row
    while (low < high) {
        const int mid = (low + high + 1) / 2;
        if (starts[mid] <= row) low = mid; else high = mid - 1;
    }
    if (row - starts[low] < counts[low]) return;
    if (threadIdx.x == 0) m_indices[row] = -1;
    const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
    for (int v = threadIdx.x; v < row_vectors; v += blockDim.x) permuted[(long long)row * row_vectors + v] = zero;
}
"""

ALIGN = 128
EXPERTS = 256  # DeepSeek-V3's routed experts
_ranks = mkb_cuda.compile(SOURCE, "expert_ranks")
_starts = mkb_cuda.compile(SOURCE, "segment_starts")
_scatter = mkb_cuda.compile(SOURCE, "scatter_rows")
_pad = mkb_cuda.compile(SOURCE, "pad_rows")


def solve(x, topk_ids):
    x, topk_ids = x.contiguous(), topk_ids.contiguous()
    tokens, top_k = topk_ids.shape
    hidden = x.shape[1]
    slots = tokens * top_k
    capacity = slots + EXPERTS * (ALIGN - 1)
    device = x.device
    rank = torch.empty(slots, dtype=torch.int32, device=device)
    counts = torch.empty(EXPERTS, dtype=torch.int32, device=device)
    starts = torch.empty(EXPERTS, dtype=torch.int32, device=device)
    permuted = torch.empty(capacity, hidden, dtype=x.dtype, device=device)
    m_indices = torch.empty(capacity, dtype=torch.int32, device=device)
    row_of = torch.empty(tokens, top_k, dtype=torch.int32, device=device)
    row_vectors = hidden // 8
    _ranks((EXPERTS,), (1024,), [topk_ids, rank, counts, slots])
    _starts((1,), (32,), [counts, starts, EXPERTS, ALIGN])
    _scatter((tokens,), (256,), [x, topk_ids, rank, starts, permuted, m_indices, row_of, row_vectors, top_k])
    _pad((capacity,), (128,), [starts, counts, permuted, m_indices, EXPERTS, row_vectors])
    return permuted, m_indices, row_of
