"""Vector add whose make_inputs hard-codes "cuda" like MetaKernelBench problems (GPU tests)."""

import torch


def reference(x, y):
    return x + y


def make_inputs():
    return [torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")]
