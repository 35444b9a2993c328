"""The correctness contract's arithmetic: the float64-anchor allowance rule and its verdict on one output."""

from __future__ import annotations

import math
from typing import Optional

# Machine epsilon per floating dtype name (torch.finfo(...).eps), kept here so the parent never needs torch.
EPSILON = {
    "float64": 2.220446049250313e-16,
    "float32": 1.1920928955078125e-07,
    "float16": 0.0009765625,
    "bfloat16": 0.0078125,
    "float8_e4m3fn": 0.125,
    "float8_e5m2": 0.25,
    "complex64": 1.1920928955078125e-07,
    "complex128": 2.220446049250313e-16,
}

ALLOWANCE_FACTOR = 3.0


def allowance(ref_err: float, dtype: str, anchor_max_abs: float) -> float:
    """allowance = 3 × max(ref_err, eps(dtype) × max|anchor|) (DESIGN §5.1)."""
    eps = EPSILON.get(dtype)
    if eps is None:
        raise ValueError(f"no epsilon known for dtype {dtype}")
    return ALLOWANCE_FACTOR * max(ref_err, eps * anchor_max_abs)


def float_output_passes(cand_err: float, ref_err: float, dtype: str, anchor_max_abs: float) -> bool:
    """A floating output passes iff its max abs error against the anchor is finite and within the allowance."""
    if not math.isfinite(cand_err):
        return False
    return cand_err <= allowance(ref_err, dtype, anchor_max_abs)


def over_allowance_factor(cand_err: float, limit: float) -> Optional[float]:
    """How many times over the allowance an error is (None when not finite or the allowance is zero)."""
    if not math.isfinite(cand_err) or limit <= 0:
        return None
    return cand_err / limit
