"""Paired re-timing from the parent's side (DESIGN §5.5, docs/grader-protocol.md "Paired re-timing"): 2 to 4
kernels and eager timed interleaved in one sandboxed child, round by round on shared seeds, until every pairwise
ratio's CI is tight.

The parent checks the request (retime_request.py), runs the static compliance check and hashes each kernel, forks
one child (child/retime.py, through sandbox.run_in_child as grading does) and computes every statistic from the
child's raw per-round times (retime_stats.py).
"""

from __future__ import annotations

import os
import signal
import statistics
import time
from typing import Callable, Optional

from mkbgrader.parent import judging, quant, sandbox
from mkbgrader.parent.child_task import ChildTask, preload
from mkbgrader.fingerprint import grader_fingerprint
from mkbgrader.parent.retime_request import KernelSpec, child_timeout, parse_request, read_kernel_files
from mkbgrader.parent.retime_stats import EAGER, converged, pair_names, pair_stats
from mkbgrader.parent.settings import RetimeSettings, Settings
from mkbgrader.parent.stage_clock import StageClock
from mkbgrader.parent.verdict import finite_or_none


def _result(kernels: list[KernelSpec], device: str) -> dict:
    return {"ok": False, "error": "", "failed_label": "", "infrastructure_error": False, "device": device,
            "device_name": "", "grader_fingerprint": "", "rounds": 0, "stop": "", "eager_median_s": None,
            "kernels": [{"label": k.label, "dsl": k.dsl, "sha256": "", "median_s": None, "gpu_median_s": None,
                         "slowdown": k.slowdown} for k in kernels],
            "pairs": [], "seconds": 0.0}


def _failed(result: dict, error: str, label: str = "", infrastructure: bool = False) -> dict:
    result["ok"] = False
    result["error"] = error
    result["failed_label"] = label
    result["infrastructure_error"] = infrastructure and not label
    return result


