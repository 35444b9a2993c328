"""Gated linear attention (GLA) with per-channel data-dependent decay, 16 heads of key/value dim 128."""

import torch
import torch.nn.functional as F

# Gated linear attention (Yang et al. 2024) as flash-linear-attention runs it: a per-key-channel forget gate
# alpha_t = exp(logsigmoid(gk_t) / 16) decays the [key, value] state of each head, S_t = diag(alpha_t) S_{t-1} +
# k_t^T v_t, and o_t = (q_t / sqrt(d_k)) S_t. Configuration: a GLA layer of hidden size 2048 with 16 heads of key and
# value dim 128 (num_heads=16, expand_k=expand_v=1), a batch of 4 sequences of 1024 tokens (prefill from an empty
# state). The reference is the step-by-step recurrence; a fast kernel computes it chunk by chunk.
BATCH = 4
SEQ_LEN = 1024
HEADS = 16
KEY_DIM = 128
VALUE_DIM = 128
GATE_NORMALIZER = 16.0

MKB_META = {
    "category": "Fusion",
    "tags": ["scan", "linear_attention", "gemm_epilogue"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, SEQ_LEN, HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(BATCH, SEQ_LEN, HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(BATCH, SEQ_LEN, HEADS, VALUE_DIM, device=device, dtype=torch.bfloat16)
    gk = torch.randn(BATCH, SEQ_LEN, HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)  # gate logits
    return [q, k, v, gk]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, k, v, gk):
    batch, seq_len, heads, key_dim = q.shape
    q = _wide(q) * key_dim**-0.5
    k = _wide(k)
    v_wide = _wide(v)
    alpha = torch.exp(F.logsigmoid(_wide(gk)) / GATE_NORMALIZER)  # per-channel forget gate in (0, 1)
    state = torch.zeros(batch, heads, key_dim, v.shape[-1], device=q.device, dtype=q.dtype)
    outputs = []
    for t in range(seq_len):
        state = state * alpha[:, t].unsqueeze(-1) + k[:, t].unsqueeze(-1) * v_wide[:, t].unsqueeze(-2)
        outputs.append(torch.matmul(q[:, t].unsqueeze(-2), state).squeeze(-2))  # [B, H, V]
    return torch.stack(outputs, dim=1).to(v.dtype)
