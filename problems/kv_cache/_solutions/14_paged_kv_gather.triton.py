"""Triton solution for 14_paged_kv_gather: one program per output token finds its sequence, page and slot."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(key_cache_ptr, value_cache_ptr, block_table_ptr, cu_seq_lens_ptr, keys_ptr, values_ptr,
                   BATCH: tl.constexpr, BATCH_PAD: tl.constexpr, MAX_BLOCKS: tl.constexpr, PAGE_SIZE: tl.constexpr,
                   ROW: tl.constexpr):
    token = tl.program_id(0)
    sequences = tl.arange(0, BATCH_PAD)
    ends = tl.load(cu_seq_lens_ptr + 1 + sequences, mask=sequences < BATCH, other=2147483647)
    sequence = tl.sum((ends <= token).to(tl.int32), axis=0)  # number of sequences ending at or before this token
    position = token - tl.load(cu_seq_lens_ptr + sequence)
    page = tl.load(block_table_ptr + sequence * MAX_BLOCKS + position // PAGE_SIZE).to(tl.int64)
    slot = page * PAGE_SIZE + position % PAGE_SIZE
    offsets = tl.arange(0, ROW)
    target = token.to(tl.int64) * ROW + offsets
    tl.store(keys_ptr + target, tl.load(key_cache_ptr + slot * ROW + offsets))
    tl.store(values_ptr + target, tl.load(value_cache_ptr + slot * ROW + offsets))


def solve(key_cache, value_cache, block_table, cu_seq_lens):
    key_cache, value_cache = key_cache.contiguous(), value_cache.contiguous()
    block_table, cu_seq_lens = block_table.contiguous(), cu_seq_lens.contiguous()
    _, page_size, heads, dim = key_cache.shape
    batch = cu_seq_lens.shape[0] - 1
    total_tokens = 32768  # fixed by the problem: the sequence lengths always sum to TOTAL_TOKENS
    keys = torch.empty(total_tokens, heads, dim, device=key_cache.device, dtype=key_cache.dtype)
    values = torch.empty_like(keys)
    _gather_kernel[(total_tokens,)](key_cache, value_cache, block_table, cu_seq_lens, keys, values, BATCH=batch,
                                    BATCH_PAD=triton.next_power_of_2(batch), MAX_BLOCKS=block_table.shape[1],
                                    PAGE_SIZE=page_size, ROW=heads * dim, num_warps=4)
    return keys, values
