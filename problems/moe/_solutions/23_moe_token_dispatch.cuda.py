"""CUDA C++ solution for MoE token dispatch: shared-memory chunk histograms, a one-block scan, stable in-chunk ranks (warp match + per-warp counts), 16-byte row gather."""

import torch

import mkb_cuda

SOURCE = r"""
#define EXPERTS_PAD 64   // histogram width (>= number of experts)
#define CHUNK 1024       // routing slots per chunk = threads per block in the chunk kernels
#define WARPS (CHUNK / 32)
#define MAX_CHUNKS 128
#define FULL 0xffffffffu

extern "C" __global__ void chunk_histogram(const int* __restrict__ ids, int* __restrict__ counts, int num_slots) {
    __shared__ int histogram[EXPERTS_PAD];
    if (threadIdx.x < EXPERTS_PAD) histogram[threadIdx.x] = 0;
    __syncthreads();
    const int slot = blockIdx.x * CHUNK + threadIdx.x;
    if (slot < num_slots) atomicAdd(&histogram[ids[slot]], 1);  // integer counts: order does not matter
    __syncthreads();
    if (threadIdx.x < EXPERTS_PAD) counts[blockIdx.x * EXPERTS_PAD + threadIdx.x] = histogram[threadIdx.x];
}

// one block of CHUNK threads: counts staged in shared memory, then thread e scans expert e over the chunks
extern "C" __global__ void scan_counts(const int* __restrict__ counts, int* __restrict__ bases,
                                       int* __restrict__ offsets, int num_chunks, int num_experts) {
    __shared__ int staged[MAX_CHUNKS * EXPERTS_PAD];
    __shared__ int totals[EXPERTS_PAD];
    for (int i = threadIdx.x; i < num_chunks * EXPERTS_PAD; i += blockDim.x) staged[i] = counts[i];
    __syncthreads();
    const int expert = threadIdx.x;
    if (expert < EXPERTS_PAD) {
        int total = 0;
        for (int chunk = 0; chunk < num_chunks; ++chunk) total += staged[chunk * EXPERTS_PAD + expert];
        totals[expert] = total;
    }
    __syncthreads();
    if (expert < EXPERTS_PAD) {
        int start = 0;
        for (int e = 0; e < expert; ++e) start += totals[e];
        int running = start;
        for (int chunk = 0; chunk < num_chunks; ++chunk) {
            bases[chunk * EXPERTS_PAD + expert] = running;
            running += staged[chunk * EXPERTS_PAD + expert];
        }
        if (expert < num_experts) offsets[expert] = start;
        if (expert == num_experts - 1) offsets[num_experts] = running;
    }
}

// stable placement: a slot's row = its chunk's base for its expert + same-expert slots before it in the chunk
// (lanes before it in its warp via __match_any_sync, plus the counts of the earlier warps of the chunk)
extern "C" __global__ void rank_scatter(const int* __restrict__ ids, const int* __restrict__ bases,
                                        int* __restrict__ sorted_slots, int num_slots) {
    __shared__ int warp_counts[WARPS * EXPERTS_PAD];
    for (int i = threadIdx.x; i < WARPS * EXPERTS_PAD; i += blockDim.x) warp_counts[i] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int slot = blockIdx.x * CHUNK + threadIdx.x;
    const int id = slot < num_slots ? ids[slot] : -1;
    const unsigned same = __match_any_sync(FULL, id);
    const int rank_in_warp = __popc(same & ((1u << lane) - 1u));
    if (id >= 0 && rank_in_warp == 0) warp_counts[warp * EXPERTS_PAD + id] = __popc(same);
    __syncthreads();
    if (id < 0) return;
    int rank = rank_in_warp;
    for (int w = 0; w < warp; ++w) rank += warp_counts[w * EXPERTS_PAD + id];
    sorted_slots[bases[blockIdx.x * EXPERTS_PAD + id] + rank] = slot;
}

// one block per permuted row; hidden_size must be a multiple of 8 (16-byte vectors of bf16)
extern "C" __global__ void gather_rows(const unsigned short* __restrict__ hidden, const int* __restrict__ sorted_slots,
                                       unsigned short* __restrict__ out, int hidden_size, int top_k) {
    const long long row = blockIdx.x;
    const long long token = sorted_slots[row] / top_k;
    const uint4* source = reinterpret_cast<const uint4*>(hidden + token * hidden_size);
    uint4* target = reinterpret_cast<uint4*>(out + row * hidden_size);
    for (int v = threadIdx.x; v < hidden_size / 8; v += blockDim.x) target[v] = source[v];
}
"""

NUM_EXPERTS = 60
EXPERTS_PAD = 64
CHUNK = 1024
MAX_CHUNKS = 128
_histogram = mkb_cuda.compile(SOURCE, "chunk_histogram")
_scan = mkb_cuda.compile(SOURCE, "scan_counts")
_rank = mkb_cuda.compile(SOURCE, "rank_scatter")
_gather = mkb_cuda.compile(SOURCE, "gather_rows")


def solve(hidden, topk_ids):
    hidden = hidden.contiguous()
    ids = topk_ids.contiguous().view(-1)
    top_k = topk_ids.shape[1]
    num_slots = ids.numel()
    hidden_size = hidden.shape[1]
    device = hidden.device
    num_chunks = (num_slots + CHUNK - 1) // CHUNK
    if num_chunks > MAX_CHUNKS:
        raise ValueError(f"{num_slots} routing slots exceed the scan's {MAX_CHUNKS * CHUNK}; raise MAX_CHUNKS")
    counts = torch.empty(num_chunks, EXPERTS_PAD, dtype=torch.int32, device=device)
    bases = torch.empty(num_chunks, EXPERTS_PAD, dtype=torch.int32, device=device)
    offsets = torch.empty(NUM_EXPERTS + 1, dtype=torch.int32, device=device)
    sorted_slots = torch.empty(num_slots, dtype=torch.int32, device=device)
    permuted = torch.empty(num_slots, hidden_size, dtype=hidden.dtype, device=device)
    _histogram((num_chunks, 1, 1), (CHUNK, 1, 1), [ids, counts, num_slots])
    _scan((1, 1, 1), (CHUNK, 1, 1), [counts, bases, offsets, num_chunks, NUM_EXPERTS])
    _rank((num_chunks, 1, 1), (CHUNK, 1, 1), [ids, bases, sorted_slots, num_slots])
    _gather((num_slots, 1, 1), (256, 1, 1), [hidden, sorted_slots, permuted, hidden_size, top_k])
    return permuted, sorted_slots, offsets
