"""Statistics of timing samples, computed in the parent: median, interquartile range, speedup (the clocks that
take the samples are child/timing.py)."""

from __future__ import annotations

import statistics
from typing import Optional


def median(samples: list[float]) -> Optional[float]:
    return statistics.median(samples) if samples else None


def iqr(samples: list[float]) -> Optional[float]:
    """Interquartile range (inclusive quartiles), None with fewer than two samples."""
    if len(samples) < 2:
        return None
    q = statistics.quantiles(samples, n=4, method="inclusive")
    return q[2] - q[0]


def speedup(eager_ms: Optional[float], kernel_ms: Optional[float]) -> float:
    if not eager_ms or not kernel_ms or kernel_ms <= 0:
        return 0.0
    return eager_ms / kernel_ms
