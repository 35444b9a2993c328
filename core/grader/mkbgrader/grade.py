"""One evaluation from the parent's side: static check in-process, then the forked child, then the verdict."""

from __future__ import annotations

import functools
import math
import os
import time
from typing import Callable, Optional

from mkbgrader import compliance_static, sandbox, verdict
from mkbgrader.settings import Settings


def _cpu_memory_limit() -> Optional[int]:
    """On CPU evaluations the address space is capped at 3/4 of RAM (CUDA needs unlimited address space)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return int(pages * page_size * 3 // 4)
    except (ValueError, OSError):
        return None


def preload() -> None:
    """Imports, once in the parent, the torch modules that patch torch functions when first imported.

    torch 2.x's torch._dynamo wraps torch.manual_seed and friends on import; importing it lazily inside a
    candidate's solve (Triton does) would look like tampering. It does not initialise CUDA.
    """
    try:
        import torch._dynamo  # noqa: F401
    except Exception:
        pass


def preload_for_server() -> None:
    """What a long-lived server imports before it says ready, so no grading pays for it (mkb holds the GPU lock
    during a grading): torch._dynamo (seconds), the evaluation modules, and the installed DSL packages, which
    forked evaluation children then inherit instead of importing each time. None of it initialises CUDA.
    Anything these imports print goes to stderr: fd 1 is the protocol channel."""
    import importlib

    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        preload()
        for name in ("mkbgrader.evaluate", "triton", "triton.language", "cupy", "mkb_cuda"):
            try:
                importlib.import_module(name)
            except Exception:  # a DSL package that is missing or broken is reported by the grading itself
                pass
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _evaluate_in_child(request: dict, settings: Settings, send: Callable[[dict], None]) -> None:
    from mkbgrader import evaluate

    evaluate.evaluate(request, settings, send)


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
        result = verdict._fail(verdict.empty_verdict(), "load", f"bad grade request: {error}", infrastructure=True)
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
        return verdict._fail(result, "load", f"problem file {problem_path} does not exist", infrastructure=True)
    if on_stage:
        on_stage("static_check")
    try:
        with open(kernel_path, "rb") as handle:
            raw = handle.read(settings.max_kernel_bytes + 1)
    except OSError as error:
        result = verdict.empty_verdict()
        return verdict._fail(result, "static_check", f"cannot read kernel {kernel_path}: {error.strerror}")
    size = os.path.getsize(kernel_path)
    source = raw.decode("utf-8", "replace") if size <= settings.max_kernel_bytes else ""
    finding = compliance_static.check_source(source, request.get("dsl_descriptor") or {}, settings.max_kernel_bytes) \
        if size <= settings.max_kernel_bytes else \
        compliance_static.StaticFinding("size", f"kernel.py is {size} bytes; the limit is {settings.max_kernel_bytes}")
    if finding is not None:
        return verdict.static_failure(finding.rule, finding.detail, round(time.monotonic() - started, 3))

    work = functools.partial(_evaluate_in_child, request, settings)  # picklable: a pre-started child can run it

    def on_message(message: dict) -> None:
        if on_stage and message.get("t") == "stage":
            on_stage(str(message.get("stage")))

    device = str(request.get("device") or "cpu")
    memory_limit = _cpu_memory_limit() if device == "cpu" else None
    outcome = sandbox.run_in_child(work, settings.timeout_s, settings.log_cap_bytes, on_message, memory_limit)
    meta = dict(request.get("problem_meta") or {})
    for message in outcome.messages:
        if message.get("t") == "meta" and isinstance(message.get("meta"), dict):
            meta = {**message["meta"], **meta}
    return verdict.build(outcome, settings, request.get("peaks"), meta)
