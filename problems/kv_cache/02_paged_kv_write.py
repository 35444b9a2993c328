"""Write new keys and values into a paged KV cache with 16-token pages (Llama-3-8B, chunked prefill of 4096 tokens)."""

import torch

# vLLM-style paged cache for Llama-3-8B: 8 KV heads of dim 128, pages of 16 token slots, 4096 pages in the pool
# (65536 slots). A chunked-prefill step brings 4096 new tokens whose slots are scattered across the pool; every
# other slot keeps its previous content. The outputs are the updated caches, so a solution copies both pools as the
# reference's clone does, and that copy (268 MB each way) bounds both: torch's clone of a contiguous tensor is one
# device-to-device memcpy at the copy's full bandwidth, so a solution's copy kernel cannot beat eager here; the
# shipped ones run at 0.82-0.89x of eager on an H200 with their copies at 0.91-0.93 of the measured peak bandwidth.
# cuda is just below eager here (0.98x [0.96, 0.99] on an H100, 2026-12-07, bench/results/suite-4dsl-h100-r3.md;
# Triton 1.01x): the copy bounds both, and its copy runs at 0.97 of the measured bandwidth.
# numba stays below eager here (0.41x [0.39, 0.46] on an H100, 2026-12-06): its copies and scatter take 0.205 ms of
# device time (Triton's 0.192 ms), and its three numba launches add 0.49 ms outside the device. A numba launch is slow
# to leave the host: the one-launch numba solutions of problems 31 and 04 spend 0.24 and 0.34 ms outside the device
# (Triton's 0.09 and 0.14 ms), and even torch's clones followed by one numba launch (problem 16's form, 0.19 ms outside
# the device) would take about 0.38 ms here, against eager's 0.29 ms (inferred).
# bench/results/suite-4dsl-h100-r3.md (grader 10bf8b0753e6, another H100): numba 0.66x [0.64, 0.68], 0.20 ms on the
# device and 0.20 ms outside it, against eager's 0.27 ms.
# pallas stays below eager here (0.23x [0.23, 0.24] on an H100, 2026-12-06, bench/results/suite-4dsl-h100-r3.md): its
# kernel takes Triton's device time (0.191 against 0.192 ms), and 1.05 ms goes outside the device: JAX's per-call cost
# around the jitted pallas_call and its DLPack imports. A form with three imports instead of five and no int32 cast
# measured the same (0.30x against 0.30x in one run), so the imports are not the cost; the cheapest Pallas round trip
# measured in the suite (problem 18) spends 0.49 ms outside the device, above eager's 0.26-0.29 ms for everything.
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
