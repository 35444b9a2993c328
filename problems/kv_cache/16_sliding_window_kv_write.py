"""Write prefill chunks into a sliding-window ring-buffer KV cache, token-major in, head-major cache (Mistral-7B)."""

import torch

# Mistral-7B (8 KV heads of dim 128, sliding window 4096) with a head-major ring-buffer cache per sequence, as in
# Hugging Face's SlidingWindowCache: a batch of 8 sequences each appends a 512-token prefill chunk; token i of
# sequence b lands in ring slot (start_positions[b] + i) % 4096. The projections arrive token-major [B, T, H, D];
# the cache is [B, H, window, D]. Slots not written keep their previous content.
# pallas stays below eager here (0.56x [0.54, 0.57] on an H100, 2026-12-07, beside 0.31x for the form with five DLPack
# imports): that form's kernel took 0.10 ms of device time and this one adds a copy of the caches (about 0.1 ms); the
# rest is host work outside the device, JAX's per-call cost around the jit and its one DLPack import. The cheapest
# Pallas round trip measured in the suite (problem 18: one import, one export) spends 0.49 ms outside the device, more
# than eager's 0.27-0.44 ms for everything, so no Pallas solution can reach eager here (inferred).
BATCH = 8
CHUNK = 512
KV_HEADS = 8
HEAD_DIM = 128
WINDOW = 4096
MAX_START = 100000

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory", "transpose"],
    "outliers": {"inputs": [0, 1, 2, 3]},
}


def make_inputs(device="cuda"):
    key = torch.randn(BATCH, CHUNK, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    value = torch.randn(BATCH, CHUNK, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    key_cache = torch.randn(BATCH, KV_HEADS, WINDOW, HEAD_DIM, device=device, dtype=torch.bfloat16)
    value_cache = torch.randn(BATCH, KV_HEADS, WINDOW, HEAD_DIM, device=device, dtype=torch.bfloat16)
    start_positions = torch.randint(0, MAX_START, (BATCH,), device=device)
    return [key, value, key_cache, value_cache, start_positions]


def reference(key, value, key_cache, value_cache, start_positions):
    batch, chunk, heads, _ = key.shape
    window = key_cache.shape[2]
    device = key.device
    ring_slot = (start_positions.view(-1, 1) + torch.arange(chunk, device=device).view(1, -1)) % window  # [B, T]
    batch_index = torch.arange(batch, device=device).view(-1, 1, 1)
    head_index = torch.arange(heads, device=device).view(1, 1, -1)
    slot_index = ring_slot.unsqueeze(-1)
    new_keys = key_cache.clone()
    new_values = value_cache.clone()
    new_keys[batch_index, head_index, slot_index] = key  # indexed shape [B, T, H, D]
    new_values[batch_index, head_index, slot_index] = value
    return new_keys, new_values
