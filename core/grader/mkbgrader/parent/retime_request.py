"""The paired re-timing request (docs/grader-protocol.md "Paired re-timing"): its kernels, its checks, and the
bound of its child; shared by the parent (parent/retime.py) and the child (child/retime.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

from mkbgrader.parent.retime_stats import EAGER
from mkbgrader.parent.settings import RetimeSettings, Settings, parse_retime_settings, parse_settings


@dataclass(frozen=True)
class KernelSpec:
    label: str
    kernel: str
    dsl: str
    descriptor: dict
    slowdown: float


def parse_request(request: dict) -> tuple[list[KernelSpec], Settings, RetimeSettings, Optional[int]]:
    """Checks a retime request's shape; raises ValueError with the one-line reason the server replies with."""
    if not isinstance(request.get("problem"), str) or not request["problem"]:
        raise ValueError("retime request lacks problem")
    device = request.get("device", "cpu")
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device must be \"cpu\" or \"cuda[:N]\", not {device!r}")
    if "problem_meta" in request and not isinstance(request["problem_meta"], dict):
        raise ValueError("problem_meta must be a JSON object")
    raw_kernels = request.get("kernels")
    if not isinstance(raw_kernels, list) or not 2 <= len(raw_kernels) <= 4:
        raise ValueError("retime request needs \"kernels\": a list of 2 to 4 kernels")
    kernels: list[KernelSpec] = []
    for index, item in enumerate(raw_kernels):
        where = f"kernels[{index}]"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be a JSON object")
        missing = [k for k in ("label", "kernel", "dsl") if not isinstance(item.get(k), str) or not item[k]]
        if missing:
            raise ValueError(f"{where} lacks {', '.join(missing)}")
        if item["label"] == EAGER:
            raise ValueError(f"{where}: the label \"eager\" is reserved for the reference")
        if any(k.label == item["label"] for k in kernels):
            raise ValueError(f"{where}: label {item['label']!r} is used twice; labels must be unique")
        descriptor = item.get("dsl_descriptor", {})
        if not isinstance(descriptor, dict):
            raise ValueError(f"{where}.dsl_descriptor must be a JSON object")
        slowdown = item.get("slowdown", 0)
        if isinstance(slowdown, bool) or not isinstance(slowdown, (int, float)) or slowdown < 0:
            raise ValueError(f"{where}.slowdown must be a non-negative number")
        kernels.append(KernelSpec(item["label"], item["kernel"], item["dsl"], descriptor, float(slowdown)))
    settings = parse_settings(request.get("settings"))
    retime_settings = parse_retime_settings(request.get("retime"))
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError("seed must be a non-negative integer")
    return kernels, settings, retime_settings, seed


def child_timeout(settings: Settings, retime_settings: RetimeSettings) -> float:
    """The bound of the re-timing child: the grading bound (load, import, correctness, warm-up) plus the rounds'
    time limit plus 60 s for the GPU-time calls and the last convergence test."""
    return settings.timeout_s + retime_settings.max_seconds + 60.0


def request_dsls(request: dict) -> list[tuple[str, dict]]:
    """The distinct (dsl, descriptor) pairs of a well-formed retime request's kernels, sorted."""
    found: dict[tuple[str, str], tuple[str, dict]] = {}
    for item in request.get("kernels") or []:
        if isinstance(item, dict) and isinstance(item.get("dsl"), str):
            descriptor = item.get("dsl_descriptor") if isinstance(item.get("dsl_descriptor"), dict) else {}
            found.setdefault((item["dsl"], json.dumps(descriptor, sort_keys=True, default=str)),
                             (item["dsl"], descriptor))
    return [found[key] for key in sorted(found)]
