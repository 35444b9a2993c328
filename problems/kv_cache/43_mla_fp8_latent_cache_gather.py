"""Gather and dequantise a batch's context from a paged fp8 MLA latent cache into packed bf16 rows (DeepSeek-V3)."""

import torch

# DeepSeek-V3 / V3.2 chunked prefill over cached context with an fp8 MLA cache (FlashMLA's fp8 layout): per token,
# the 512 latent dims are fp8 e4m3 with one float32 scale per 128-dim tile, and the 64 decoupled-rope dims stay in
# bf16. Pages hold 64 tokens; the pool has 65536 pages (2.1 GB of fp8 latents, 0.5 GB of rope dims, 2.7 GB in all).
# For 32 sequences of up to 16384 cached tokens, the context is gathered through block_table (page i of sequence b
# holds its tokens [64 i, 64 i + 64)) into rows cu_seq_lens[b] ... cu_seq_lens[b + 1] - 1 (its length is the
# difference) of a packed
# [total tokens, 576] bf16 buffer: latent * scale of its tile, then the rope dims.
# Eager estimate on an H200: ~2 ms (index gathers of ~300 MB, fp8 widening, the scale broadcast, a concat).
BATCH = 32
MAX_CONTEXT = 16384
PAGE_SIZE = 64
NUM_PAGES = 65536
LATENT_DIM = 512
ROPE_DIM = 64
TILE = 128
FP8_MAX = 448.0

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory", "dequantize", "paged", "mla", "large_inputs"],
    "outliers": {"inputs": [2]},
}


def make_inputs(device="cuda"):
    pages_per_seq = MAX_CONTEXT // PAGE_SIZE
    latent = (64.0 * torch.randn(NUM_PAGES, PAGE_SIZE, LATENT_DIM, device=device)).clamp(-FP8_MAX, FP8_MAX)
    scales = 0.001 + 0.01 * torch.rand(NUM_PAGES, PAGE_SIZE, LATENT_DIM // TILE, device=device, dtype=torch.float32)
    rope = torch.randn(NUM_PAGES, PAGE_SIZE, ROPE_DIM, device=device, dtype=torch.bfloat16)
    block_table = torch.randperm(NUM_PAGES, device=device)[: BATCH * pages_per_seq].to(torch.int32)
    block_table = block_table.view(BATCH, pages_per_seq)
    seq_lens = torch.randint(MAX_CONTEXT // 4, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    cu_seq_lens = torch.zeros(BATCH + 1, device=device, dtype=torch.int32)
    cu_seq_lens[1:] = torch.cumsum(seq_lens, 0).to(torch.int32)
    return [latent.to(torch.float8_e4m3fn), scales, rope, block_table, cu_seq_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(latent, scales, rope, block_table, cu_seq_lens):
    num_pages, page_size, latent_dim = latent.shape
    lens = cu_seq_lens.to(torch.long).diff()
    seq = torch.repeat_interleave(torch.arange(lens.numel(), device=lens.device), lens)  # sequence of each row
    pos = torch.arange(seq.numel(), device=lens.device) - cu_seq_lens.to(torch.long)[seq]
    slot = block_table.to(torch.long)[seq, pos // page_size] * page_size + pos % page_size
    codes = latent.view(torch.uint8).reshape(num_pages * page_size, latent_dim)[slot]  # gather the raw fp8 bytes
    values = _wide(codes.view(latent.dtype))
    tile_scales = _wide(scales).reshape(num_pages * page_size, -1)[slot]
    values = values * tile_scales.repeat_interleave(latent_dim // tile_scales.shape[1], dim=1)
    rows = torch.cat([values, _wide(rope).reshape(num_pages * page_size, -1)[slot]], dim=1)
    return rows.to(rope.dtype)
