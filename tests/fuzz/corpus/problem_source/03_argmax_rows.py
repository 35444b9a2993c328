"""Row argmax and max as a tuple (integer and float outputs; CPU test problem)."""

import torch


def reference(x):
    values, indices = x.max(dim=-1)
    return (values, indices)


def make_inputs(device="cpu"):
    return [torch.randn(8, 32, device=device)]
