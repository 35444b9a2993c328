"""Sparse MLA decode over the 2048 cached tokens a top-k indexer picked per sequence (DeepSeek-V3.2, absorbed form)."""

import torch

# DeepSeek-V3.2 sparse attention (DSA), decode, weight-absorbed MLA on one H200 with 128 heads: each query row is 576
# wide (512 latent + 64 decoupled-rope dims), every cached token is one shared 576-wide latent row, and the value is
# the row's first 512 dims. The lightning indexer (39_dsa_lightning_indexer_decode) has picked, for each of 64
# sequences, the top 2048 cached tokens; their physical rows in the 2.4 GB latent pool (2M tokens) arrive as
# topk_slots, -1 where a sequence has fewer than 2048 cached tokens. Softmax scale 1/sqrt(192) (qk head dim of the
# unabsorbed model). The output is [64, 128, 512] bf16.
# Eager estimate on an H200: ~3 ms (the reference widens the 2.4 GB pool to float32 before gathering, then two
# batched float32 GEMMs).
BATCH = 64
HEADS = 128
LATENT_DIM = 512
ROPE_DIM = 64
TOP_K = 2048
MAX_CONTEXT = 32768
POOL_TOKENS = BATCH * MAX_CONTEXT
SOFTMAX_SCALE = 192**-0.5

MKB_META = {
    "category": "Fusion",
    "tags": ["attention", "reduction", "mla", "decode", "sparse_attention", "gather_scatter", "large_inputs"],
    "outliers": {"inputs": [0, 1]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, HEADS, LATENT_DIM + ROPE_DIM, device=device, dtype=torch.bfloat16)
    latent = torch.randn(POOL_TOKENS, LATENT_DIM + ROPE_DIM, device=device, dtype=torch.bfloat16)
    seq_lens = torch.randint(TOP_K // 2, MAX_CONTEXT + 1, (BATCH,)).tolist()
    slots = torch.full((BATCH, TOP_K), -1, dtype=torch.int32)
    for b, length in enumerate(seq_lens):  # the indexer's picks: distinct positions of sequence b's region
        picked = torch.randperm(length)[:TOP_K] + b * MAX_CONTEXT
        slots[b, : picked.numel()] = picked.to(torch.int32)
    return [q, latent, slots.to(device)]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, latent, topk_slots):
    latent_dim = latent.shape[1] - ROPE_DIM
    valid = topk_slots >= 0  # [B, K]
    rows = _wide(latent)[topk_slots.clamp(min=0).to(torch.long)]  # [B, K, 576]
    scores = torch.matmul(_wide(q), rows.transpose(1, 2)) * SOFTMAX_SCALE  # [B, H, K]
    scores = scores.masked_fill(~valid.unsqueeze(1), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = torch.matmul(weights, rows[..., :latent_dim])  # [B, H, 512]
    return out.to(q.dtype)
