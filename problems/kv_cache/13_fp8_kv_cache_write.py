"""Quantise new keys and values to fp8 e4m3 with per-head scales and store them in a paged fp8 KV cache."""

import torch

# vLLM's fp8_e4m3 KV cache (kv_cache_dtype="fp8") for Llama-3-8B: 8 KV heads of dim 128, pages of 16 slots, 4096
# pages. A chunked-prefill step of 4096 bf16 tokens is divided by a per-head scale (k_scale / v_scale, one float32
# per KV head), saturated to the e4m3 range of +-448, rounded to fp8 and written into its slots; every other slot
# keeps its previous fp8 content.
# numba stays below eager here (0.44x [0.44, 0.45] on an H100, 2026-12-06): numba has no fp8 type, so one launch
# writes float32 rows, torch casts them to fp8 and a second launch scatters them (0.18 ms of device time, Triton's
# 0.10 ms); its calls spend 0.41 ms outside the device, more than eager's 0.26 ms for everything. The cheapest form
# measured for numba is torch's clones of the caches and then one numba launch (problem 16's, with caches of the same
# 67 MB: 0.19 ms outside the device); with e4m3 encoded by integer ops in that launch and Triton's device time it would
# still take about 0.29 ms (inferred).
# pallas stays below eager here (0.39x [0.38, 0.40] on an H100, 2026-12-07, beside 0.15x for the form with nine DLPack
# imports): that form's kernels took 0.13 ms of device time (Triton's 0.10 ms) and this one adds a copy of the caches
# (about 0.1 ms); the rest is host work outside the device, JAX's per-call cost around the jit and its import. The
# cheapest Pallas round trip measured in the suite (problem 18: one import, one export) spends 0.49 ms outside the
# device, more than eager's 0.26 ms for everything, so no Pallas solution can reach eager here (inferred).
NUM_TOKENS = 4096
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
NUM_PAGES = 4096
FP8_MAX = 448.0

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "gather_scatter", "memory"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0, 1]},
}


def make_inputs(device="cuda"):
    fp8 = torch.float8_e4m3fn
    key_magnitude = 0.5 + 2.0 * torch.rand(KV_HEADS, device=device)
    value_magnitude = 0.5 + 2.0 * torch.rand(KV_HEADS, device=device)
    key = (torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device) * key_magnitude.view(1, -1, 1))
    value = (torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device) * value_magnitude.view(1, -1, 1))
    key_cache = (64.0 * torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device)).clamp(-FP8_MAX, FP8_MAX)
    value_cache = (64.0 * torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device)).clamp(-FP8_MAX, FP8_MAX)
    slot_mapping = torch.randperm(NUM_PAGES * PAGE_SIZE, device=device)[:NUM_TOKENS]
    key_scale = (key_magnitude * 4.0 / FP8_MAX).to(torch.float32)  # about four standard deviations reach +-448
    value_scale = (value_magnitude * 4.0 / FP8_MAX).to(torch.float32)
    return [key.to(torch.bfloat16), value.to(torch.bfloat16), key_cache.to(fp8), value_cache.to(fp8), slot_mapping,
            key_scale, value_scale]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _quantize(x, scale, cache_dtype):
    scaled = _wide(x) / _wide(scale).view(1, -1, 1)
    return scaled.clamp(-FP8_MAX, FP8_MAX).to(cache_dtype)


def reference(key, value, key_cache, value_cache, slot_mapping, key_scale, value_scale):
    pages, page_size, heads, dim = key_cache.shape
    new_keys = key_cache.clone().view(pages * page_size, heads, dim)
    new_values = value_cache.clone().view(pages * page_size, heads, dim)
    new_keys[slot_mapping] = _quantize(key, key_scale, key_cache.dtype)
    new_values[slot_mapping] = _quantize(value, value_scale, value_cache.dtype)
    return new_keys.view(key_cache.shape), new_values.view(value_cache.shape)
