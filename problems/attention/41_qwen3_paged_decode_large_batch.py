"""Paged GQA decode for a large serving batch over a 4.3 GB paged KV cache (Qwen3-32B: 64 query heads, 8 KV heads)."""

import math

import torch

# Qwen3-32B (64 query heads, 8 KV heads, head dim 128, bf16) on one H200 without tensor parallelism, a decode step
# for 128 sequences with up to 8192 cached tokens each, vLLM-style 16-token pages scattered over a pool of 65536
# pages: the K and V caches take 2.15 GB each (4.3 GB of inputs), so the grader's large-input paths are exercised.
# block_table[b, i] names the page holding tokens [16 i, 16 i + 16) of sequence b; slots at or past seq_lens[b]
# hold stale data and must be ignored. Each group of 8 query heads shares one KV head.
# Eager estimate on an H200: ~25 ms (the reference widens and gathers the whole 4.3 GB cache to float32).
BATCH = 128
QUERY_HEADS = 64
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
MAX_CONTEXT = 8192
MAX_PAGES_PER_SEQ = MAX_CONTEXT // PAGE_SIZE
NUM_PAGES = BATCH * MAX_PAGES_PER_SEQ

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "gqa", "decode", "paged", "gather_scatter", "large_inputs"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    block_table = torch.randperm(NUM_PAGES, device=device).to(torch.int32).view(BATCH, MAX_PAGES_PER_SEQ)
    seq_lens = torch.randint(MAX_CONTEXT // 4, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [q, k_cache, v_cache, block_table, seq_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()  # fp32 math, or float64 for the grader's anchor


def reference(q, k_cache, v_cache, block_table, seq_lens):
    batch, query_heads, dim = q.shape
    _, page_size, kv_heads, _ = k_cache.shape
    pages = block_table.to(torch.long)
    context = pages.shape[1] * page_size
    keys = _wide(k_cache)[pages].view(batch, context, kv_heads, dim).permute(0, 2, 1, 3)  # [B, Hkv, S, D]
    values = _wide(v_cache)[pages].view(batch, context, kv_heads, dim).permute(0, 2, 1, 3)
    grouped = _wide(q).view(batch, kv_heads, query_heads // kv_heads, dim)  # query heads sharing a KV head
    scores = torch.matmul(grouped, keys.transpose(-1, -2)) / math.sqrt(dim)  # [B, Hkv, G, S]
    positions = torch.arange(context, device=q.device)
    valid = positions.unsqueeze(0) < seq_lens.to(torch.long).unsqueeze(1)  # [B, S]
    scores = scores.masked_fill(~valid.view(batch, 1, 1, -1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, values)  # [B, Hkv, G, D]
    return out.reshape(batch, query_heads, dim).to(q.dtype)
