"""GeGLU (tanh GELU) activation backward: gate and up gradients for 4096 tokens at intermediate size 21504 (Gemma 3 27B)."""

import math

import torch

# Gemma 3 27B's MLP (hidden 5376, intermediate 21504) uses h = gelu_tanh(gate) * up. Fine-tuning on a 4096-token
# sequence, the backward of that product, given grad_h, is
#   grad_gate = grad_h * up * gelu_tanh'(gate),   grad_up = grad_h * gelu_tanh(gate)
# with gelu_tanh(x) = 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)), c = sqrt(2 / pi), and
#   gelu_tanh'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2).
# bf16 in and out. Eager PyTorch makes about fifteen float32 passes over 176-350 MB: an estimated 3-4 ms on an H200.
NUM_TOKENS = 4096
INTERMEDIATE = 21504
GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715

MKB_META = {
    "category": "Activation",
    "tags": ["elementwise", "activation", "backward"],
}


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def make_inputs(device="cuda"):
    gate = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    up = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    grad_h = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    return [gate, up, grad_h]


def reference(gate, up, grad_h):
    x = _wide(gate)
    u = _wide(up)
    dh = _wide(grad_h)
    t = torch.tanh(GELU_C * (x + GELU_A * x * x * x))
    gelu = 0.5 * x * (1.0 + t)
    derivative = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_A * x * x)
    return (dh * u * derivative).to(gate.dtype), (dh * gelu).to(gate.dtype)
