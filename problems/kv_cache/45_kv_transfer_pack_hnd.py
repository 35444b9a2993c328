"""Pack finished prefills' K and V from a paged head-major cache into one token-major send buffer (Llama-3.1-70B)."""

import torch

# Disaggregated prefill (vLLM's KV connectors, Mooncake/NIXL-style transfer): when a prefill finishes, its pages are
# packed into a contiguous buffer for the decode instance. Llama-3.1-70B has 8 KV heads of dim 128 (bf16); the
# prefill side keeps FlashInfer's head-major (HND) paged layout [pages, heads, 16 slots, 128] in a pool of 65536
# pages (2.15 GB each for K and V, 4.3 GB in all), and the receiver wants token-major rows [tokens, heads, 128].
# 16 sequences of up to 8192 tokens are packed by cu_seq_lens (sequence b's rows cu_seq_lens[b] ... cu_seq_lens[b + 1]
# - 1) into send[0] (keys) and send[1] (values); page i of
# sequence b (block_table[b, i]) holds its tokens [16 i, 16 i + 16).
# Eager estimate on an H200: ~1.5 ms (two advanced-index gathers with a head/slot transpose, ~0.5 GB written).
BATCH = 16
MAX_CONTEXT = 8192
PAGE_SIZE = 16
NUM_PAGES = 65536
KV_HEADS = 8
HEAD_DIM = 128

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory", "transpose", "paged", "large_inputs"],
    "outliers": False,
}


def make_inputs(device="cuda"):
    pages_per_seq = MAX_CONTEXT // PAGE_SIZE
    k_cache = torch.randn(NUM_PAGES, KV_HEADS, PAGE_SIZE, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(NUM_PAGES, KV_HEADS, PAGE_SIZE, HEAD_DIM, device=device, dtype=torch.bfloat16)
    block_table = torch.randperm(NUM_PAGES, device=device)[: BATCH * pages_per_seq].to(torch.int32)
    block_table = block_table.view(BATCH, pages_per_seq)
    seq_lens = torch.randint(MAX_CONTEXT // 8, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    cu_seq_lens = torch.zeros(BATCH + 1, device=device, dtype=torch.int32)
    cu_seq_lens[1:] = torch.cumsum(seq_lens, 0).to(torch.int32)
    return [k_cache, v_cache, block_table, cu_seq_lens]


def reference(k_cache, v_cache, block_table, cu_seq_lens):
    page_size = k_cache.shape[2]
    lens = cu_seq_lens.to(torch.long).diff()
    seq = torch.repeat_interleave(torch.arange(lens.numel(), device=lens.device), lens)
    pos = torch.arange(seq.numel(), device=lens.device) - cu_seq_lens.to(torch.long)[seq]
    page = block_table.to(torch.long)[seq, pos // page_size]
    slot = pos % page_size
    keys = k_cache[page, :, slot, :]  # [tokens, heads, dim]
    values = v_cache[page, :, slot, :]
    return torch.stack([keys, values], dim=0)
