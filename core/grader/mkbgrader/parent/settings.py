"""Every grading default, defined once (DESIGN §5.1, §5.3, §5.5), and the checks of a request's overrides.

The C++ side holds the same defaults (core/wire/grade_request.h GradeSettings, retime_request.h RetimeSettings,
core/records/problem.h QuantThresholds, core/vocabulary/boundary.h); `defaults()` is what the agreement test
(tests/grading/tst_grading_defaults.cpp) compares them with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

# The implementation boundaries (DESIGN §5.2; judged by child/boundary.py): MetaKernelBench's rule, and all
# arithmetic in the DSL.
BOUNDARIES = ("mkb", "strict")
DEFAULT_BOUNDARY = "mkb"

# The quantization thresholds a problem gets when its MKB_META["quant"] is True (DESIGN §5.3).
QUANT_THRESHOLDS = {"min_cosine": 0.95, "max_relative_l1": 0.05, "max_rmse": 0.1}

# A reference's eager median below this is dominated by launch overhead (DESIGN §3: ≥ 50 µs on the target GPU).
EAGER_TARGET_MS = 0.05


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
    boundary: str = DEFAULT_BOUNDARY  # the implementation boundary, "mkb" or "strict"


@dataclass(frozen=True)
class RetimeSettings:
    """Paired re-timing's stop rule (DESIGN §5.5): at least min_rounds, at most max_rounds or max_seconds, until
    every pairwise ratio's interval lies within ± ci_halfwidth."""
    min_rounds: int = 100
    max_rounds: int = 2000
    max_seconds: float = 60.0
    ci_halfwidth: float = 0.01


def defaults() -> dict:
    """Every default above as one JSON-ready object, in the protocol's names."""
    return {"settings": asdict(Settings()), "retime": asdict(RetimeSettings()), "quant": dict(QUANT_THRESHOLDS),
            "boundaries": list(BOUNDARIES), "default_boundary": DEFAULT_BOUNDARY, "eager_target_ms": EAGER_TARGET_MS}


def parse_boundary(value: Any) -> str:
    """The boundary's name; raises ValueError naming the allowed ones."""
    if not isinstance(value, str) or value not in BOUNDARIES:
        raise ValueError(f"settings.boundary must be one of {', '.join(BOUNDARIES)} (got {value!r})")
    return value


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


def parse_retime_settings(raw: Any) -> RetimeSettings:
    """The request's "retime" object with defaults; raises ValueError naming the bad key."""
    if raw is None:
        return RetimeSettings()
    if not isinstance(raw, dict):
        raise ValueError("retime must be a JSON object")
    defaults_ = RetimeSettings()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not hasattr(defaults_, key):
            raise ValueError(f"unknown retime key '{key}' (known: ci_halfwidth, max_rounds, max_seconds, min_rounds)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"retime.{key} must be a number")
        if isinstance(getattr(defaults_, key), int):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"retime.{key} must be a positive integer")
        elif value < 0 or (key == "max_seconds" and value == 0):
            raise ValueError(f"retime.{key} must be a {'positive' if key == 'max_seconds' else 'non-negative'} "
                             "number")
        values[key] = float(value) if isinstance(getattr(defaults_, key), float) else value
    parsed = RetimeSettings(**{**defaults_.__dict__, **values})
    if parsed.max_rounds < parsed.min_rounds:
        raise ValueError(f"retime.max_rounds ({parsed.max_rounds}) is below retime.min_rounds ({parsed.min_rounds})")
    return parsed