def retime(request: dict, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Runs one retime request (already shape-checked by parse_request); always returns the "retime" object."""
    started = time.monotonic()
    kernels, settings, retime_settings, seed = parse_request(request)
    device = str(request.get("device") or "cpu")
    result = _result(kernels, device)
    result["grader_fingerprint"] = grader_fingerprint()

    def finish(value: dict) -> dict:
        value["seconds"] = round(time.monotonic() - started, 3)
        return finite_or_none(value)

    preload()
    if not os.path.isfile(request["problem"]):
        return finish(_failed(result, f"problem file {request['problem']} does not exist", infrastructure=True))
    if on_stage:
        on_stage("static_check")
    hashes, failure = read_kernel_files(kernels, settings)
    for entry, digest in zip(result["kernels"], hashes):
        entry["sha256"] = digest
    if failure is not None:
        return finish(_failed(result, f"kernel '{failure[0]}': {failure[1]}", failure[0]))

    # Picklable, so a pre-started child can take it.
    work = ChildTask("retime", "retime", (request, kernels, settings, retime_settings, seed))
    clock = StageClock(on_stage)  # the cost of each stage
    memory_limit = sandbox.cpu_memory_limit() if device == "cpu" else None
    bound = child_timeout(settings, retime_settings)
    outcome = sandbox.run_in_child(work, bound, settings.log_cap_bytes, clock, memory_limit)
    built = build(outcome, kernels, settings, retime_settings, result, bound, bool(request.get("trace")))
    built["stage_s"] = clock.seconds()
    return finish(built)


def build(outcome: sandbox.ChildOutcome, kernels: list[KernelSpec], settings: Settings,
          retime_settings: RetimeSettings, result: dict, bound: float, trace: bool = False) -> dict:
    """The retime object from the child's raw messages; every statistic is computed here, outside the child."""
    labels = [k.label for k in kernels]
    functions = labels + [EAGER]
    times: dict[str, list[float]] = {f: [] for f in functions}
    orders: list[list[str]] = []
    seeds: list[int] = []
    sums: list[dict] = []
    gpu: dict[str, list[float]] = {}
    error: Optional[dict] = None
    final = False
    thresholds = None
    for message in outcome.messages:
        kind = message.get("t")
        if kind == "device":
            result["device_name"] = str(message.get("name") or "")
        elif kind == "meta" and isinstance(message.get("meta"), dict):
            thresholds = quant.thresholds_from_meta(message["meta"])
        elif kind == "draw" and message.get("phase") == "correctness":
            leaves = message.get("leaves") or []
            failing = next((leaf for leaf in leaves if not judging.leaf_passes(leaf, thresholds)), None)
            if (message.get("mutation") or failing is not None) and error is None:
                note = message.get("mutation") or judging.mismatch_note(failing, thresholds)
                error = {"label": message.get("label", ""), "stage": "its correctness draw",
                         "message": f"incorrect: {note}", "infrastructure": False}
        elif kind == "round":
            order = [str(x) for x in message.get("order", [])]
            values = message.get("times_s", [])
            if sorted(order) != sorted(functions) or len(values) != len(order):
                continue
            for label, value in zip(order, values):
                times[label].append(float(value))
            orders.append(order)
            seeds.append(int(message.get("seed", 0)))
            if isinstance(message.get("input_sums"), dict):
                sums.append(message["input_sums"])
        elif kind == "gpu":
            samples = [float(x) for x in message.get("samples_s", []) if isinstance(x, (int, float))]
            if samples:
                gpu[str(message.get("label"))] = samples
        elif kind == "error" and error is None:
            error = message
        elif kind == "final":
            final = True

    if outcome.timed_out:
        return _failed(result, f"re-timing exceeded {bound:g} s during stage {outcome.last_stage or 'load'}; the "
                       "process group was killed", infrastructure=True)
    if error is not None:
        infrastructure = bool(error.get("infrastructure"))
        label = "" if infrastructure else str(error.get("label") or "")
        text = str(error.get("message") or "")
        if error.get("rule"):
            text = f"compliance: {error['rule']}: {text}"
        stage = str(error.get("stage") or "")
        prefix = f"kernel '{label}' failed at {stage}: " if label and stage else f"kernel '{label}': " if label \
            else ""
        return _failed(result, prefix + text, label, infrastructure or not label)
    if not final:
        if outcome.exit_signal is not None:
            how = f"was killed by signal {signal.Signals(outcome.exit_signal).name}"
        else:
            how = f"exited with code {outcome.exit_code}"
        label = next((str(m.get("label") or "") for m in reversed(outcome.messages) if m.get("t") == "calling"), "")
        return _failed(result, f"the re-timing process {how} during stage {outcome.last_stage or 'load'} without a "
                       "result" + (f" (while calling kernel '{label}')" if label else ""), label, not label)
    if outcome.garbage:
        return _failed(result, "the re-timing child wrote unreadable results", infrastructure=True)
    rounds = len(orders)
    if rounds == 0:
        return _failed(result, "the re-timing child reported no rounds", infrastructure=True)

    result["rounds"] = rounds
    result["eager_median_s"] = statistics.median(times[EAGER])
    for entry in result["kernels"]:
        entry["median_s"] = statistics.median(times[entry["label"]])
        samples = gpu.get(entry["label"])
        entry["gpu_median_s"] = statistics.median(samples) if samples else None
        entry["gpu_samples"] = len(samples or [])
    result["pairs"] = [pair_stats(times, a, b) for a, b in pair_names(labels)]
    # The stop reason is re-derived from the data (the child's own claim is only a hint).
    if rounds >= retime_settings.min_rounds and converged(times, labels, retime_settings.ci_halfwidth):
        result["stop"] = "converged"
    elif rounds >= retime_settings.max_rounds:
        result["stop"] = "round_limit"
    else:
        result["stop"] = "time_limit"
    result["ok"] = True
    if trace:
        result["trace"] = {"orders": orders, "seeds": [str(s) for s in seeds], "times_s": times,
                           "input_sums": sums}
    return result
