"""Gather a batch's keys and values from a paged KV cache into contiguous ragged buffers (16-token pages)."""

import torch

# vLLM's gather_cache step for chunked prefill with prefix caching on Llama-3-8B (8 KV heads of dim 128): 16
# sequences of 1024..3072 cached tokens (32768 in all, offsets in cu_seq_lens) are copied out of a pool of 4096
# pages of 16 slots, page by page as each sequence's block table says, into token-major contiguous buffers.
# pallas stays below eager here (0.38x [0.35, 0.39] on an H100, 2026-12-06): its kernel takes Triton's device time
# (0.089 against 0.087 ms); the other 1.0 ms is host work outside the device: JAX's per-call cost around the jitted
# pallas_call and its 4 DLPack imports, and a host read of the total length (a static argument of the jit). The
# cheapest Pallas round trip measured in the suite (problem 18: one import, one export) spends 0.49 ms outside the
# device, more than eager's 0.42 ms for everything, so no Pallas solution can reach eager (inferred).
# numba stays below eager here (0.83x [0.80, 0.86] on an H100, 2026-12-06): one launch with five tensor arguments and
# no host read; the kernel's copy is Triton's device work (about 0.09 ms), and numba's launch, which converts every
# tensor argument on the host, takes the rest. Six arguments and a host read of the total measured 0.71x.
BATCH = 16
TOTAL_TOKENS = 32768
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
MAX_BLOCKS_PER_SEQ = 256  # up to 4096 tokens per sequence
NUM_PAGES = BATCH * MAX_BLOCKS_PER_SEQ

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory"],
    "outliers": {"inputs": [0, 1]},
}


def make_inputs(device="cuda"):
    key_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    value_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    block_table = torch.randperm(NUM_PAGES, device=device).view(BATCH, MAX_BLOCKS_PER_SEQ).to(torch.int32)
    mean = TOTAL_TOKENS // BATCH
    shift = torch.randint(-mean // 2, mean // 2 + 1, (BATCH // 2,), device=device)
    seq_lens = torch.cat([mean + shift, mean - shift])[torch.randperm(BATCH, device=device)]  # sums to TOTAL_TOKENS
    cu_seq_lens = torch.cat([torch.zeros(1, dtype=torch.long, device=device), seq_lens.cumsum(0)]).to(torch.int32)
    return [key_cache, value_cache, block_table, cu_seq_lens]


def reference(key_cache, value_cache, block_table, cu_seq_lens):
    pages, page_size, heads, dim = key_cache.shape
    starts = cu_seq_lens.to(torch.long)
    tokens = torch.arange(TOTAL_TOKENS, device=key_cache.device)
    sequence = torch.searchsorted(starts[1:].contiguous(), tokens, right=True)  # which sequence each token is in
    position = tokens - starts[sequence]
    page = block_table.to(torch.long)[sequence, position // page_size]
    slot = page * page_size + position % page_size
    keys = key_cache.reshape(pages * page_size, heads, dim)[slot]
    values = value_cache.reshape(pages * page_size, heads, dim)[slot]
    return keys, values
