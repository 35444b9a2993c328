"""Row softmax over the last dimension of a float32 matrix (CPU test problem)."""

import torch


def reference(x):
    return torch.softmax(x, dim=-1)


def make_inputs(device="cpu"):
    return [torch.randn(16, 64, device=device) * 3]
