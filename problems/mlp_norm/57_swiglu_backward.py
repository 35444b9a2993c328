"""SwiGLU activation backward over a concatenated gate/up projection: 8192 tokens at intermediate size 12288 (Qwen3-8B)."""

import torch

# Qwen3-8B's MLP (hidden 4096, intermediate 12288) in training: the fused gate/up projection writes
# gate_up = [gate | up] (8192 tokens x 2 * 12288, bf16) and the forward keeps h = silu(gate) * up. Its backward,
# given grad_h (the down projection's input gradient), is
#   grad_gate = grad_h * up * s * (1 + gate * (1 - s))     with s = sigmoid(gate)
#   grad_up   = grad_h * silu(gate)
# returned as one bf16 tensor laid out like gate_up. Eager PyTorch spends about ten float32 passes over
# 400-800 MB: an estimated 3-4 ms on an H200.
NUM_TOKENS = 8192
INTERMEDIATE = 12288

MKB_META = {
    "category": "Activation",
    "tags": ["elementwise", "activation", "backward"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    gate_up = torch.randn(NUM_TOKENS, 2 * INTERMEDIATE, device=device, dtype=torch.bfloat16)
    grad_h = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    return [gate_up, grad_h]


def reference(gate_up, grad_h):
    half = gate_up.shape[-1] // 2
    gate = _wide(gate_up[:, :half])
    up = _wide(gate_up[:, half:])
    dh = _wide(grad_h)
    s = torch.sigmoid(gate)
    grad_gate = dh * up * s * (1.0 + gate * (1.0 - s))
    grad_up = dh * gate * s
    return torch.cat([grad_gate, grad_up], dim=-1).to(gate_up.dtype)
