"""Row softmax with every MKB_META key (fuzz seed)."""

import torch

MKB_META: dict = {
    # every key the catalog knows
    'tags': ['reduction', "softmax",],
    "quant": {"min_cosine": 0.99, "max_relative_l1": 2e-2, "max_rmse": .05},
    "outliers": {"inputs": [0, 2], "p": 0.001, "scale": 50},
    "flops": 1_048_576, "bytes": 4.5e6, "insensitive": [1, 3],
}


def reference(x, mask):
    return torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)


def make_inputs(device="cuda"):
    x = torch.randn(4, 128, device=device)
    return [x, torch.zeros_like(x, dtype=torch.bool)]
