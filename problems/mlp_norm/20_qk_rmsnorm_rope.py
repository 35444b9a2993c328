"""Per-head RMSNorm on queries and keys followed by rotary embedding, from a fused QKV projection (Qwen3-8B)."""

import torch

# Qwen3-8B attention prologue during prefill: the fused qkv projection gives 8192 tokens x (32 query + 8 key + 8
# value heads) x head dim 128. Queries and keys are each RMS-normalised per head (q_norm / k_norm, eps 1e-6, weight
# of size 128), then rotated with neox-style rotary (rope theta 1e6) read from a float32 cos|sin cache of 40960
# positions. Returns the rotated queries and keys; values pass through untouched and are not part of the output.
NUM_TOKENS = 8192
QUERY_HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
MAX_POSITION = 40960
ROPE_THETA = 1000000.0
EPS = 1e-6

MKB_META = {
    "category": "Normalization",
    "tags": ["reduction", "normalization", "rope", "elementwise"],
    "outliers": {"inputs": [0]},
    # cos_sin_cache is the model's fixed RoPE table (rope_theta, positions), not data: every seed gives the same
    # values.
    "insensitive": [4],
}


def make_inputs(device="cuda"):
    qkv = torch.randn(NUM_TOKENS, (QUERY_HEADS + 2 * KV_HEADS) * HEAD_DIM, device=device, dtype=torch.bfloat16)
    q_norm_weight = (1.0 + 0.2 * torch.randn(HEAD_DIM, device=device)).to(torch.bfloat16)
    k_norm_weight = (1.0 + 0.2 * torch.randn(HEAD_DIM, device=device)).to(torch.bfloat16)
    positions = torch.randint(0, MAX_POSITION, (NUM_TOKENS,), device=device)
    exponents = torch.arange(0, HEAD_DIM, 2, device=device, dtype=torch.float64) / HEAD_DIM
    angles = torch.arange(MAX_POSITION, device=device, dtype=torch.float64).unsqueeze(1) / ROPE_THETA**exponents
    cos_sin_cache = torch.cat([angles.cos(), angles.sin()], dim=-1).to(torch.float32)  # [MAX_POSITION, HEAD_DIM]
    return [qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _norm_and_rotate(x, weight, cos, sin):
    normed = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * weight
    half = x.shape[-1] // 2
    x1, x2 = normed[..., :half], normed[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def reference(qkv, q_norm_weight, k_norm_weight, positions, cos_sin_cache):
    tokens = qkv.shape[0]
    query_width, key_width = QUERY_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    query = _wide(qkv[:, :query_width]).view(tokens, QUERY_HEADS, HEAD_DIM)
    key = _wide(qkv[:, query_width:query_width + key_width]).view(tokens, KV_HEADS, HEAD_DIM)
    cos_sin = _wide(cos_sin_cache)[positions].unsqueeze(1)
    cos, sin = cos_sin[..., :HEAD_DIM // 2], cos_sin[..., HEAD_DIM // 2:]
    rotated_query = _norm_and_rotate(query, _wide(q_norm_weight), cos, sin)
    rotated_key = _norm_and_rotate(key, _wide(k_norm_weight), cos, sin)
    return rotated_query.to(qkv.dtype), rotated_key.to(qkv.dtype)
