"""Quantization metrics (DESIGN §5.3): cosine similarity, relative L1 and RMSE against per-problem thresholds."""

from __future__ import annotations

import math
from typing import Any

DEFAULT_THRESHOLDS = {"min_cosine": 0.95, "max_relative_l1": 0.05, "max_rmse": 0.1}


def thresholds_from_meta(meta: dict) -> dict | None:
    """The quant thresholds a problem asks for (MKB_META["quant"]: true or an object), or None."""
    raw: Any = meta.get("quant") if isinstance(meta, dict) else None
    if not raw:
        return None
    merged = dict(DEFAULT_THRESHOLDS)
    if isinstance(raw, dict):
        aliases = {"cos": "min_cosine", "cosine": "min_cosine", "l1_rel": "max_relative_l1",
                   "relative_l1": "max_relative_l1", "rmse": "max_rmse"}
        for key, value in raw.items():
            merged[aliases.get(key, key)] = float(value)
    return merged


def quant_metrics(cand: Any, ref: Any) -> dict:
    """cosine, relative L1 = Σ|x−ref| / max(Σ|ref|, 1e-12), RMSE; over flat float64 torch tensors."""
    import torch

    if cand.numel() == 0:
        return {"cosine": 1.0, "relative_l1": 0.0, "rmse": 0.0, "finite": True}
    finite = bool(torch.isfinite(cand).all())
    diff = cand - ref
    norm = float(cand.norm() * ref.norm())
    if norm == 0.0:
        cosine = 1.0 if float(cand.abs().sum()) == float(ref.abs().sum()) == 0.0 else 0.0
    else:
        cosine = float((cand * ref).sum()) / norm
    relative_l1 = float(diff.abs().sum()) / max(float(ref.abs().sum()), 1e-12)
    rmse = math.sqrt(float((diff * diff).mean()))
    return {"cosine": cosine, "relative_l1": relative_l1, "rmse": rmse, "finite": finite}


def passes(metrics: dict, thresholds: dict) -> bool:
    t = {**DEFAULT_THRESHOLDS, **thresholds}
    if not metrics.get("finite", True):
        return False
    values = (metrics["cosine"], metrics["relative_l1"], metrics["rmse"])
    if not all(isinstance(v, float) and math.isfinite(v) for v in values):
        return False
    return (metrics["cosine"] >= t["min_cosine"] and metrics["relative_l1"] <= t["max_relative_l1"]
            and metrics["rmse"] <= t["max_rmse"])


def failure_words(metrics: dict, thresholds: dict) -> str:
    t = {**DEFAULT_THRESHOLDS, **thresholds}
    parts = []
    if not metrics.get("finite", True):
        parts.append("non-finite values")
    if not metrics["cosine"] >= t["min_cosine"]:
        parts.append(f"cosine {metrics['cosine']:.4g} < {t['min_cosine']:.4g}")
    if not metrics["relative_l1"] <= t["max_relative_l1"]:
        parts.append(f"relative L1 {metrics['relative_l1']:.4g} > {t['max_relative_l1']:.4g}")
    if not metrics["rmse"] <= t["max_rmse"]:
        parts.append(f"RMSE {metrics['rmse']:.4g} > {t['max_rmse']:.4g}")
    return "; ".join(parts) or "within thresholds"
