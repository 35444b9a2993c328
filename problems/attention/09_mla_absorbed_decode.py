"""Multi-head latent attention (MLA) decode, weight-absorbed form, over a compressed latent KV cache (DeepSeek-V3)."""

import torch

# DeepSeek-V3 MLA decode with the key/value up-projections absorbed into the query and output sides (as FlashMLA
# runs it): every cached token is one 576-wide row, the 512-dim compressed latent c_kv followed by the 64-dim shared
# RoPE key; all heads attend to the same rows (multi-query style). Scores use the full 576 dims with softmax scale
# 1/sqrt(128 + 64) (qk_nope_head_dim + qk_rope_head_dim); the output is the attention-weighted latent (first 512
# dims), before the absorbed V up-projection. Tensor parallelism 8 leaves 128 / 8 = 16 heads per GPU; a decode step
# of 32 sequences with up to 4096 cached tokens each, bf16. Cache rows at or past seq_lens[b] hold stale data.
# pallas stays below eager here (0.46x [0.44, 0.53] on an H100, 2026-12-06): JAX's per-call host work around the
# jitted pallas_call and its 3 DLPack imports takes 0.91 ms outside the device, more than eager's 0.77 ms for
# everything. Its kernel (one program per head, so 16 programs read each sequence's cache) also takes 0.77 ms of
# device time against Triton's 0.14 ms; but a Triton-grade kernel with every input packed into one import (a copy of
# the 151 MB cache, about 0.1 ms) at the cheapest Pallas round trip measured in the suite (problem 18: 0.49 ms outside
# the device) would still come to about eager's time (inferred).
BATCH = 32
HEADS = 16
KV_LORA_RANK = 512
ROPE_DIM = 64
QK_NOPE_HEAD_DIM = 128
MAX_CONTEXT = 4096
SOFTMAX_SCALE = (QK_NOPE_HEAD_DIM + ROPE_DIM) ** -0.5

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "mla", "decode"],
    "outliers": {"inputs": [0, 1]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, HEADS, KV_LORA_RANK + ROPE_DIM, device=device, dtype=torch.bfloat16)
    kv_cache = torch.randn(BATCH, MAX_CONTEXT, KV_LORA_RANK + ROPE_DIM, device=device, dtype=torch.bfloat16)
    seq_lens = torch.randint(MAX_CONTEXT // 4, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [q, kv_cache, seq_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()  # fp32 math, or float64 for the grader's anchor


def reference(q, kv_cache, seq_lens):
    batch, heads, _ = q.shape
    context = kv_cache.shape[1]
    rows = _wide(kv_cache)  # [B, S, 576]
    scores = torch.matmul(_wide(q), rows.transpose(-1, -2)) * SOFTMAX_SCALE  # [B, H, S]
    positions = torch.arange(context, device=q.device)
    valid = positions.unsqueeze(0) < seq_lens.to(torch.long).unsqueeze(1)  # [B, S]
    scores = scores.masked_fill(~valid.view(batch, 1, -1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    latent = torch.matmul(weights, rows[:, :, :KV_LORA_RANK])  # [B, H, 512]
    return latent.to(q.dtype)
