"""RWKV-7 "Goose" time-mixing decode step: generalised delta-rule state update and readout (RWKV7-World3-2.9B)."""

import torch

# RWKV7-World3-2.9B (hidden 2560 as 40 heads of size 64) serving 512 sequences, one token each. Per head the float32
# state S [value 64, key 64] follows RWKV-7's update with in-context learning rate folded into a and b:
# w = exp(-0.606531 sigmoid(w_raw)) (per-key decay), S' = S diag(w) + (S a) b^T + v k^T, y = S' r.
# (RWKV-7 uses a = -kk and b = kk * iclr with kk the normalised key; both come in ready-made here.) Returns y (bf16)
# and the new states (335 MB of float32, read and written once by a fused kernel).
# Eager estimate on an H200: ~1 ms (six passes over the state plus a batched matvec).
BATCH = 512
HEADS = 40
HEAD_SIZE = 64
DECAY_SCALE = 0.606531  # exp(-0.5), RWKV-7's bound on the per-step log decay

MKB_META = {
    "category": "LinearAlgebra",
    "tags": ["scan", "linear_attention", "decode", "reduction", "rwkv"],
    "outliers": {"inputs": [0, 2, 3]},
}


def make_inputs(device="cuda"):
    def act(scale=1.0):
        return (scale * torch.randn(BATCH, HEADS, HEAD_SIZE, device=device)).to(torch.bfloat16)

    r, w_raw, k, v = act(), act(), act(0.3), act()
    kk = torch.nn.functional.normalize(torch.randn(BATCH, HEADS, HEAD_SIZE, device=device), dim=-1)
    iclr = torch.sigmoid(torch.randn(BATCH, HEADS, HEAD_SIZE, device=device))
    a = (-kk).to(torch.bfloat16)
    b = (kk * iclr).to(torch.bfloat16)
    state = 0.5 * torch.randn(BATCH, HEADS, HEAD_SIZE, HEAD_SIZE, device=device, dtype=torch.float32)
    return [r, w_raw, k, v, a, b, state]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(r, w_raw, k, v, a, b, state):
    s = _wide(state)  # [B, H, V, K]
    decay = torch.exp(-DECAY_SCALE * torch.sigmoid(_wide(w_raw)))  # [B, H, K]
    sa = torch.matmul(s, _wide(a).unsqueeze(-1))  # [B, H, V, 1]
    s = s * decay.unsqueeze(-2) + sa * _wide(b).unsqueeze(-2) + _wide(v).unsqueeze(-1) * _wide(k).unsqueeze(-2)
    y = torch.matmul(s, _wide(r).unsqueeze(-1)).squeeze(-1)
    return y.to(r.dtype), s.to(state.dtype)
