"""Mamba-2 SSD chunked scan (mamba2-2.7b: 80 heads of dim 64, d_state 128, one B/C group, chunk 256)."""

import torch
import torch.nn.functional as F

# The state-space-duality scan of a Mamba-2 block in mamba2-2.7b (d_model 2560, d_inner 5120, headdim 64 -> 80 heads,
# d_state 128, ngroups 1) on 2 sequences of 2048 tokens, computed as mamba_chunk_scan_combined does: chunks of 256
# tokens, quadratic (attention-like) form inside a chunk, a [headdim, d_state] state per head carried between chunks.
# dt = softplus(dt_raw + dt_bias), h_t = exp(dt_t A_h) h_{t-1} + dt_t x_t B_t^T, y_t = h_t C_t + D_h x_t.
BATCH = 2
SEQ_LEN = 2048
HEADS = 80
HEAD_DIM = 64
D_STATE = 128
CHUNK = 256

MKB_META = {
    "category": "Fusion",
    "tags": ["scan", "linear_attention", "gemm_epilogue"],
    "outliers": {"inputs": [0, 3, 4]},
}


def make_inputs(device="cuda"):
    x = torch.randn(BATCH, SEQ_LEN, HEADS, HEAD_DIM, device=device, dtype=torch.bfloat16)
    dt_raw = (torch.randn(BATCH, SEQ_LEN, HEADS, device=device) * 0.5).to(torch.bfloat16)
    a = -(1.0 + 15.0 * torch.rand(HEADS, device=device, dtype=torch.float32))  # -exp(A_log), A in [1, 16)
    b = torch.randn(BATCH, SEQ_LEN, D_STATE, device=device, dtype=torch.bfloat16)
    c = torch.randn(BATCH, SEQ_LEN, D_STATE, device=device, dtype=torch.bfloat16)
    d = torch.rand(HEADS, device=device, dtype=torch.float32) + 0.5
    dt = 0.001 * torch.pow(100.0, torch.rand(HEADS, device=device, dtype=torch.float32))  # dt in [0.001, 0.1)
    dt_bias = dt + torch.log(-torch.expm1(-dt))  # inverse softplus of dt
    return [x, dt_raw, a, b, c, d, dt_bias]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(x, dt_raw, a, b, c, d, dt_bias):
    batch, seq_len, heads, head_dim = x.shape
    x_wide = _wide(x)
    dt = F.softplus(_wide(dt_raw) + _wide(dt_bias))  # [B, L, H]
    log_decay = dt * _wide(a)  # [B, L, H]
    b = _wide(b)
    c = _wide(c)
    index = torch.arange(CHUNK, device=x.device)
    causal = index.view(-1, 1) >= index.view(1, -1)  # [i, j]: j <= i
    state = torch.zeros(batch, heads, head_dim, b.shape[-1], device=x.device, dtype=x_wide.dtype)
    outputs = []
    for start in range(0, seq_len, CHUNK):
        xc = x_wide[:, start : start + CHUNK].transpose(1, 2)  # [B, H, Q, P]
        dtc = dt[:, start : start + CHUNK].transpose(1, 2)  # [B, H, Q]
        cum = torch.cumsum(log_decay[:, start : start + CHUNK].transpose(1, 2), dim=-1)  # [B, H, Q]
        bc = b[:, start : start + CHUNK]  # [B, Q, N]
        cc = c[:, start : start + CHUNK]
        segment = (cum.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(~causal, float("-inf"))  # sum over (j, i]
        scores = torch.matmul(cc, bc.transpose(-1, -2)).unsqueeze(1) * torch.exp(segment) * dtc.unsqueeze(-2)
        inner = torch.matmul(scores, xc)  # [B, H, Q, P]
        carried = torch.matmul(cc.unsqueeze(1), state.transpose(-1, -2)) * torch.exp(cum).unsqueeze(-1)
        outputs.append(inner + carried)
        tail = torch.exp(cum[..., -1:] - cum) * dtc  # [B, H, Q]
        state = state * torch.exp(cum[..., -1:]).unsqueeze(-1) + torch.matmul((xc * tail.unsqueeze(-1)).transpose(-1, -2),
                                                                               bc.unsqueeze(1))
    y = torch.cat(outputs, dim=2).transpose(1, 2) + x_wide * _wide(d).view(1, 1, -1, 1)
    return y.to(x.dtype)
