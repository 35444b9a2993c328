"""Compact paged KV caches to 4 sink tokens plus the last 1020, re-rotating the keys (StreamingLLM, Llama-3-8B)."""

import torch

# StreamingLLM-style eviction for long Llama-3-8B conversations (8 KV heads of dim 128, bf16, rope theta 500000 with
# Llama-3 frequency scaling): each sequence's paged cache (16-token pages through block_table) is compacted into a
# dense 1024-row cache that keeps the first 4 tokens (the attention sinks) and the last 1020. Keys were stored rotated
# for their original position p; in the compacted cache they sit at row j, so each key is rotated again by (j - p)
# times the per-pair frequencies (half-split rotary, as in Llama). Values move unchanged. 64 sequences of 2048 to 8192
# tokens; the page pool is 1.07 GB each for K and V.
# Eager estimate on an H200: ~0.8 ms (two gathers of 64 MB rows, float32 angles, cos/sin and the rotation).
BATCH = 64
KEEP = 1024
SINKS = 4
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
MAX_CONTEXT = 8192
NUM_PAGES = BATCH * MAX_CONTEXT // PAGE_SIZE
ROPE_THETA = 500000.0

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "rope", "memory", "paged", "elementwise"],
    "outliers": {"inputs": [0, 1]},
    "insensitive": [4],  # inv_freq is the model's fixed rotary table
}


def _llama3_inv_freq(device):
    # Llama-3.1 rope scaling: factor 8, low/high frequency factors 1 and 4, original context 8192.
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, device=device, dtype=torch.float32) / HEAD_DIM))
    wavelen = 2 * torch.pi / inv_freq
    low_wavelen, high_wavelen = 8192 / 1.0, 8192 / 4.0
    smooth = (8192 / wavelen - 1.0) / (4.0 - 1.0)
    scaled = torch.where(wavelen > low_wavelen, inv_freq / 8.0, inv_freq)
    middle = (wavelen <= low_wavelen) & (wavelen >= high_wavelen)
    return torch.where(middle, (1 - smooth) * scaled / 8.0 + smooth * scaled, scaled)


def make_inputs(device="cuda"):
    k_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    block_table = torch.randperm(NUM_PAGES, device=device).to(torch.int32).view(BATCH, MAX_CONTEXT // PAGE_SIZE)
    seq_lens = torch.randint(2 * KEEP, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [k_cache, v_cache, block_table, seq_lens, _llama3_inv_freq(device)]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(k_cache, v_cache, block_table, seq_lens, inv_freq):
    page_size = k_cache.shape[1]
    half = k_cache.shape[-1] // 2
    j = torch.arange(KEEP, device=k_cache.device).unsqueeze(0)  # [1, KEEP]
    lens = seq_lens.to(torch.long).unsqueeze(1)
    pos = torch.where(j < SINKS, j, lens - (KEEP - SINKS) + (j - SINKS))  # original positions, [B, KEEP]
    page = torch.gather(block_table.to(torch.long), 1, pos // page_size)
    slot = pos % page_size
    keys = _wide(k_cache[page, slot])  # [B, KEEP, H, D]
    values = v_cache[page, slot]
    angle = (j - pos).to(keys.dtype).unsqueeze(-1) * _wide(inv_freq)  # [B, KEEP, D/2]
    cos = torch.cos(angle).unsqueeze(2)
    sin = torch.sin(angle).unsqueeze(2)
    x1, x2 = keys[..., :half], keys[..., half:]
    rotated = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    return rotated.to(k_cache.dtype), values
