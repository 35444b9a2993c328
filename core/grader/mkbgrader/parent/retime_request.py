"""The several-kernel requests: paired re-timing (docs/grader-protocol.md "Paired re-timing") and the pooled
correctness draws ("Pooled correctness draws"): their kernels, their checks, and the bound of a re-timing's child;
shared by the parents (parent/retime.py, parent/pool.py) and the children (child/retime.py, child/pool.py)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Optional

from mkbgrader.parent import compliance_static
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
    check_problem_and_device(request, "retime")
    kernels = parse_kernels(request.get("kernels"), "retime", 2, 4)
    settings = parse_settings(request.get("settings"))
    retime_settings = parse_retime_settings(request.get("retime"))
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError("seed must be a non-negative integer")
    return kernels, settings, retime_settings, seed


def check_problem_and_device(request: dict, kind: str) -> None:
    """The problem, device and problem_meta of a several-kernel request (retime, pool); ValueError names the first
    thing wrong."""
    if not isinstance(request.get("problem"), str) or not request["problem"]:
        raise ValueError(f"{kind} request lacks problem")
    device = request.get("device", "cpu")
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device must be \"cpu\" or \"cuda[:N]\", not {device!r}")
    if "problem_meta" in request and not isinstance(request["problem_meta"], dict):
        raise ValueError("problem_meta must be a JSON object")


def parse_kernels(raw_kernels: object, kind: str, fewest: int, most: int) -> list[KernelSpec]:
    """A request's "kernels": fewest to most objects with unique labels, each naming its kernel file and DSL (the pool
    of correctness draws shares this shape with re-timing); raises ValueError naming the first thing wrong."""
    if not isinstance(raw_kernels, list) or not fewest <= len(raw_kernels) <= most:
        raise ValueError(f"{kind} request needs \"kernels\": a list of {fewest} to {most} kernels")
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
    return kernels


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


def read_kernel_files(kernels: list[KernelSpec], settings: Settings) -> tuple[list[str], Optional[tuple[str, str]]]:
    """Each kernel file's sha256 (none for a file unread or over the size limit), and the first kernel that cannot be
    read, is over the limit or fails the static compliance check, as (label, one-line reason); None when all pass."""
    hashes: list[str] = []
    for spec in kernels:
        try:
            with open(spec.kernel, "rb") as handle:
                raw = handle.read(settings.max_kernel_bytes + 1)
        except OSError as error:
            return hashes, (spec.label, f"cannot read {spec.kernel}: {error.strerror}")
        if len(raw) > settings.max_kernel_bytes:
            return hashes, (spec.label, f"kernel.py is over the limit of {settings.max_kernel_bytes} bytes")
        hashes.append(hashlib.sha256(raw).hexdigest())
        finding = compliance_static.check_source(raw.decode("utf-8", "replace"), spec.descriptor,
                                                 settings.max_kernel_bytes)
        if finding is not None:
            rule = "" if finding.rule == "syntax" else f"compliance: {finding.rule}: "
            return hashes, (spec.label, f"{rule}{finding.detail}")
    return hashes, None
