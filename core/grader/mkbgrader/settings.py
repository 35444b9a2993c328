"""Grading settings: the documented defaults of DESIGN §5.1 and validation of a request's overrides."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

# The implementation boundaries (DESIGN §5.2; judged by boundary.py): MetaKernelBench's rule, and all arithmetic in
# the DSL. Kept here, free of torch, since the parent validates settings too.
BOUNDARIES = ("mkb", "strict")
DEFAULT_BOUNDARY = "mkb"


def parse_boundary(value: Any) -> str:
    """The boundary's name; raises ValueError naming the allowed ones."""
    if not isinstance(value, str) or value not in BOUNDARIES:
        raise ValueError(f"settings.boundary must be one of {', '.join(BOUNDARIES)} (got {value!r})")
    return value


@dataclass(frozen=True)
class Settings:
    correctness_draws: int = 5
    warmup_draws: int = 10
    timing_draws: int = 50
    recheck_draws: int = 3
    timeout_s: float = 600.0
    max_kernel_bytes: int = 300_000
    outliers: bool = True
    outlier_p: float = 0.001
    outlier_scale: float = 50.0
    outlier_draws: int = 2
    kernel_only_timing: bool = False
    log_cap_bytes: int = 65_536
    boundary: str = DEFAULT_BOUNDARY  # the implementation boundary, "mkb" or "strict" (boundary.py)


def parse_settings(raw: Any) -> Settings:
    """Returns Settings from a request's "settings" object; raises ValueError naming the bad key."""
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        raise ValueError("settings must be a JSON object")
    known = {f.name: f for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ValueError(f"unknown settings key '{key}' (known: {', '.join(sorted(known))})")
        default = getattr(Settings(), key)
        if key == "boundary":
            value = parse_boundary(value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"settings.{key} must be true or false")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"settings.{key} must be a non-negative integer")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"settings.{key} must be a non-negative number")
            value = float(value)
        values[key] = value
    settings = Settings(**values)
    if settings.timeout_s <= 0:
        raise ValueError("settings.timeout_s must be positive")
    if settings.correctness_draws < 1:
        raise ValueError("settings.correctness_draws must be at least 1")
    if settings.recheck_draws > settings.timing_draws:
        raise ValueError("settings.recheck_draws cannot exceed settings.timing_draws")
    return settings
