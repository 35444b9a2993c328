"""SwiGLU activation on a concatenated gate/up projection (Llama-3-8B, intermediate size 14336)."""

import torch
import torch.nn.functional as F

# Llama-3-8B MLP during prefill, vLLM-style: the merged gate_up_proj produces [gate | up] side by side for 4096
# tokens (2 x 14336 columns); SiluAndMul computes silu(gate) * up in float32 and returns bf16 for down_proj.
NUM_TOKENS = 4096
INTERMEDIATE = 14336

MKB_META = {
    "category": "Activation",
    "tags": ["elementwise", "activation"],
}


def make_inputs(device="cuda"):
    gate_up = torch.randn(NUM_TOKENS, 2 * INTERMEDIATE, device=device, dtype=torch.bfloat16)
    return [gate_up]


def _wide(t):
    return t if t.dtype == torch.float64 else t.float()


def reference(gate_up):
    half = gate_up.shape[-1] // 2
    gate, up = _wide(gate_up[:, :half]), _wide(gate_up[:, half:])
    return (F.silu(gate) * up).to(gate_up.dtype)
