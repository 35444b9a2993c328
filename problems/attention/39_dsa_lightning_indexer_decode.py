"""Lightning-indexer logits for a decode batch over a paged fp8 key cache (DeepSeek-V3.2 sparse attention)."""

import torch

# DeepSeek-V3.2's lightning indexer scores every cached token for each new query token so that sparse attention can
# keep the top 2048: I[b, s] = sum_h w[b, h] * relu(q[b, h] . k[s]), over 64 indexer heads of dim 128, where the
# per-head weights w already hold the softmax scale. Keys live in the indexer's own paged cache (64-token pages) as
# fp8 e4m3 with one float32 scale per token (the layout 44_dsa_indexer_key_fp8_write produces). A decode batch of
# 64 sequences with up to 32768 cached tokens each; positions at or past seq_lens[b] get -inf. The top-k selection
# itself is left out: near-ties at the k-th score would make exact indices depend on summation order.
# Eager estimate on an H200: ~3 ms (a 1 GB float32 gather of the keys, a batched GEMM, ReLU, weighting, the sum).
BATCH = 64
HEADS = 64
HEAD_DIM = 128
PAGE_SIZE = 64
MAX_CONTEXT = 32768
PAGES_PER_SEQ = MAX_CONTEXT // PAGE_SIZE
NUM_PAGES = BATCH * PAGES_PER_SEQ
FP8_MAX = 448.0

MKB_META = {
    "category": "MatrixMultiply",
    "tags": ["attention", "gemm_epilogue", "reduction", "decode", "paged", "sparse_attention"],
    "outliers": {"inputs": [0]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    weights = (torch.rand(BATCH, HEADS, device=device, dtype=torch.float32) - 0.3) * HEAD_DIM**-0.5
    codes = (64.0 * torch.randn(NUM_PAGES, PAGE_SIZE, HEAD_DIM, device=device)).clamp(-FP8_MAX, FP8_MAX)
    scales = 0.005 + 0.02 * torch.rand(NUM_PAGES, PAGE_SIZE, device=device, dtype=torch.float32)
    block_table = torch.randperm(NUM_PAGES, device=device).to(torch.int32).view(BATCH, PAGES_PER_SEQ)
    seq_lens = torch.randint(1024, MAX_CONTEXT + 1, (BATCH,), device=device, dtype=torch.int32)
    return [q, weights, codes.to(torch.float8_e4m3fn), scales, block_table, seq_lens]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, weights, k_cache, k_scales, block_table, seq_lens):
    batch = q.shape[0]
    num_pages, page_size, dim = k_cache.shape
    pages = block_table.to(torch.long)
    context = pages.shape[1] * page_size
    scale = _wide(k_scales)[pages].reshape(batch, context)
    keys = _wide(k_cache.view(torch.uint8)[pages].view(k_cache.dtype)).reshape(batch, context, dim)
    scores = torch.matmul(_wide(q), keys.transpose(1, 2).to(scale.dtype)) * scale.unsqueeze(1)  # [B, H, S]
    logits = (torch.relu(scores) * _wide(weights).unsqueeze(-1)).sum(dim=1)  # [B, S]
    positions = torch.arange(context, device=q.device).unsqueeze(0)
    return logits.masked_fill(positions >= seq_lens.to(torch.long).unsqueeze(1), float("-inf"))
