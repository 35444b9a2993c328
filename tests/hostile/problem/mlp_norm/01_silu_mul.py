"""SwiGLU gate: silu(gate) * up on bf16 activations (Llama-style MLP, 4096 tokens x 2048 features)."""

import torch

ROWS = 4096
COLS = 2048

MKB_META = {"tags": ["elementwise"]}


def make_inputs(device="cuda"):
    """Two bf16 tensors of 8M elements each, drawn from the grader-seeded RNG."""
    gate = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    up = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    return [gate, up]


def reference(gate, up):
    """The semantics in eager PyTorch."""
    return torch.nn.functional.silu(gate) * up
