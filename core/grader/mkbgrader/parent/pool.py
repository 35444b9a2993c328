"""Pooled correctness draws from the parent's side (docs/grader-protocol.md "Pooled correctness draws"): 1 to 8
kernels of one problem checked on the same draws in one sandboxed child (child/pool.py), each draw's reference and
float64 anchor computed once for all of them.

What it is for: a suite check repeats every solution's correctness draws to show it is not flaky (20 gradings of 5
draws). For a problem whose reference is slow, those draws' references and anchors were most of the check, computed
once per solution; pooled, they are computed once per problem.

The parent checks the request, runs the static compliance check on each kernel, forks the child and judges every
draw (verdict.build, once per kernel, on that kernel's messages). A kernel is "complete" when all of its draws were
reported or it failed on its own (its error is its verdict); one that the pool did not finish (the pool timed out,
died, or ended on another kernel's broken CUDA context) is not, and its caller checks it alone.
"""

from __future__ import annotations

import signal
import time
from dataclasses import replace
from typing import Callable, Optional

from mkbgrader.fingerprint import grader_fingerprint
from mkbgrader.parent import sandbox, verdict
from mkbgrader.parent.child_task import ChildTask, preload
from mkbgrader.parent.retime_request import KernelSpec, check_problem_and_device, parse_kernels, read_kernel_files
from mkbgrader.parent.settings import Settings, parse_settings
from mkbgrader.parent.stage_clock import StageClock

MAX_KERNELS = 8


def parse_request(request: dict) -> tuple[list[KernelSpec], Settings]:
    """Checks a pool request's shape; raises ValueError with the one-line reason the server replies with."""
    check_problem_and_device(request, "pool")
    kernels = parse_kernels(request.get("kernels"), "pool", 1, MAX_KERNELS)
    if any(k.slowdown for k in kernels):
        raise ValueError("a pool request's kernels take no slowdown")
    return kernels, parse_settings(request.get("settings"))


def pool(request: dict, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Runs one pool request (already shape-checked by parse_request); always returns the "pool" object."""
    started = time.monotonic()
    kernels, settings = parse_request(request)
    result: dict = {"ok": False, "error": "", "draws": settings.correctness_draws,
                    "grader_fingerprint": grader_fingerprint(), "seconds": 0.0,
                    "kernels": [{"label": k.label, "dsl": k.dsl, "sha256": "", "complete": False, "verdict": None}
                                for k in kernels]}

    def finish(error: str = "") -> dict:
        result["error"] = error
        result["ok"] = not error and all(entry["complete"] for entry in result["kernels"])
        result["seconds"] = round(time.monotonic() - started, 3)
        return verdict.finite_or_none(result)

    preload()
    runnable: list[KernelSpec] = []
    for spec, entry in zip(kernels, result["kernels"]):
        hashes, failure = read_kernel_files([spec], settings)
        entry["sha256"] = hashes[0] if hashes else ""
        if failure is None:
            runnable.append(spec)
            continue
        # Refused before the child: that is the kernel's verdict, and the pool goes on without it.
        text = failure[1]
        rule = text.split(": ", 2)[1] if text.startswith("compliance: ") else ""
        entry["complete"] = True
        entry["verdict"] = verdict.fail(verdict.empty_verdict(), "static_check", text, rule=rule)
    if not runnable:
        return finish()

    clock = StageClock(on_stage)
    device = str(request.get("device") or "cpu")
    memory_limit = sandbox.cpu_memory_limit() if device == "cpu" else None
    work = ChildTask("pool", "pool", (request, runnable, settings))
    outcome = sandbox.run_in_child(work, settings.timeout_s, settings.log_cap_bytes, clock, memory_limit)
    result["stage_s"] = clock.seconds()
    meta = dict(request.get("problem_meta") or {})
    for message in outcome.messages:
        if message.get("t") == "meta" and isinstance(message.get("meta"), dict):
            meta = {**message["meta"], **meta}
    for spec, entry in zip(kernels, result["kernels"]):
        if spec not in runnable:
            continue
        judged = judge_kernel(outcome, spec.label, settings, meta)
        entry["complete"] = judged is not None
        entry["verdict"] = judged
    return finish(pool_failure(outcome, settings))


def judge_kernel(outcome: sandbox.ChildOutcome, label: str, settings: Settings, meta: dict) -> Optional[dict]:
    """The verdict of one kernel from its own messages and the pool's unlabelled ones, or None when the pool did not
    finish it: fewer draws than asked and no failure of its own."""
    own = [m for m in outcome.messages if m.get("label") == label]
    draws = sum(1 for m in own if m.get("t") == "draw" and m.get("phase") == "correctness")
    failure = next((m for m in own if m.get("t") == "error"), None)
    own_failure = failure is not None and not failure.get("infrastructure") and \
        not str(failure.get("message", "")).startswith("grader error")
    if draws < settings.correctness_draws and not own_failure:
        return None
    shared = [m for m in outcome.messages if "label" not in m and m.get("t") not in ("error", "final", "calling")]
    messages = shared + [m for m in own if m.get("t") != "calling"] + [{"t": "final"}]
    alone = replace(outcome, messages=messages, timed_out=False, exit_code=0, exit_signal=None, garbage=0)
    return verdict.build(alone, settings, None, meta, correctness_only=True)


def pool_failure(outcome: sandbox.ChildOutcome, settings: Settings) -> str:
    """Why the pool stopped before its end, in one line ("" when it reached it)."""
    if outcome.timed_out:
        return (f"the pool exceeded {settings.timeout_s:g} s during stage {outcome.last_stage or 'load'}; the "
                "process group was killed")
    error = next((m for m in outcome.messages if m.get("t") == "error" and "label" not in m), None)
    if error is not None:
        return f"the pool failed at stage {error.get('stage') or outcome.last_stage}: {error.get('message', '')}"
    if not any(m.get("t") == "final" for m in outcome.messages):
        how = f"was killed by signal {signal.Signals(outcome.exit_signal).name}" \
            if outcome.exit_signal is not None else f"exited with code {outcome.exit_code}"
        label = next((str(m.get("label") or "") for m in reversed(outcome.messages) if m.get("t") == "calling"), "")
        return f"the pool's process {how} during stage {outcome.last_stage or 'load'}" + \
            (f" while calling kernel '{label}'" if label else "")
    if outcome.garbage:
        return "the pool's child wrote unreadable results"
    return ""
