"""DeepSeek-V3 MLA latent cache write: RMSNorm of the compressed KV, rotary on the decoupled key, paged store."""

import torch

# DeepSeek-V3 multi-head latent attention during chunked prefill, as vLLM stores it: the kv_a projection gives each
# token a 512-wide compressed KV (kv_lora_rank 512) and a 64-wide decoupled rotary key. The compressed part goes
# through kv_a_layernorm (RMSNorm, eps 1e-6), the rotary key gets interleaved (GPT-J style) rotary from a float32
# cos|sin cache (YaRN-scaled frequencies baked in), and both are stored side by side as one 576-wide entry in a
# paged cache of 1024 pages of 64 slots (FlashMLA's page size). 4096 new tokens; other slots keep their content.
# pallas stays below eager here (0.75x [0.73, 0.77] on an H100, 2026-12-06): an earlier Pallas form took 0.064 ms of
# device time (Triton's 0.054 ms) and this one adds a copy of the cache (about 0.05 ms); the rest is host work outside
# the device, JAX's per-call cost around the jitted pallas_call and its DLPack import. The solution already brings everything across in one import
# (six imports measured 0.40x); the cheapest Pallas round trip measured in the suite (problem 18: one import, one
# export) spends 0.49 ms outside the device, against eager's 0.42-0.64 ms for everything (inferred: no Pallas
# solution can reach eager here).
NUM_TOKENS = 4096
KV_LORA_RANK = 512
ROPE_DIM = 64
PAGE_SIZE = 64
NUM_PAGES = 1024
MAX_POSITION = 16384
EPS = 1e-6

MKB_META = {
    "category": "Fusion",
    "tags": ["reduction", "normalization", "rope", "gather_scatter", "mla"],
    "outliers": {"inputs": [0, 4]},
    # cos_sin_cache is the model's fixed RoPE table (rope_theta, positions), not data: every seed gives the same
    # values.
    "insensitive": [3],
}


def make_inputs(device="cuda"):
    kv_latent = torch.randn(NUM_TOKENS, KV_LORA_RANK + ROPE_DIM, device=device, dtype=torch.bfloat16)
    norm_weight = (1.0 + 0.1 * torch.randn(KV_LORA_RANK, device=device)).to(torch.bfloat16)
    positions = torch.randint(0, MAX_POSITION, (NUM_TOKENS,), device=device)
    exponents = torch.arange(0, ROPE_DIM, 2, device=device, dtype=torch.float64) / ROPE_DIM
    angles = torch.arange(MAX_POSITION, device=device, dtype=torch.float64).unsqueeze(1) / 10000.0**exponents
    cos_sin_cache = torch.cat([angles.cos(), angles.sin()], dim=-1).to(torch.float32)  # [MAX_POSITION, ROPE_DIM]
    kv_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_LORA_RANK + ROPE_DIM, device=device, dtype=torch.bfloat16)
    slot_mapping = torch.randperm(NUM_PAGES * PAGE_SIZE, device=device)[:NUM_TOKENS]
    return [kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(kv_latent, norm_weight, positions, cos_sin_cache, kv_cache, slot_mapping):
    latent = _wide(kv_latent)
    compressed, rotary = latent[:, :KV_LORA_RANK], latent[:, KV_LORA_RANK:]
    inverse_rms = torch.rsqrt(compressed.pow(2).mean(dim=-1, keepdim=True) + EPS)
    normed = compressed * inverse_rms * _wide(norm_weight)
    half = cos_sin_cache.shape[-1] // 2
    cos_sin = _wide(cos_sin_cache)[positions]
    cos, sin = cos_sin[:, :half], cos_sin[:, half:]
    even, odd = rotary[:, 0::2], rotary[:, 1::2]
    rotated = torch.stack([even * cos - odd * sin, odd * cos + even * sin], dim=-1).flatten(-2)
    entry = torch.cat([normed, rotated], dim=-1).to(kv_latent.dtype)
    pages, page_size, width = kv_cache.shape
    new_cache = kv_cache.clone().view(pages * page_size, width)
    new_cache[slot_mapping] = entry
    return new_cache.view(kv_cache.shape)
