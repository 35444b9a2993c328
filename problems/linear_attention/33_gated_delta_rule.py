"""Gated delta rule prefill (Qwen3-Next linear attention: 16 key heads, 32 value heads, head dims 128)."""

import torch
import torch.nn.functional as F

# Gated DeltaNet layer of Qwen3-Next-80B-A3B (linear_num_key_heads 16, linear_num_value_heads 32, head_k_dim 128,
# head_v_dim 128): q and k are L2-normalised in the kernel, each key head serves two value heads, the per-head decay is
# g_t = -exp(A_log) * softplus(a_t + dt_bias) and the write strength beta_t = sigmoid(b_t). Per value head the
# [key, value] state follows S_t = exp(g_t) S_{t-1} + k_t^T (beta_t (v_t - k_t exp(g_t) S_{t-1})), o_t = q_t S_t / sqrt(128).
# A batch of 4 sequences of 1024 tokens from an empty state; outputs are o and the final state (kept in bf16 like the
# serving cache).
BATCH = 4
SEQ_LEN = 1024
KEY_HEADS = 16
VALUE_HEADS = 32
KEY_DIM = 128
VALUE_DIM = 128
NORM_EPS = 1e-6

MKB_META = {
    "category": "Fusion",
    "tags": ["scan", "linear_attention", "reduction"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, SEQ_LEN, KEY_HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(BATCH, SEQ_LEN, KEY_HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(BATCH, SEQ_LEN, VALUE_HEADS, VALUE_DIM, device=device, dtype=torch.bfloat16)
    a = torch.randn(BATCH, SEQ_LEN, VALUE_HEADS, device=device, dtype=torch.bfloat16)  # decay logits
    b = torch.randn(BATCH, SEQ_LEN, VALUE_HEADS, device=device, dtype=torch.bfloat16)  # write-strength logits
    a_log = torch.log(1.0 + 15.0 * torch.rand(VALUE_HEADS, device=device, dtype=torch.float32))  # A in [1, 16)
    dt = 0.001 * torch.pow(100.0, torch.rand(VALUE_HEADS, device=device, dtype=torch.float32))  # dt in [0.001, 0.1)
    dt_bias = (dt + torch.log(-torch.expm1(-dt))).to(torch.float32)  # inverse softplus of dt
    return [q, k, v, a, b, a_log, dt_bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _l2norm(x):
    return x / torch.sqrt((x * x).sum(dim=-1, keepdim=True) + NORM_EPS)


def reference(q, k, v, a, b, a_log, dt_bias):
    batch, seq_len, key_heads, key_dim = q.shape
    value_heads = v.shape[2]
    group = value_heads // key_heads
    q = (_l2norm(_wide(q)) * key_dim**-0.5).repeat_interleave(group, dim=2)  # [B, T, Hv, K]
    k = _l2norm(_wide(k)).repeat_interleave(group, dim=2)
    v_wide = _wide(v)
    decay = torch.exp(-torch.exp(_wide(a_log)) * F.softplus(_wide(a) + _wide(dt_bias)))  # [B, T, Hv]
    beta = torch.sigmoid(_wide(b))
    state = torch.zeros(batch, value_heads, key_dim, v.shape[-1], device=q.device, dtype=q.dtype)
    outputs = []
    for t in range(seq_len):
        state = state * decay[:, t, :, None, None]
        k_t = k[:, t].unsqueeze(-1)  # [B, Hv, K, 1]
        recalled = (state * k_t).sum(dim=-2)  # k_t S: [B, Hv, V]
        delta = (v_wide[:, t] - recalled) * beta[:, t, :, None]
        state = state + k_t * delta.unsqueeze(-2)
        outputs.append((state * q[:, t].unsqueeze(-1)).sum(dim=-2))
    return torch.stack(outputs, dim=1).to(v.dtype), state.to(v.dtype)
