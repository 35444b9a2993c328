"""Outlier draws (DESIGN §5.3): a small fraction of float input elements replaced by N(0,1)·scale."""

from __future__ import annotations

from typing import Any, Optional

import torch


def outlier_inputs_allowed(meta: dict, count: int) -> Optional[list[int]]:
    """Which input positions may be perturbed.

    MKB_META["outliers"] as the catalog accepts it (docs/dsl-descriptor.md, core/catalog/problem_meta.cpp):
    False or "off" → none (None); True or absent → all; {"inputs": [...], "p": ..., "scale": ...} → those positions
    (all when "inputs" is absent). A bare list of positions is read as {"inputs": list}.
    """
    raw: Any = meta.get("outliers", True) if isinstance(meta, dict) else True
    if raw is False or raw == "off":
        return None
    if isinstance(raw, dict):
        if raw.get("enabled") is False:
            return None
        raw = raw.get("inputs", True)
    if isinstance(raw, list):
        return [int(i) for i in raw if 0 <= int(i) < count]
    return list(range(count))


def outlier_rates(meta: dict, default_p: float, default_scale: float) -> tuple[float, float]:
    """The fraction of elements replaced and the noise scale: the problem's "p"/"scale" override the settings."""
    raw: Any = meta.get("outliers") if isinstance(meta, dict) else None
    if not isinstance(raw, dict):
        return default_p, default_scale
    p, scale = raw.get("p", default_p), raw.get("scale", default_scale)
    good = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0  # noqa: E731
    return (float(p) if good(p) and p <= 1 else default_p), (float(scale) if good(scale) else default_scale)


def inject_outliers(inputs: list, positions: list[int], p: float, scale: float, seed: int) -> int:
    """Replaces ≈p of the elements of each selected floating tensor in place; returns how many were replaced.

    The mask and the noise are drawn on the tensor's own device (a CPU draw over a 64M-element GPU tensor took
    half a second), from a generator seeded with `seed`: the same seed gives the same outliers on the same device.
    """
    replaced = 0
    for position in positions:
        tensor = inputs[position]
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point() or tensor.numel() == 0:
            continue
        generator = torch.Generator(device=tensor.device).manual_seed(seed + position)
        mask = torch.rand(tensor.numel(), generator=generator, device=tensor.device) < p
        if not bool(mask.any()):
            first = torch.randint(tensor.numel(), (1,), generator=generator, device=tensor.device)
            mask[first] = True
        index = mask.nonzero().reshape(-1)
        noise = torch.randn(index.numel(), generator=generator, device=tensor.device, dtype=torch.float32) * scale
        values = noise.to(tensor.dtype)
        if tensor.is_contiguous():
            tensor.view(-1).index_copy_(0, index, values)
        else:
            copy = tensor.reshape(-1).clone()
            copy.index_copy_(0, index, values)
            tensor.copy_(copy.view_as(tensor))
        replaced += index.numel()
    return replaced
