"""Chained per-page hashes of prompt tokens for automatic prefix caching (vLLM-style, 16-token pages, Qwen3 vocab)."""

import torch

# Automatic prefix caching (vLLM, SGLang's radix cache) names each full KV page by a hash of its tokens chained with
# the hash of the page before it, so equal prefixes map to equal pages. Here the hash is 32-bit FNV-1a over token ids
# (one 32-bit word per token): h = ((h xor token) * 16777619) mod 2^32, starting from 2166136261 for the first page of
# a sequence and carried from page to page; the hash of page p is h after its 16th token. A batch of 256 prompts of
# 4096 tokens (Qwen3 vocabulary of 151936 ids) gives 256 pages each; hashes are returned as int64 in [0, 2^32).
# Eager estimate on an H200: ~40-60 ms (a Python loop over 4096 token positions, three small kernels each).
BATCH = 256
SEQ_LEN = 4096
PAGE_SIZE = 16
VOCAB = 151936
FNV_OFFSET = 2166136261
FNV_PRIME = 16777619

MKB_META = {
    "category": "Math",
    "tags": ["scan", "hash", "prefix_cache"],
    "outliers": False,
}


def make_inputs(device="cuda"):
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ_LEN), device=device, dtype=torch.int32)
    tokens[1::2, : SEQ_LEN // 2] = tokens[0::2, : SEQ_LEN // 2]  # pairs of prompts share a half-length prefix
    return [tokens]


def reference(tokens):
    batch, seq_len = tokens.shape
    wide = tokens.to(torch.int64)
    h = torch.full((batch,), FNV_OFFSET, device=tokens.device, dtype=torch.int64)
    hashes = []
    for t in range(seq_len):
        h = ((h ^ wide[:, t]) * FNV_PRIME) & 0xFFFFFFFF
        if t % PAGE_SIZE == PAGE_SIZE - 1:
            hashes.append(h)
    return torch.stack(hashes, dim=1)
