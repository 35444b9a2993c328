"""Rotary embedding on queries and keys fused with the paged KV-cache write (Llama-3-8B, 16-token pages)."""

import torch

# Llama-3-8B attention prologue during chunked prefill, as in vLLM: 4096 new tokens at scattered positions, 32 query
# heads and 8 KV heads of dim 128, neox-style rotary (rotate_half) read from a precomputed float32 cos|sin cache
# (rope theta 500000, 8192 positions). The rotated queries are returned; the rotated keys and the values go into a
# paged cache of 2048 pages of 16 token slots, every other slot keeping its previous content.
# pallas stays below eager here (0.81x [0.79, 0.84] on an H100, 2026-12-06): an earlier Pallas form took Triton's
# device time (0.128 against 0.125 ms) and this one adds a copy of the caches (about 0.1 ms); the rest is host work
# outside the device, JAX's per-call cost around the jitted pallas_call and its DLPack import. The solution already brings everything across in one import
# (eight imports measured 0.58x); the cheapest Pallas round trip measured in the suite (problem 18: one import, one
# export) spends 0.49 ms outside the device, about eager's whole 0.6-0.7 ms here with the caches' copy added.
NUM_TOKENS = 4096
QUERY_HEADS = 32
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
NUM_PAGES = 2048
MAX_POSITION = 8192
ROPE_THETA = 500000.0

MKB_META = {
    "category": "Index",
    "tags": ["elementwise", "gather_scatter", "rope", "memory"],
    "outliers": {"inputs": [1, 2, 3, 5, 6]},
    # cos_sin_cache is the model's fixed RoPE table (rope_theta, positions), not data: every seed gives the same
    # values.
    "insensitive": [4],
}


def make_inputs(device="cuda"):
    positions = torch.randint(0, MAX_POSITION, (NUM_TOKENS,), device=device)
    query = torch.randn(NUM_TOKENS, QUERY_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    key = torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    value = torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    exponents = torch.arange(0, HEAD_DIM, 2, device=device, dtype=torch.float64) / HEAD_DIM
    angles = torch.arange(MAX_POSITION, device=device, dtype=torch.float64).unsqueeze(1) / ROPE_THETA**exponents
    cos_sin_cache = torch.cat([angles.cos(), angles.sin()], dim=-1).to(torch.float32)  # [MAX_POSITION, HEAD_DIM]
    key_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    value_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    slot_mapping = torch.randperm(NUM_PAGES * PAGE_SIZE, device=device)[:NUM_TOKENS]
    return [positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def reference(positions, query, key, value, cos_sin_cache, key_cache, value_cache, slot_mapping):
    half = cos_sin_cache.shape[-1] // 2
    cos_sin = _wide(cos_sin_cache)[positions].unsqueeze(1)  # [T, 1, HEAD_DIM]
    cos, sin = cos_sin[..., :half], cos_sin[..., half:]
    rotated_query = _rotate(_wide(query), cos, sin).to(query.dtype)
    rotated_key = _rotate(_wide(key), cos, sin).to(key.dtype)
    pages, page_size, heads, dim = key_cache.shape
    new_keys = key_cache.clone().view(pages * page_size, heads, dim)
    new_values = value_cache.clone().view(pages * page_size, heads, dim)
    new_keys[slot_mapping] = rotated_key
    new_values[slot_mapping] = value
    return rotated_query, new_keys.view(key_cache.shape), new_values.view(value_cache.shape)
