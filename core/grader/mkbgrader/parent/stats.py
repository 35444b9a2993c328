"""Bootstrap confidence intervals for timing ratios (DESIGN §5.5): percentile bootstrap, deterministic per data set.

Standard library only. The resampling RNG is seeded from the samples themselves, so the same samples always give
the same interval (a stored result can be recomputed and checked), while different data get unrelated resamples.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
import struct
from typing import Optional, Sequence

RESAMPLES = 1000
CONFIDENCE = 0.95


def data_seed(*series: Sequence[float]) -> int:
    """A 64-bit seed from the exact bits of the samples (and how they are split into series)."""
    digest = hashlib.sha256()
    for values in series:
        digest.update(struct.pack("<q", len(values)))
        digest.update(struct.pack(f"<{len(values)}d", *values))
    return int.from_bytes(digest.digest()[:8], "little")


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """The p-quantile (0 ≤ p ≤ 1) of sorted values, linear between order statistics (numpy's default rule)."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = p * (len(sorted_values) - 1)
    low = int(math.floor(position))
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def _middle(values: list[float]) -> float:
    """The median of a list that is sorted in place (the mean of the two middle values when the count is even)."""
    values.sort()
    n = len(values)
    half = n // 2
    return values[half] if n % 2 else (values[half - 1] + values[half]) / 2


def median_ci(values: Sequence[float], resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
              seed: Optional[int] = None) -> tuple[float, float, float]:
    """(median, ci_low, ci_high): the percentile bootstrap of the median of `values`.

    Each resample stands for len(values) values drawn with replacement; the interval is the (1-confidence)/2 and
    (1+confidence)/2 quantiles of the resampled medians. With fewer than two values the interval is the point.
    The resampled medians are drawn exactly, without building the resamples (resample_median_positions), so a
    resample costs the same at 2,000 values as at 20: the re-timing's stop test runs it after every few rounds.
    """
    data = [float(v) for v in values]
    if not data:
        raise ValueError("median_ci of no values")
    point = statistics.median(data)
    if len(data) < 2 or resamples < 1:
        return point, point, point
    rng = random.Random(data_seed(data) if seed is None else seed)
    ordered = sorted(data)
    medians = sorted(_median_at(ordered, positions) for positions in resample_median_positions(rng, len(data),
                                                                                                resamples))
    tail = (1 - confidence) / 2
    return point, percentile(medians, tail), percentile(medians, 1 - tail)


def resample_median_positions(rng: random.Random, n: int, resamples: int) -> list[tuple[int, int]]:
    """For each resample of n sorted values drawn with replacement, the positions (in the sorted values) of the
    resample's middle order statistics: (i, i) when n is odd, (i, j) with i <= j when n is even.

    A resample is n indices J drawn uniformly from 0..n-1, and J = floor(n U) for uniform U, a monotone map; so the
    resample's k-th smallest value is sorted[floor(n U_(k))], where U_(k), the k-th smallest of n uniforms, follows
    Beta(k, n + 1 - k). Given U_(k) = u, the next one is the smallest of the other n - k uniforms on (u, 1):
    u + (1 - u) (1 - V^(1/(n-k))) for uniform V. This draws exactly what sorting each resample would give."""
    k = (n + 1) // 2 if n % 2 else n // 2
    positions = []
    for _ in range(resamples):
        u = rng.betavariate(k, n + 1 - k)
        first = min(int(n * u), n - 1)
        if n % 2:
            positions.append((first, first))
            continue
        v = u + (1 - u) * (1 - rng.random() ** (1 / (n - k)))
        positions.append((first, max(first, min(int(n * v), n - 1))))
    return positions


def _median_at(ordered: list[float], positions: tuple[int, int]) -> float:
    i, j = positions
    return ordered[i] if i == j else (ordered[i] + ordered[j]) / 2


def ratio_of_medians_ci(numerator: Sequence[float], denominator: Sequence[float], resamples: int = RESAMPLES,
                        confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(median(numerator)/median(denominator), ci_low, ci_high) from a paired percentile bootstrap.

    numerator[i] and denominator[i] were measured together (draw i of a grading: eager and kernel on the same seed),
    so a resample draws draw indices with replacement and recomputes both medians from the same draws. This is the
    interval of the verdict's speedup_vs_eager, which is exactly that ratio of medians.
    """
    top = [float(v) for v in numerator]
    bottom = [float(v) for v in denominator]
    if len(top) != len(bottom) or not top:
        raise ValueError("ratio_of_medians_ci needs two series of the same, non-zero length")
    point_bottom = statistics.median(bottom)
    if point_bottom <= 0:
        raise ValueError("ratio_of_medians_ci: the denominator's median is not positive")
    point = statistics.median(top) / point_bottom
    n = len(top)
    if n < 2 or resamples < 1:
        return point, point, point
    rng = random.Random(data_seed(top, bottom))
    indices = range(n)
    ratios = []
    for _ in range(resamples):
        picks = rng.choices(indices, k=n)
        below = _middle([bottom[i] for i in picks])
        if below > 0:
            ratios.append(_middle([top[i] for i in picks]) / below)
    if not ratios:
        return point, point, point
    ratios.sort()
    tail = (1 - confidence) / 2
    return point, percentile(ratios, tail), percentile(ratios, 1 - tail)


def within(ratio: float, low: float, high: float, halfwidth: float) -> bool:
    """True when [low, high] lies inside ratio × (1 ± halfwidth): the adaptive stop's convergence test."""
    return ratio * (1 - halfwidth) <= low and high <= ratio * (1 + halfwidth)
