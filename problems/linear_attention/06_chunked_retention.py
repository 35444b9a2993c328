"""Chunked causal linear attention with per-head exponential decay (RetNet-style retention, 16 heads of dim 128)."""

import torch

# Retention as in RetNet / decayed linear attention: o_t = sum_{s <= t} gamma_h^(t - s) (q_t . k_s) v_s, computed
# chunk by chunk (64 tokens per chunk) with a carried [dim, dim] state per head, the way it runs in training.
# Configuration of a 1.3B-parameter model: one 4096-token sequence, 16 heads, head dim 128; gamma_h = 1 - 2^(-5 - h/2).
BATCH = 1
HEADS = 16
SEQ_LEN = 4096
HEAD_DIM = 128
CHUNK = 64

MKB_META = {
    "category": "Fusion",
    "tags": ["scan", "gemm_epilogue", "linear_attention"],
    "outliers": {"inputs": [0, 1, 2]},
    # decay is the model's fixed per-head schedule gamma_h, not data: every seed gives the same values.
    "insensitive": [3],
}


def make_inputs(device="cuda"):
    shape = (BATCH, HEADS, SEQ_LEN, HEAD_DIM)
    q = torch.randn(shape, device=device, dtype=torch.float16)
    k = torch.randn(shape, device=device, dtype=torch.float16)
    v = torch.randn(shape, device=device, dtype=torch.float16)
    decay = 1.0 - torch.pow(2.0, -5.0 - torch.arange(HEADS, device=device, dtype=torch.float32) / 2)
    return [q, k, v, decay]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(q, k, v, decay):
    batch, heads, seq_len, dim = q.shape
    out_dtype = q.dtype
    q = _wide(q) * dim**-0.5
    k = _wide(k)
    v = _wide(v)
    log_decay = torch.log(_wide(decay)).view(1, heads, 1, 1)
    index = torch.arange(CHUNK, device=q.device, dtype=q.dtype)
    distance = index.view(-1, 1) - index.view(1, -1)  # i - j
    intra_decay = torch.exp(log_decay * distance.clamp(min=0)) * (distance >= 0)  # [1, H, C, C]
    query_decay = torch.exp(log_decay * (index + 1).view(-1, 1))  # gamma^(i+1): [1, H, C, 1]
    key_decay = torch.exp(log_decay * (CHUNK - 1 - index).view(-1, 1))  # gamma^(C-1-j): [1, H, C, 1]
    chunk_decay = torch.exp(log_decay * CHUNK)  # gamma^C: [1, H, 1, 1]
    state = torch.zeros(batch, heads, dim, dim, device=q.device, dtype=q.dtype)
    outputs = []
    for start in range(0, seq_len, CHUNK):
        qc = q[:, :, start : start + CHUNK]
        kc = k[:, :, start : start + CHUNK]
        vc = v[:, :, start : start + CHUNK]
        scores = torch.matmul(qc, kc.transpose(-1, -2)) * intra_decay
        inner = torch.matmul(scores, vc)
        carried = torch.matmul(qc * query_decay, state)
        outputs.append(inner + carried)
        state = state * chunk_decay + torch.matmul((kc * key_decay).transpose(-1, -2), vc)
    return torch.cat(outputs, dim=2).to(out_dtype)
