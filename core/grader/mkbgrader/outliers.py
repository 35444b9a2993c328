"""Outlier draws (DESIGN §5.3): a small fraction of float input elements replaced by N(0,1)·scale."""

from __future__ import annotations

from typing import Any, Optional

import torch


def outlier_inputs_allowed(meta: dict, count: int) -> Optional[list[int]]:
    """Which input positions may be perturbed: MKB_META["outliers"] false → none (None), a list → those, else all."""
    raw: Any = meta.get("outliers", True) if isinstance(meta, dict) else True
    if raw is False:
        return None
    if isinstance(raw, dict):
        if raw.get("enabled") is False:
            return None
        raw = raw.get("inputs", True)
    if isinstance(raw, list):
        return [int(i) for i in raw if 0 <= int(i) < count]
    return list(range(count))


def inject_outliers(inputs: list, positions: list[int], p: float, scale: float, seed: int) -> int:
    """Replaces ≈p of the elements of each selected floating tensor in place; returns how many were replaced."""
    generator = torch.Generator().manual_seed(seed)
    replaced = 0
    for position in positions:
        tensor = inputs[position]
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or tensor.numel() == 0:
            continue
        flat = tensor.view(-1) if tensor.is_contiguous() else None
        mask = torch.rand(tensor.numel(), generator=generator) < p
        if not bool(mask.any()):
            mask[int(torch.randint(tensor.numel(), (1,), generator=generator))] = True
        noise = torch.randn(int(mask.sum()), generator=generator, dtype=torch.float64) * scale
        index = mask.nonzero().reshape(-1).to(tensor.device)
        values = noise.to(tensor.device, tensor.dtype)
        if flat is not None:
            flat.index_copy_(0, index, values)
        else:
            copy = tensor.reshape(-1).clone()
            copy.index_copy_(0, index, values)
            tensor.copy_(copy.view_as(tensor))
        replaced += int(mask.sum())
    return replaced
