"""Mamba-1 selective scan with softplus step, D skip and SiLU(z) gate (mamba-1.4b: d_inner 4096, d_state 16)."""

import torch
import torch.nn.functional as F

# The selective_scan of a Mamba-1 block in mamba-1.4b (d_model 2048, d_inner 4096, d_state 16) on a batch of 2
# sequences of 1024 tokens: delta = softplus(delta + delta_bias); per channel d and state n,
# h_t = exp(delta_t A[d, n]) h_{t-1} + delta_t B_t[n] u_t and y_t = sum_n C_t[n] h_t + D[d] u_t, gated by SiLU(z_t).
# Activations are token-major ([batch, tokens, channels]) as the projections produce them.
BATCH = 2
SEQ_LEN = 1024
D_INNER = 4096
D_STATE = 16

MKB_META = {
    "category": "Math",
    "tags": ["scan", "elementwise"],
    "outliers": {"inputs": [0, 3, 4, 6]},
}


def make_inputs(device="cuda"):
    u = torch.randn(BATCH, SEQ_LEN, D_INNER, device=device, dtype=torch.bfloat16)
    delta = (torch.randn(BATCH, SEQ_LEN, D_INNER, device=device) * 0.5).to(torch.bfloat16)  # dt_proj output
    a = -torch.arange(1, D_STATE + 1, device=device, dtype=torch.float32).repeat(D_INNER, 1)  # -exp(A_log), S4D-real
    a = a * (0.5 + torch.rand(D_INNER, D_STATE, device=device))
    b = torch.randn(BATCH, SEQ_LEN, D_STATE, device=device, dtype=torch.bfloat16)
    c = torch.randn(BATCH, SEQ_LEN, D_STATE, device=device, dtype=torch.bfloat16)
    d = torch.rand(D_INNER, device=device, dtype=torch.float32) + 0.5
    z = torch.randn(BATCH, SEQ_LEN, D_INNER, device=device, dtype=torch.bfloat16)
    dt = 0.001 * torch.pow(100.0, torch.rand(D_INNER, device=device, dtype=torch.float32))  # dt in [0.001, 0.1)
    delta_bias = dt + torch.log(-torch.expm1(-dt))  # inverse softplus of dt
    return [u, delta, a, b, c, d, z, delta_bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(u, delta, a, b, c, d, z, delta_bias):
    batch, seq_len, channels = u.shape
    u_wide = _wide(u)
    step = F.softplus(_wide(delta) + _wide(delta_bias))  # [B, L, D]
    a = _wide(a)
    b = _wide(b)
    c = _wide(c)
    state = torch.zeros(batch, channels, a.shape[1], device=u.device, dtype=u_wide.dtype)
    outputs = []
    for t in range(seq_len):
        decay = torch.exp(step[:, t, :, None] * a)  # [B, D, N]
        state = decay * state + (step[:, t] * u_wide[:, t])[:, :, None] * b[:, t, None, :]
        outputs.append(torch.matmul(state, c[:, t, :, None]).squeeze(-1))  # [B, D]
    y = torch.stack(outputs, dim=1) + u_wide * _wide(d)
    return (y * F.silu(_wide(z))).to(u.dtype)
