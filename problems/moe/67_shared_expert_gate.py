"""Shared-expert sigmoid gate and combine: out = routed + sigmoid(x . w_gate) * shared for 65536 tokens (Qwen3-Next-80B-A3B)."""

import torch

# Qwen3-Next-80B-A3B (hidden 2048) adds one shared expert to the 10 routed ones and gates it per token with a
# one-output linear layer: out[t] = routed[t] + sigmoid(dot(x[t], w_gate)) * shared[t]. For a 65536-token
# prefill chunk (long-context prefill), bf16 in and out, the gate's dot product in float32 or wider. Eager
# PyTorch (a GEMV, then sigmoid, multiply and add over 268 MB tensors) takes an estimated 0.5-0.7 ms on an H200.
NUM_TOKENS = 65536
HIDDEN = 2048

MKB_META = {
    "category": "Fusion",
    "tags": ["reduction", "elementwise", "routing"],
    "outliers": {"inputs": [1, 2]},
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    x = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    routed = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    shared = torch.randn(NUM_TOKENS, HIDDEN, device=device, dtype=torch.bfloat16)
    w_gate = (torch.randn(HIDDEN, device=device) / HIDDEN**0.5).to(torch.bfloat16)
    return [x, routed, shared, w_gate]


def reference(x, routed, shared, w_gate):
    gate = torch.sigmoid(torch.matmul(_wide(x), _wide(w_gate))).unsqueeze(1)
    return (_wide(routed) + gate * _wide(shared)).to(x.dtype)
