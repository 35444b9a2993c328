"""Gated delta rule decode step over a batch of bf16 recurrent states (Qwen3-Next linear attention layer)."""

import torch
import torch.nn.functional as F

# One decode token per sequence for 128 sequences in a Gated DeltaNet layer of Qwen3-Next-80B-A3B (16 key heads,
# 32 value heads, head dims 128): q and k are L2-normalised, each key head serves two value heads, the per-head decay
# is exp(-exp(A_log) softplus(a + dt_bias)) and beta = sigmoid(b). Each sequence's [32, 128, 128] state lives in the
# serving cache in bf16; the step returns the attention output and the updated state.
BATCH = 128
KEY_HEADS = 16
VALUE_HEADS = 32
KEY_DIM = 128
VALUE_DIM = 128
NORM_EPS = 1e-6

MKB_META = {
    "category": "LinearAlgebra",
    "tags": ["scan", "linear_attention", "decode", "reduction"],
    "outliers": {"inputs": [0, 1, 2]},
}


def make_inputs(device="cuda"):
    q = torch.randn(BATCH, KEY_HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    k = torch.randn(BATCH, KEY_HEADS, KEY_DIM, device=device, dtype=torch.bfloat16)
    v = torch.randn(BATCH, VALUE_HEADS, VALUE_DIM, device=device, dtype=torch.bfloat16)
    a = torch.randn(BATCH, VALUE_HEADS, device=device, dtype=torch.bfloat16)
    b = torch.randn(BATCH, VALUE_HEADS, device=device, dtype=torch.bfloat16)
    a_log = torch.log(1.0 + 15.0 * torch.rand(VALUE_HEADS, device=device, dtype=torch.float32))  # A in [1, 16)
    dt = 0.001 * torch.pow(100.0, torch.rand(VALUE_HEADS, device=device, dtype=torch.float32))  # dt in [0.001, 0.1)
    dt_bias = dt + torch.log(-torch.expm1(-dt))  # inverse softplus of dt
    state = (torch.randn(BATCH, VALUE_HEADS, KEY_DIM, VALUE_DIM, device=device) * 0.5).to(torch.bfloat16)
    return [q, k, v, a, b, a_log, dt_bias, state]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def _l2norm(x):
    return x / torch.sqrt((x * x).sum(dim=-1, keepdim=True) + NORM_EPS)


def reference(q, k, v, a, b, a_log, dt_bias, state):
    key_dim = q.shape[-1]
    group = v.shape[1] // q.shape[1]
    q = (_l2norm(_wide(q)) * key_dim**-0.5).repeat_interleave(group, dim=1).unsqueeze(-1)  # [B, Hv, K, 1]
    k = _l2norm(_wide(k)).repeat_interleave(group, dim=1).unsqueeze(-1)
    decay = torch.exp(-torch.exp(_wide(a_log)) * F.softplus(_wide(a) + _wide(dt_bias)))  # [B, Hv]
    beta = torch.sigmoid(_wide(b))
    new_state = _wide(state) * decay[:, :, None, None]
    recalled = (new_state * k).sum(dim=-2)  # [B, Hv, V]
    delta = (_wide(v) - recalled) * beta[:, :, None]
    new_state = new_state + k * delta.unsqueeze(-2)
    out = (new_state * q).sum(dim=-2)
    return out.to(v.dtype), new_state.to(state.dtype)
