"""Symmetric int8 row quantisation, dequantised back to float32 (judged by quant metrics; CPU test problem)."""

import torch

MKB_META = {"tags": ["quantize"], "quant": {"min_cosine": 0.99, "max_relative_l1": 0.02, "max_rmse": 0.05},
            "outliers": False}


def reference(x):
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-8) / 127.0
    return torch.round(x / scale).clamp(-127, 127) * scale


def make_inputs(device="cpu"):
    return [torch.randn(8, 64, device=device)]
