"""One evaluation from the parent's side: static check in-process, then the forked child (child/evaluate.py), then
the verdict."""

from __future__ import annotations

import math
import os
import time
from typing import Callable, Optional

from mkbgrader.parent import compliance_static, sandbox, verdict
from mkbgrader.parent.child_task import ChildTask, preload
from mkbgrader.parent.settings import Settings
from mkbgrader.parent.stage_clock import StageClock


def requested_slowdown(request: dict) -> float:
    """The request's "slowdown" (default 0): a non-negative finite number, used only by mkb calibrate's A/B control
    (grade a copy slowed by that fraction of its own warm-up median); ValueError names what is wrong."""
    value = request.get("slowdown", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"slowdown must be a non-negative number (a fraction of the kernel's median), not {value!r}")
    return float(value)


def grade(request: dict, settings: Settings, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Grades request["kernel"] against request["problem"]; always returns a verdict dict (never raises). Every
    verdict names the implementation boundary it was judged under (settings.boundary) and the slowdown it was asked
    to add (0 for every grading but calibrate's slowed copy)."""
    try:
        slowdown = requested_slowdown(request)
    except ValueError as error:
        result = verdict.fail(verdict.empty_verdict(), "load", f"bad grade request: {error}", infrastructure=True)
        result["boundary"] = settings.boundary
        return result
    result = _grade({**request, "slowdown": slowdown}, settings, on_stage)
    result["boundary"] = settings.boundary
    result["slowdown"] = slowdown
    return result


def _grade(request: dict, settings: Settings, on_stage: Optional[Callable[[str], None]]) -> dict:
    preload()
    started = time.monotonic()
    kernel_path = str(request.get("kernel", ""))
    problem_path = str(request.get("problem", ""))
    if not os.path.isfile(problem_path):
        result = verdict.empty_verdict()
        return verdict.fail(result, "load", f"problem file {problem_path} does not exist", infrastructure=True)
    if on_stage:
        on_stage("static_check")
    try:
        with open(kernel_path, "rb") as handle:
            raw = handle.read(settings.max_kernel_bytes + 1)
    except OSError as error:
        result = verdict.empty_verdict()
        return verdict.fail(result, "static_check", f"cannot read kernel {kernel_path}: {error.strerror}")
    size = os.path.getsize(kernel_path)
    source = raw.decode("utf-8", "replace") if size <= settings.max_kernel_bytes else ""
    finding = compliance_static.check_source(source, request.get("dsl_descriptor") or {}, settings.max_kernel_bytes) \
        if size <= settings.max_kernel_bytes else \
        compliance_static.StaticFinding("size", f"kernel.py is {size} bytes; the limit is {settings.max_kernel_bytes}")
    if finding is not None:
        return verdict.static_failure(finding.rule, finding.detail, round(time.monotonic() - started, 3))

    work = ChildTask("evaluate", "evaluate", (request, settings))  # picklable: a pre-started child can run it
    outcome_started = time.monotonic()

    clock = StageClock(on_stage)
    device = str(request.get("device") or "cpu")
    memory_limit = sandbox.cpu_memory_limit() if device == "cpu" else None
    outcome = sandbox.run_in_child(work, settings.timeout_s, settings.log_cap_bytes, clock, memory_limit)
    meta = dict(request.get("problem_meta") or {})
    for message in outcome.messages:
        if message.get("t") == "meta" and isinstance(message.get("meta"), dict):
            meta = {**message["meta"], **meta}
    result = verdict.build(outcome, settings, request.get("peaks"), meta)
    result["stage_s"] = {"static_check": round(outcome_started - started, 3), **clock.seconds()}
    return result
