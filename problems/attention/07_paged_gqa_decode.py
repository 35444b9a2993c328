"""Paged grouped-query attention decode over a 16-token-page block table (Llama-3-70B, one tensor-parallel shard)."""

import math

import torch

# Llama-3-70B served with tensor parallelism 8 (vLLM-style paged KV cache): each GPU holds 8 of the 64 query heads
# and 1 of the 8 KV heads, head dim 128, bf16. A decode step for 64 sequences, each with one new query token and
# up to 4096 cached tokens stored in 16-token pages scattered over the page pool. block_table[b, i] names the page
# holding tokens [16 i, 16 i + 16) of sequence b; slots at or past seq_lens[b] hold stale data and must be ignored.
BATCH = 64
QUERY_HEADS = 8
KV_HEADS = 1
HEAD_DIM = 128
PAGE_SIZE = 16
MAX_CONTEXT = 4096
MAX_PAGES_PER_SEQ = MAX_CONTEXT // PAGE_SIZE
NUM_PAGES = BATCH * MAX_PAGES_PER_SEQ

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "gqa", "decode", "paged", "gather_scatter"],
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
