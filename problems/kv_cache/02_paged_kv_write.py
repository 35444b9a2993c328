"""Write new keys and values into a paged KV cache with 16-token pages (Llama-3-8B, chunked prefill of 4096 tokens)."""

import torch

# vLLM-style paged cache for Llama-3-8B: 8 KV heads of dim 128, pages of 16 token slots, 4096 pages in the pool
# (65536 slots). A chunked-prefill step brings 4096 new tokens whose slots are scattered across the pool; every
# other slot keeps its previous content. The outputs are the updated caches, so a solution copies both pools as the
# reference's clone does, and that copy (268 MB each way) bounds both: torch's clone of a contiguous tensor is one
# device-to-device memcpy at the copy's full bandwidth, so a solution's copy kernel cannot beat eager here; the
# shipped ones run at 0.82-0.89x of eager on an H200 with their copies at 0.91-0.93 of the measured peak bandwidth.
NUM_TOKENS = 4096
KV_HEADS = 8
HEAD_DIM = 128
PAGE_SIZE = 16
NUM_PAGES = 4096

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory"],
    "outliers": {"inputs": [0, 1, 2, 3]},
}


def make_inputs(device="cuda"):
    key = torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    value = torch.randn(NUM_TOKENS, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    key_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    value_cache = torch.randn(NUM_PAGES, PAGE_SIZE, KV_HEADS, HEAD_DIM, device=device, dtype=torch.float16)
    slot_mapping = torch.randperm(NUM_PAGES * PAGE_SIZE, device=device)[:NUM_TOKENS]
    return [key, value, key_cache, value_cache, slot_mapping]


def reference(key, value, key_cache, value_cache, slot_mapping):
    pages, page_size, heads, dim = key_cache.shape
    new_keys = key_cache.clone().view(pages * page_size, heads, dim)
    new_values = value_cache.clone().view(pages * page_size, heads, dim)
    new_keys[slot_mapping] = key
    new_values[slot_mapping] = value
    return new_keys.view(pages, page_size, heads, dim), new_values.view(pages, page_size, heads, dim)
