"""Grouped-query attention decode step over a ragged KV cache (Llama-3-8B: 32 query heads, 8 KV heads, head dim 128)."""

import math

import torch

# Llama-3-8B decode: a batch of 8 sequences, each with one new query token, attending to up to 4096 cached
# tokens. Four query heads share each KV head (GQA). Sequences have different lengths; cache rows past a
# sequence's length hold stale data and must be ignored.
# pallas stays below eager here (0.67x [0.63, 0.71] on an H100, 2026-12-06): of its 1.03 ms, 0.11 ms is device time
# (Triton's kernel: 0.04 ms) and 0.92 ms is JAX's per-call host work around the jitted pallas_call and its 4 DLPack
# imports, by itself more than eager's 0.69 ms for everything. Packing every input into one import costs a torch.cat
# of the two 67 MB caches (about 0.09 ms); with a Triton-grade kernel and the cheapest Pallas round trip measured in
# the suite (problem 18: 0.49 ms outside the device) that is 0.62-0.67 ms, about eager's time (inferred).
# bench/results/suite-4dsl-h100-r3.md (grader 10bf8b0753e6, another H100): 0.64x [0.62, 0.69], 0.11 ms on the device
# and 0.84 ms outside it, against eager's 0.61 ms.
BATCH = 8
QUERY_HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
MAX_CONTEXT = 4096

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "gqa", "decode"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    k_cache = torch.randn(BATCH, KV_HEADS, MAX_CONTEXT, HEAD_DIM, device=device, dtype=torch.float16)
    v_cache = torch.randn(BATCH, KV_HEADS, MAX_CONTEXT, HEAD_DIM, device=device, dtype=torch.float16)
    seq_lens = torch.randint(MAX_CONTEXT // 2, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [q, k_cache, v_cache, seq_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()  # fp32 math, or float64 for the grader's anchor


def reference(q, k_cache, v_cache, seq_lens):
    batch, query_heads, dim = q.shape
    kv_heads = k_cache.shape[1]
    grouped = _wide(q).view(batch, kv_heads, query_heads // kv_heads, dim)  # query heads sharing a KV head
    scores = torch.matmul(grouped, _wide(k_cache).transpose(-1, -2)) / math.sqrt(dim)  # [B, Hkv, G, S]
    positions = torch.arange(k_cache.shape[2], device=q.device)
    valid = positions.unsqueeze(0) < seq_lens.to(torch.long).unsqueeze(1)  # [B, S]
    scores = scores.masked_fill(~valid.view(batch, 1, 1, -1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, _wide(v_cache))  # [B, Hkv, G, D]
    return out.reshape(batch, query_heads, dim).to(q.dtype)
