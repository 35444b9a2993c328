"""Unroll sliding-window ring-buffer KV caches into position order for a decode batch (Gemma-3-27B local layers)."""

import torch

# Gemma-3-27B's local attention layers (5 of every 6) see only the last 1024 tokens, so a serving engine keeps their
# K and V in per-sequence ring buffers of 1024 slots: position p lives in slot p mod 1024. Before a kernel that wants
# the window in position order (or a cache migration), each sequence's window is unrolled: row j of the output holds
# position max(0, len - 1024) + j for j < min(len, 1024), and zeros after that. 16 KV heads of dim 128, bf16, a decode
# batch of 128 sequences with lengths from 256 to 32768 (ring buffers of 537 MB each for K and V).
# Eager estimate on an H200: ~1.2 ms (index arithmetic, two advanced-index gathers, two masked fills).
BATCH = 128
WINDOW = 1024
KV_HEADS = 16
HEAD_DIM = 128
MIN_LEN = 256
MAX_LEN = 32768

MKB_META = {
    "category": "Index",
    "tags": ["gather_scatter", "memory", "sliding_window"],
    "outliers": False,
}


def make_inputs(device="cuda"):
    k_ring = torch.randn(BATCH, WINDOW, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    v_ring = torch.randn(BATCH, WINDOW, KV_HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    seq_lens = torch.randint(MIN_LEN, MAX_LEN + 1, (BATCH,), device=device, dtype=torch.int32)
    return [k_ring, v_ring, seq_lens]


def reference(k_ring, v_ring, seq_lens):
    batch, window = k_ring.shape[:2]
    lens = seq_lens.to(torch.long).unsqueeze(1)  # [B, 1]
    j = torch.arange(window, device=k_ring.device).unsqueeze(0)  # [1, W]
    count = torch.clamp(lens, max=window)
    slot = (lens - count + j) % window  # [B, W]
    valid = (j < count).view(batch, window, 1, 1)
    rows = torch.arange(batch, device=k_ring.device).unsqueeze(1)
    keys = torch.where(valid, k_ring[rows, slot], torch.zeros((), dtype=k_ring.dtype, device=k_ring.device))
    values = torch.where(valid, v_ring[rows, slot], torch.zeros((), dtype=v_ring.dtype, device=v_ring.device))
    return keys, values
