"""Judging quantization metrics (DESIGN §5.3): cosine similarity, relative L1 and RMSE against per-problem
thresholds (child/compare.py computes the metrics)."""

from __future__ import annotations

import math
from typing import Any

from mkbgrader.parent.settings import QUANT_THRESHOLDS


def thresholds_from_meta(meta: dict) -> dict | None:
    """The quant thresholds a problem asks for (MKB_META["quant"]: true or an object), or None."""
    raw: Any = meta.get("quant") if isinstance(meta, dict) else None
    if not raw:
        return None
    merged = dict(QUANT_THRESHOLDS)
    if isinstance(raw, dict):
        aliases = {"cos": "min_cosine", "cosine": "min_cosine", "l1_rel": "max_relative_l1",
                   "relative_l1": "max_relative_l1", "rmse": "max_rmse"}
        for key, value in raw.items():
            merged[aliases.get(key, key)] = float(value)
    return merged


def passes(metrics: dict, thresholds: dict) -> bool:
    t = {**QUANT_THRESHOLDS, **thresholds}
    if not metrics.get("finite", True):
        return False
    values = (metrics["cosine"], metrics["relative_l1"], metrics["rmse"])
    if not all(isinstance(v, float) and math.isfinite(v) for v in values):
        return False
    return (metrics["cosine"] >= t["min_cosine"] and metrics["relative_l1"] <= t["max_relative_l1"]
            and metrics["rmse"] <= t["max_rmse"])


def failure_words(metrics: dict, thresholds: dict) -> str:
    t = {**QUANT_THRESHOLDS, **thresholds}
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
