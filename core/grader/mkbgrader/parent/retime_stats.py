"""The statistics of paired re-timing (DESIGN §5.5): each pair's median ratio with its bootstrap interval, the
pairs a request compares, and the adaptive stop's convergence test (run by the child between rounds and again by
the parent over the same times)."""

from __future__ import annotations

from mkbgrader.parent import stats

EAGER = "eager"
STOP_RESAMPLES = 200  # resamples of the in-loop convergence test; the reported intervals use stats.RESAMPLES


def pair_stats(times: dict[str, list[float]], a: str, b: str, resamples: int = stats.RESAMPLES) -> dict:
    """The pair (a, b): ratio = median over rounds of time(a)/time(b), its percentile-bootstrap CI and n."""
    ratios = [x / y for x, y in zip(times[a], times[b]) if y > 0 and x > 0]
    if not ratios:
        return {"a": a, "b": b, "ratio": None, "ci_low": None, "ci_high": None, "n": 0}
    ratio, low, high = stats.median_ci(ratios, resamples)
    low, high = min(low, ratio), max(high, ratio)  # a percentile interval of a median holds it; make sure of it
    return {"a": a, "b": b, "ratio": ratio, "ci_low": low, "ci_high": high, "n": len(ratios)}


def pair_names(labels: list[str]) -> list[tuple[str, str]]:
    """Every pair i < j in request order, then each kernel against eager (a = "eager": the kernel's speedup)."""
    pairs = [(labels[i], labels[j]) for i in range(len(labels)) for j in range(i + 1, len(labels))]
    return pairs + [(EAGER, label) for label in labels]


def converged(times: dict[str, list[float]], labels: list[str], halfwidth: float,
              resamples: int = STOP_RESAMPLES) -> bool:
    """The adaptive stop's test: every pair's CI within ratio × (1 ± halfwidth)."""
    for a, b in pair_names(labels):
        pair = pair_stats(times, a, b, resamples)
        if pair["ratio"] is None or not stats.within(pair["ratio"], pair["ci_low"], pair["ci_high"], halfwidth):
            return False
    return True
