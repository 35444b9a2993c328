"""Vector add: out = x + y (CPU test problem)."""

import torch


def reference(x, y):
    return x + y


def make_inputs(device="cpu"):
    return [torch.randn(1024, device=device), torch.randn(1024, device=device)]
