"""Quantise lightning-indexer keys to fp8 with power-of-two per-token scales into a paged cache (DeepSeek-V3.2)."""

import torch

# DeepSeek-V3.2's lightning indexer keeps one 128-dim key per token in its own paged cache (vLLM's
# indexer_k_quant_and_cache): each new bf16 key gets a UE8M0 scale, the power of two 2^ceil(log2(amax / 448)) with
# amax floored at 1e-4, is divided by it, saturated to +-448 and rounded to fp8 e4m3; the scale goes to a float32
# scale cache. Pages of 64 slots, a pool of 65536 pages (537 MB of fp8 keys); a 16384-token prefill chunk is
# written at slot_mapping, every other slot keeps its content. The outputs are the updated caches, so a solution
# copies the pool like the reference does: the copy bounds both, and the speedup over eager stays modest.
# Eager estimate on an H200: ~0.35 ms (the pool clone plus a few small passes over the chunk).
# pallas stays below eager here (0.44x [0.42, 0.45] on an H100, 2026-12-06, bench/results/suite-4dsl-h100-r3.md):
# its kernel and the pool's copy take 0.392 ms of device time, Triton's 0.373 ms (the copy bounds both), but JAX's
# per-call host work around the jitted pallas_call, its 4 DLPack imports and torch's fp8 cast of the codes take
# 1.00 ms outside the device, against eager's 0.61 ms for everything. The cheapest Pallas round trip measured in the
# suite (problem 18: 0.49 ms outside the device) plus that device time is 0.88 ms, still above eager (inferred).
# numba is below eager by less (0.85x [0.83, 0.89]): 0.41 ms on the device and 0.33 ms of launch work outside it.
NUM_TOKENS = 16384
HEAD_DIM = 128
PAGE_SIZE = 64
NUM_PAGES = 65536
FP8_MAX = 448.0
AMAX_FLOOR = 1e-4

MKB_META = {
    "category": "Quantization",
    "tags": ["quantize", "gather_scatter", "memory", "reduction"],
    "quant": {"min_cosine": 0.9999, "max_relative_l1": 0.002, "max_rmse": 1.0},
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    keys = (torch.randn(NUM_TOKENS, HEAD_DIM, device=device) * (0.2 + 4.0 * torch.rand(NUM_TOKENS, 1, device=device)))
    key_cache = (64.0 * torch.randn(NUM_PAGES, PAGE_SIZE, HEAD_DIM, device=device)).clamp(-FP8_MAX, FP8_MAX)
    scale_cache = torch.rand(NUM_PAGES, PAGE_SIZE, device=device, dtype=torch.float32)
    slot_mapping = torch.randperm(NUM_PAGES * PAGE_SIZE, device=device)[:NUM_TOKENS]
    return [keys.to(torch.bfloat16), key_cache.to(torch.float8_e4m3fn), scale_cache, slot_mapping]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(keys, key_cache, scale_cache, slot_mapping):
    pages, page_size, dim = key_cache.shape
    x = _wide(keys)
    amax = x.abs().amax(dim=-1).clamp_min(AMAX_FLOOR)
    scale = torch.exp2(torch.ceil(torch.log2(amax / FP8_MAX)))  # UE8M0: a power of two
    codes = (x / scale.unsqueeze(-1)).clamp(-FP8_MAX, FP8_MAX).to(key_cache.dtype)
    new_keys = key_cache.clone().view(pages * page_size, dim)
    new_scales = scale_cache.clone().view(pages * page_size)
    new_keys[slot_mapping] = codes
    new_scales[slot_mapping] = scale.to(scale_cache.dtype)
    return new_keys.view(key_cache.shape), new_scales.view(scale_cache.shape)
