"""Ragged (varlen) causal grouped-query attention prefill over packed sequences with cu_seqlens (Qwen2.5-7B)."""

import math

import torch

# Qwen2.5-7B prefill as a serving engine batches it: 8 prompts of different lengths (512 to 1536 tokens, 8192 in
# all) packed back to back without padding; cu_seqlens[i] is where prompt i starts and cu_seqlens[8] = 8192.
# 28 query heads share 4 KV heads (groups of 7), head dim 128, bf16. Each token attends causally to the tokens
# of its own prompt only.
TOTAL_TOKENS = 8192
NUM_SEQS = 8
QUERY_HEADS = 28
KV_HEADS = 4
HEAD_DIM = 128
MEAN_LEN = TOTAL_TOKENS // NUM_SEQS
LEN_SPREAD = 512

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "gqa", "prefill", "varlen", "causal"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(TOTAL_TOKENS, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(TOTAL_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(TOTAL_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    # Lengths MEAN_LEN +- d in pairs, shuffled: they sum to TOTAL_TOKENS and stay within [512, 1536].
    spread = torch.randint(-LEN_SPREAD, LEN_SPREAD + 1, (NUM_SEQS // 2,), device=device)
    lengths = (MEAN_LEN + torch.cat([spread, -spread]))[torch.randperm(NUM_SEQS, device=device)]
    cu_seqlens = torch.zeros(NUM_SEQS + 1, device=device, dtype=torch.int32)
    cu_seqlens[1:] = torch.cumsum(lengths, 0).to(torch.int32)
    return [q, k, v, cu_seqlens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()  # fp32 math, or float64 for the grader's anchor


def reference(q, k, v, cu_seqlens):
    total, query_heads, dim = q.shape
    kv_heads = k.shape[1]
    group = query_heads // kv_heads
    out = torch.empty(total, query_heads, dim, device=q.device, dtype=_wide(q).dtype)
    bounds = cu_seqlens.tolist()
    for start, end in zip(bounds[:-1], bounds[1:]):
        length = end - start
        qs = _wide(q[start:end]).permute(1, 0, 2).reshape(kv_heads, group * length, dim)  # rows: (group, token)
        ks = _wide(k[start:end]).permute(1, 0, 2)  # [Hkv, L, D]
        vs = _wide(v[start:end]).permute(1, 0, 2)
        scores = torch.matmul(qs, ks.transpose(-1, -2)).view(kv_heads, group, length, length) / math.sqrt(dim)
        causal = torch.ones(length, length, device=q.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        weights = torch.softmax(scores, dim=-1).view(kv_heads, group * length, length)
        attended = torch.matmul(weights, vs).view(query_heads, length, dim)
        out[start:end] = attended.permute(1, 0, 2)
    return out.to(q.dtype)
