"""Sliding-window (128) causal GQA prefill with learned attention sinks (GPT-OSS-120B's banded layers)."""

import math

import torch

# GPT-OSS-120B alternates full and banded attention layers; a banded layer lets each token see itself and the 127
# tokens before it. 64 query heads share 8 KV heads (head dim 64, bf16, scale 1/8), and every head has a learned sink:
# a logit that joins each row's softmax denominator without a value, so p = exp(s) / (exp(sink) + sum exp(s)).
# A prefill batch of 2 prompts of 2048 tokens, layout [batch, tokens, heads, dim].
# Eager estimate on an H200: ~5 ms (the reference materialises [2, 64, 2048, 2048] float32 scores and masks them).
BATCH = 2
SEQ_LEN = 2048
QUERY_HEADS = 64
KV_HEADS = 8
HEAD_DIM = 64
WINDOW = 128

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "gqa", "prefill", "causal", "sliding_window", "attention_sink"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, SEQ_LEN, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(BATCH, SEQ_LEN, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(BATCH, SEQ_LEN, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    sinks = 2.0 * torch.randn(QUERY_HEADS, device=device, dtype=torch.float32)
    return [q, k, v, sinks]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, k, v, sinks):
    batch, seq_len, query_heads, dim = q.shape
    group = query_heads // k.shape[2]
    qh = _wide(q).transpose(1, 2)  # [B, Hq, T, D]
    kh = _wide(k).transpose(1, 2).repeat_interleave(group, dim=1)
    vh = _wide(v).transpose(1, 2).repeat_interleave(group, dim=1)
    scores = torch.matmul(qh, kh.transpose(-1, -2)) / math.sqrt(dim)
    i = torch.arange(seq_len, device=q.device).unsqueeze(1)
    j = torch.arange(seq_len, device=q.device).unsqueeze(0)
    visible = (j <= i) & (i - j < WINDOW)
    scores = scores.masked_fill(~visible, float("-inf"))
    sink = _wide(sinks).view(1, -1, 1, 1).expand(batch, -1, seq_len, 1)
    weights = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :seq_len]
    out = torch.matmul(weights, vh)  # [B, Hq, T, D]
    return out.transpose(1, 2).to(q.dtype)
