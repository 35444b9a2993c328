"""CUDA C++ solution: one block per (page, sequence) moves the page's K and V as 16-byte vectors; consecutive
threads take consecutive vectors of one (head, slot) row, so both the head-major reads and the token-major writes
are coalesced 256-byte runs.
"""

import torch

import mkb_cuda

SOURCE = r"""
#define KV_HEADS 8
#define PAGE_SIZE 16
#define VECS_PER_ROW 16  // 128 bf16 = 16 x 16 bytes
#define VECS_PER_PAGE (KV_HEADS * PAGE_SIZE * VECS_PER_ROW)
#define THREADS 256

extern "C" __global__ void __launch_bounds__(THREADS)
pack_page(const uint4* __restrict__ k_cache, const uint4* __restrict__ v_cache, const int* __restrict__ block_table,
          const int* __restrict__ cu_seq_lens, uint4* __restrict__ out,
          int pages_per_seq, long long total_tokens) {
    const int b = blockIdx.y;
    const int page_index = blockIdx.x;
    const int first = page_index * PAGE_SIZE;
    const int count = min(PAGE_SIZE, cu_seq_lens[b + 1] - cu_seq_lens[b] - first);
    if (count <= 0) {
        return;
    }
    const long long page = block_table[(long long)b * pages_per_seq + page_index];
    const long long row0 = (long long)cu_seq_lens[b] + first;
    const long long value_half = total_tokens * KV_HEADS * VECS_PER_ROW;
    for (int v = threadIdx.x; v < VECS_PER_PAGE; v += THREADS) {
        const int h = v / (PAGE_SIZE * VECS_PER_ROW);
        const int t = (v / VECS_PER_ROW) % PAGE_SIZE;
        const int c = v % VECS_PER_ROW;
        if (t >= count) {
            continue;
        }
        const long long src = page * VECS_PER_PAGE + v;  // [page, head, slot, vec] in the HND pool
        const long long dst = ((row0 + t) * KV_HEADS + h) * VECS_PER_ROW + c;
        out[dst] = k_cache[src];
        out[value_half + dst] = v_cache[src];
    }
}
"""

THREADS = 256
_kernel = mkb_cuda.compile(SOURCE, "pack_page")


def solve(k_cache, v_cache, block_table, cu_seq_lens):
    k_cache, v_cache, block_table = k_cache.contiguous(), v_cache.contiguous(), block_table.contiguous()
    num_pages, kv_heads, page_size, head_dim = k_cache.shape
    assert (kv_heads, page_size, head_dim) == (8, 16, 128), "written for 8 KV heads, 16-slot pages, dim 128"
    total = int(cu_seq_lens[-1].item())  # the send buffer's size (a read, no arithmetic)
    out = torch.empty(2, total, kv_heads, head_dim, device=k_cache.device, dtype=k_cache.dtype)
    pages_per_seq = block_table.shape[1]
    _kernel((pages_per_seq, block_table.shape[0]), (THREADS,),
            [k_cache, v_cache, block_table, cu_seq_lens.contiguous(), out, pages_per_seq,
             total])
    return out
