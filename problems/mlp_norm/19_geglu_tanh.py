"""GeGLU with tanh-approximated GELU on separate gate and up projections (Gemma-7B, intermediate size 24576)."""

import torch
import torch.nn.functional as F

# Gemma-7B MLP during prefill: 2048 tokens, gate_proj and up_proj outputs of 24576 columns each;
# the activation is gelu_pytorch_tanh(gate) * up, computed in float32 and returned in bf16.
NUM_TOKENS = 2048
INTERMEDIATE = 24576

MKB_META = {
    "category": "Activation",
    "tags": ["elementwise", "activation"],
}


def make_inputs(device="cuda"):
    gate = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    up = torch.randn(NUM_TOKENS, INTERMEDIATE, device=device, dtype=torch.bfloat16)
    return [gate, up]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(gate, up):
    return (F.gelu(_wide(gate), approximate="tanh") * _wide(up)).to(gate.dtype)
