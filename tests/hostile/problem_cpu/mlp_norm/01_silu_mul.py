"""SwiGLU gate: silu(gate) * up on bf16 activations (64 x 128: the CPU copy of the GPU fixture)."""

import torch

ROWS = 64
COLS = 128

MKB_META = {"tags": ["elementwise"]}


def make_inputs(device="cpu"):
    """Two bf16 tensors of 8K elements each, drawn from the grader-seeded RNG."""
    gate = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    up = torch.randn(ROWS, COLS, device=device, dtype=torch.float32).to(torch.bfloat16)
    return [gate, up]


def reference(gate, up):
    """The semantics in eager PyTorch."""
    return torch.nn.functional.silu(gate) * up
