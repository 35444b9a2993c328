"""CUDA C++ solution for 14_paged_kv_gather: one block per output token, 16-byte copies of its key and value rows."""

import torch

import mkb_cuda

SOURCE = r"""
// Each thread finds the token's sequence from cu_seq_lens (a short scan), then copies one 16-byte vector of the key row
// and one of the value row from the token's page slot.
extern "C" __global__ void gather_rows(const int4* __restrict__ key_cache, const int4* __restrict__ value_cache,
                                       const int* __restrict__ block_table, const int* __restrict__ cu_seq_lens,
                                       int4* __restrict__ keys, int4* __restrict__ values, int batch, int max_blocks,
                                       int page_size, int row_vectors) {
    const int token = blockIdx.x;
    int sequence = 0;
    for (int b = 1; b <= batch; ++b) {
        sequence += cu_seq_lens[b] <= token ? 1 : 0;
    }
    const int position = token - cu_seq_lens[sequence];
    const long long page = block_table[(long long)sequence * max_blocks + position / page_size];
    const long long slot = page * page_size + position % page_size;
    for (int i = threadIdx.x; i < row_vectors; i += blockDim.x) {
        keys[(long long)token * row_vectors + i] = key_cache[slot * row_vectors + i];
        values[(long long)token * row_vectors + i] = value_cache[slot * row_vectors + i];
    }
}
"""

TOTAL_TOKENS = 32768  # fixed by the problem: the sequence lengths always sum to it
_gather_rows = mkb_cuda.compile(SOURCE, "gather_rows")


def solve(key_cache, value_cache, block_table, cu_seq_lens):
    key_cache, value_cache = key_cache.contiguous(), value_cache.contiguous()
    block_table, cu_seq_lens = block_table.contiguous(), cu_seq_lens.contiguous()
    _, page_size, heads, dim = key_cache.shape
    keys = torch.empty(TOTAL_TOKENS, heads, dim, device=key_cache.device, dtype=key_cache.dtype)
    values = torch.empty_like(keys)
    row_vectors = heads * dim * key_cache.element_size() // 16
    _gather_rows((TOTAL_TOKENS,), (128,), [key_cache, value_cache, block_table, cu_seq_lens, keys, values,
                                          cu_seq_lens.shape[0] - 1, block_table.shape[1], page_size, row_vectors])
    return keys, values
