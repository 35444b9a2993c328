"""Judging the child's raw per-output reports in the parent (DESIGN §5.1, §5.3): whether an output passes the
contract or the quantization thresholds, and the first mismatch in words."""

from __future__ import annotations

import math
from typing import Any, Optional

from mkbgrader.parent import contract, quant


def leaf_passes(leaf: dict, quant_thresholds: Optional[dict] = None) -> bool:
    """Judges one raw leaf report by the contract (runs in the parent)."""
    kind = leaf["kind"]
    if kind == "structure":
        return False
    if kind == "exact":
        return leaf["mismatches"] == 0
    if kind == "quant":
        return quant.passes(leaf, quant_thresholds or {})
    return contract.float_output_passes(leaf["cand_err"], leaf["ref_err"], leaf["dtype"], leaf["anchor_max_abs"])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def mismatch_note(leaf: dict, quant_thresholds: Optional[dict] = None) -> str:
    """The first mismatch in words: which output, what differs, how far over the allowance, and where."""
    path, kind = leaf["path"], leaf["kind"]
    if kind == "structure":
        return f"{path} {leaf['note']}"
    if kind == "exact":
        return (f"{path} ({leaf['dtype']}) must equal the reference exactly but {leaf['mismatches']} of "
                f"{leaf['count']} elements differ; first at index {leaf['first_index']}: got "
                f"{_fmt(leaf['cand_value'])}, expected {_fmt(leaf['ref_value'])}")
    if kind == "quant":
        return f"{path} ({leaf['dtype']}) fails the quantization thresholds: {quant.failure_words(leaf, quant_thresholds or {})}"
    where = f" at index {leaf['worst_index']}: got {_fmt(leaf['cand_value'])}, anchor {_fmt(leaf['anchor_value'])}"
    if leaf["nonfinite"] or not math.isfinite(leaf["cand_err"]):
        return (f"{path} ({leaf['dtype']}) has {leaf['nonfinite']} non-finite element(s) where the float64 anchor "
                f"is finite (or misses the anchor's NaN/inf){where}")
    limit = contract.allowance(leaf["ref_err"], leaf["dtype"], leaf["anchor_max_abs"])
    factor = contract.over_allowance_factor(leaf["cand_err"], limit)
    over = f"{factor:.3g}x the allowance" if factor is not None else "over a zero allowance"
    return (f"{path} ({leaf['dtype']}) max abs error {_fmt(leaf['cand_err'])} against the float64 anchor exceeds the "
            f"allowance {_fmt(limit)} ({over}; reference error {_fmt(leaf['ref_err'])}, max|anchor| "
            f"{_fmt(leaf['anchor_max_abs'])}){where}")
