"""MoE permute into DeepGEMM's contiguous layout: expert segments padded to 128 rows, with per-row expert ids (DeepSeek-V3)."""

import torch

# DeepGEMM's m-grouped contiguous GEMM wants every expert's rows in one segment whose length is a multiple of
# 128. DeepSeek-V3 (hidden 7168, 256 experts, 8 per token) on a 4096-token prefill chunk, bf16:
#   - segment e holds the (t, k) slots with topk_ids[t, k] == e in ascending t * 8 + k order, and starts at
#     start[e] = sum over e' < e of ceil(count[e'] / 128) * 128;
#   - permuted[start[e] + i] = x[t] for the i-th slot of expert e; every other row of permuted is zero;
#   - m_indices[row] = e for the rows holding a slot of expert e, -1 for padding rows;
#   - row_of[t, k] = the row slot (t, k) went to (the combine reads it).
# The outputs have the worst-case size T*8 + 256 * 127 = 65280 rows (935 MB): rows past the last segment are
# padding too. Eager PyTorch (stable sort, counts, prefix sums, zero fill, scatter) makes about fifteen launches
# and moves some 1.9 GB: an estimated 0.8-1.2 ms on an H200.
NUM_TOKENS = 4096
HIDDEN = 7168
NUM_EXPERTS = 256
TOP_K = 8
ALIGN = 128

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "scan", "routing", "memory"],
}


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    scores = torch.randn(NUM_TOKENS, NUM_EXPERTS, device=device) + torch.randn(NUM_EXPERTS, device=device)
    topk_ids = scores.topk(TOP_K, dim=-1).indices.to(torch.int32)
    return [x, topk_ids]


def reference(x, topk_ids):
    tokens, top_k = topk_ids.shape
    slots = tokens * top_k
    capacity = slots + NUM_EXPERTS * (ALIGN - 1)
    flat = topk_ids.reshape(-1).to(torch.long)
    counts = torch.bincount(flat, minlength=NUM_EXPERTS)
    padded = (counts + ALIGN - 1) // ALIGN * ALIGN
    starts = torch.cumsum(padded, dim=0) - padded
    order = torch.sort(flat, stable=True).indices  # slots grouped by expert, ascending slot within an expert
    first_of_expert = torch.cumsum(counts, dim=0) - counts
    rank = torch.arange(slots, device=x.device) - first_of_expert[flat[order]]
    rows = starts[flat[order]] + rank
    row_of = torch.empty(slots, dtype=torch.long, device=x.device)
    row_of[order] = rows
    permuted = torch.zeros(capacity, x.shape[1], dtype=x.dtype, device=x.device)
    permuted[row_of] = x.repeat_interleave(top_k, dim=0)
    m_indices = torch.full((capacity,), -1, dtype=torch.int32, device=x.device)
    m_indices[row_of] = flat.to(torch.int32)
    return permuted, m_indices, row_of.view(tokens, top_k).to(torch.int32)
