"""Speculative-decoding verification attention: 4 causal draft tokens per sequence over a KV cache (Llama-3.1-8B)."""

import math

import torch

# Llama-3.1-8B serving with speculative decoding: the target model verifies 4 tokens per sequence in one step
# (the last accepted token plus 3 draft tokens). Their keys and values are already written at cache positions
# [len - 4, len); query t (0..3) sits at position len - 4 + t and sees cache positions <= len - 4 + t. 32 query
# heads share 8 KV heads (groups of 4), head dim 128, fp16, flash-attention cache layout [batch, slot, head, dim];
# 16 sequences with up to 4096 cached tokens. Slots at or past cache_lens[b] hold stale data.
BATCH = 16
NEW_TOKENS = 4
QUERY_HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
MAX_CONTEXT = 4096

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "gqa", "decode", "speculative", "causal"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, NEW_TOKENS, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    k_cache = torch.randn(BATCH, MAX_CONTEXT, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    v_cache = torch.randn(BATCH, MAX_CONTEXT, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    cache_lens = torch.randint(MAX_CONTEXT // 4, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [q, k_cache, v_cache, cache_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()  # fp32 math, or float64 for the grader's anchor


def reference(q, k_cache, v_cache, cache_lens):
    batch, new_tokens, query_heads, dim = q.shape
    context, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = query_heads // kv_heads
    # Rows per KV head ordered (token, head in group): [B, Hkv, T * G, D].
    grouped = _wide(q).view(batch, new_tokens, kv_heads, group, dim).permute(0, 2, 1, 3, 4)
    grouped = grouped.reshape(batch, kv_heads, new_tokens * group, dim)
    keys = _wide(k_cache).permute(0, 2, 1, 3)  # [B, Hkv, S, D]
    values = _wide(v_cache).permute(0, 2, 1, 3)
    scores = torch.matmul(grouped, keys.transpose(-1, -2)) / math.sqrt(dim)  # [B, Hkv, T * G, S]
    query_pos = cache_lens.to(torch.long).view(batch, 1) - new_tokens + torch.arange(new_tokens, device=q.device)
    key_pos = torch.arange(context, device=q.device)
    visible = key_pos.view(1, 1, -1) <= query_pos.view(batch, new_tokens, 1)  # [B, T, S]
    visible = visible.repeat_interleave(group, dim=1)  # [B, T * G, S]
    scores = scores.masked_fill(~visible.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, values)  # [B, Hkv, T * G, D]
    out = out.view(batch, kv_heads, new_tokens, group, dim).permute(0, 2, 1, 3, 4)
    return out.reshape(batch, new_tokens, query_heads, dim).to(q.dtype)
