"""Validating a problem from the parent's side (issue 4): its reference is deterministic for a seed, its outputs are
not near zero and change with every tensor input, and its eager time clears the launch-overhead target.

The problem's code runs only in sandboxed children (child/validate.py), which send raw numbers; the parent judges
them with the grading contract (judging.leaf_passes → contract.allowance: one definition) and words the findings.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Callable, Optional

from mkbgrader.parent import contract, judging, quant, sandbox, timing
from mkbgrader.parent.child_task import ChildTask, preload
from mkbgrader.parent.seeds import fresh_seed
from mkbgrader.parent.settings import EAGER_TARGET_MS, Settings

# A floating output whose largest |value| is at most this fraction of the largest |floating input| is near zero.
NEAR_ZERO_FRACTION = 1e-6


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _redraw_finding(leaves: list[dict], thresholds: Optional[dict]) -> tuple[bool, str, Optional[float],
                                                                               Optional[float]]:
    """(changed, words, max |diff| of the most-changed leaf, its allowance) for one redrawn input."""
    best: Optional[tuple[float, str, Optional[float], Optional[float]]] = None  # (ratio, words, diff, allowance)
    for leaf in leaves:
        if judging.leaf_passes(leaf, thresholds):
            continue
        kind = leaf["kind"]
        if kind == "structure":
            candidate = (float("inf"), f"{leaf['path']} changed structure ({leaf['note']})", None, None)
        elif kind == "exact":
            candidate = (float("inf"), f"{leaf['path']} changed in {leaf['mismatches']} of {leaf['count']} elements",
                         None, None)
        elif kind == "quant":
            candidate = (float("inf"), f"{leaf['path']} changed (cosine {_fmt(leaf['cosine'])} against the "
                                       f"previous output)", None, None)
        else:
            limit = contract.allowance(leaf["ref_err"], leaf["dtype"], leaf["anchor_max_abs"])
            diff = leaf["cand_err"]
            ratio = diff / limit if limit > 0 else float("inf")
            candidate = (ratio, f"{leaf['path']} changed, max |diff| {_fmt(diff)} > allowance {_fmt(limit)}",
                         diff, limit)
        if best is None or candidate[0] > best[0]:
            best = candidate
    if best is not None:
        return True, best[1], best[2], best[3]
    # Unchanged: report the float leaf that came closest, so the author sees by how much it missed.
    closest: Optional[tuple[float, float, float, str]] = None
    for leaf in leaves:
        if leaf["kind"] == "float":
            limit = contract.allowance(leaf["ref_err"], leaf["dtype"], leaf["anchor_max_abs"])
            ratio = leaf["cand_err"] / limit if limit > 0 else 0.0
            if closest is None or ratio > closest[0]:
                closest = (ratio, leaf["cand_err"], limit, leaf["path"])
    if closest is not None:
        return False, (f"output unchanged within the grading allowance (largest change {_fmt(closest[1])} in "
                       f"{closest[3]}, allowance {_fmt(closest[2])})"), closest[1], closest[2]
    return False, "output unchanged", None, None


def _insensitive_positions(meta: dict) -> set[int]:
    raw = meta.get("insensitive") if isinstance(meta, dict) else None
    if not isinstance(raw, list):
        return set()
    return {int(i) for i in raw if isinstance(i, int) and not isinstance(i, bool)}


def judge(outcome: sandbox.ChildOutcome, request: dict, eager_target_ms: float) -> dict:
    """The validation report from the child's raw messages (every judgement happens here, outside the child)."""
    report: dict = {
        "problem": str(request.get("problem", "")), "device": str(request.get("device") or "cpu"),
        "device_name": "", "stage": outcome.last_stage or "load", "error": "", "timed_out": outcome.timed_out,
        "deterministic": None, "determinism_note": "", "near_zero": None, "near_zero_outputs": [],
        "sensitive": None, "inputs": [], "eager_median_ms": None, "eager_iqr_ms": None, "eager_samples": 0,
        "eager_target_ms": eager_target_ms, "eager_ok": None, "issues": [], "clean": False,
        "seconds": round(outcome.seconds, 3), "log": outcome.log[-4096:], "notes": [],
    }
    meta: dict = dict(request.get("problem_meta") or {})
    inputs: dict[int, dict] = {}
    redraws: list[dict] = []
    near_zero: Optional[dict] = None
    near_zero_skipped = ""
    eager: Optional[list[float]] = None
    error: Optional[dict] = None
    final = False
    for message in outcome.messages:
        kind = message.get("t")
        if kind == "meta" and isinstance(message.get("meta"), dict):
            meta = {**message["meta"], **(request.get("problem_meta") or {})}
        elif kind == "device":
            report["device_name"] = str(message.get("name") or "")
        elif kind == "determinism":
            input_note, output_note = str(message.get("input_note") or ""), str(message.get("output_note") or "")
            report["deterministic"] = not input_note and not output_note
            if input_note:
                report["determinism_note"] = "make_inputs is not deterministic for a seed: " + input_note
            elif output_note:
                report["determinism_note"] = ("the reference is not deterministic: two runs on identical inputs "
                                              "differ in " + output_note)
            for entry in message.get("inputs") or []:
                inputs[int(entry["index"])] = {**entry, "changed": None, "exempt": False, "max_diff": None,
                                               "allowance": None, "skipped": "", "error": False,
                                               "note": "not a tensor: not redrawn" if not entry.get("tensor") else ""}
        elif kind == "near_zero":
            near_zero = message
        elif kind == "near_zero_skipped":
            near_zero_skipped = str(message.get("reason") or "")
        elif kind == "note":
            report["notes"].append(str(message.get("note") or ""))
        elif kind == "redraw":
            redraws.append(message)
        elif kind == "eager":
            eager = [float(x) for x in message.get("samples") or []]
        elif kind == "error" and error is None:
            error = message
        elif kind == "final":
            final = True

    thresholds = quant.thresholds_from_meta(meta)
    exempt = _insensitive_positions(meta)
    issues: list[str] = report["issues"]
    if report["deterministic"] is False:
        issues.append(report["determinism_note"])

    if near_zero is not None:
        floor = NEAR_ZERO_FRACTION * max(1.0, float(near_zero.get("largest_float_input") or 0.0))
        for leaf in near_zero.get("leaves") or []:
            if leaf["kind"] == "structure":
                continue
            zero_passes = judging.leaf_passes(leaf, thresholds)
            largest = {"float": leaf.get("anchor_max_abs"), "quant": leaf.get("ref_max_abs")}.get(leaf["kind"])
            tiny = largest is not None and largest <= floor
            if zero_passes or tiny:
                what = ("an all-zeros answer passes the grading contract" if zero_passes else
                        f"max |value| {_fmt(largest)} ≤ {NEAR_ZERO_FRACTION:g} × the largest "
                        f"|floating input| ({_fmt(floor)})")
                if leaf["kind"] == "exact":
                    what = "every element is zero, so an all-zeros answer passes"
                report["near_zero_outputs"].append(f"{leaf['path']} ({leaf['dtype']}) is near zero: {what}")
        report["near_zero"] = bool(report["near_zero_outputs"])
        issues.extend(report["near_zero_outputs"])
    elif near_zero_skipped:
        issues.append(f"cannot check for near-zero outputs because {near_zero_skipped}")

    for message in redraws:
        index = int(message["index"])
        entry = inputs.setdefault(index, {"index": index, "name": f"arg{index}", "description": f"input {index}",
                                          "tensor": True, "changed": None, "exempt": False, "max_diff": None,
                                          "allowance": None, "skipped": "", "error": False, "note": ""})
        entry["exempt"] = index in exempt
        if message.get("skipped"):
            entry["changed"] = None
            entry["skipped"] = str(message["skipped"])
            entry["note"] = f"not checked: {message['skipped']}"
            issues.append(f"cannot check sensitivity of {entry['description']} because {message['skipped']}")
            continue
        if message.get("error"):
            entry["error"] = True
            entry["changed"] = None
            entry["note"] = str(message["error"])
            issues.append(f"{entry['description']}: cannot be redrawn alone: {message['error']}")
            continue
        if message.get("identical_input"):
            # Every seed draws the same values: redrawing cannot show whether the output depends on this input, so
            # it is not checked (null), not found insensitive. MetaKernelBench's files carry no MKB_META to say so.
            if entry["exempt"]:
                entry["changed"] = False
                entry["note"] = "a redraw with another seed gives the same values (fixed structure; listed in " \
                                "MKB_META[\"insensitive\"])"
                continue
            entry["changed"] = None
            entry["skipped"] = "every seed draws the same values (fixed structure)"
            entry["note"] = f"not checked: {entry['skipped']}"
            issues.append(f"cannot check sensitivity of {entry['description']} because {entry['skipped']}; if "
                          f"the input is structural, list {index} in MKB_META[\"insensitive\"]")
            continue
        else:
            changed, words, diff, limit = _redraw_finding(message.get("leaves") or [], thresholds)
            entry["changed"], entry["note"], entry["max_diff"], entry["allowance"] = changed, words, diff, limit
        if not entry["changed"]:
            if entry["exempt"]:
                entry["note"] += " (listed in MKB_META[\"insensitive\"])"
            else:
                issues.append(f"{entry['description']}: {entry['note']}; if the input is structural, list {index} "
                              "in MKB_META[\"insensitive\"]")
    report["inputs"] = [inputs[i] for i in sorted(inputs)]
    if redraws or near_zero is not None or near_zero_skipped or (inputs and not any(
            e.get("tensor") for e in inputs.values())):
        tensors = [e for e in report["inputs"] if e.get("tensor")]
        failed = report["near_zero"] is True or any(
            e.get("error") or (e["changed"] is False and not e["exempt"]) for e in tensors)
        unchecked = report["near_zero"] is None or any(e["changed"] is None for e in tensors)
        # Not checked is not "insensitive": a step that could not run leaves the answer open (null).
        report["sensitive"] = False if failed else (None if unchecked else True)

    if eager:
        report["eager_median_ms"] = timing.median(eager)
        report["eager_iqr_ms"] = timing.iqr(eager)
        report["eager_samples"] = len(eager)
        report["eager_ok"] = report["eager_median_ms"] >= eager_target_ms
        if not report["eager_ok"]:
            issues.append(f"eager median {report['eager_median_ms']:.4g} ms is below the {eager_target_ms:g} ms "
                          "target: launch overhead dominates; enlarge the workload")

    if outcome.timed_out:
        report["error"] = (f"validation exceeded {float(request.get('timeout_s') or 0):g} s during stage "
                           f"{report['stage']}; the process group was killed")
    elif error is not None:
        report["error"] = f"{error.get('message')} (stage {error.get('stage')})"
    elif not final:
        how = _how_it_ended(outcome)
        report["error"] = f"the validation process {how} during stage {report['stage']} without a result"
    elif outcome.garbage:
        report["error"] = "the validation child wrote unreadable results"
    if report["error"]:
        issues.insert(0, report["error"])
    report["clean"] = not issues and final and report["deterministic"] is True and report["sensitive"] is True \
        and report["eager_ok"] is not False
    return report


def _how_it_ended(outcome: sandbox.ChildOutcome) -> str:
    if outcome.exit_signal is not None:
        try:
            name = signal.Signals(outcome.exit_signal).name
        except ValueError:
            name = str(outcome.exit_signal)
        return f"was killed by signal {name}"
    return f"exited with code {outcome.exit_code}"


def _finished(outcome: sandbox.ChildOutcome) -> bool:
    return any(m.get("t") == "final" for m in outcome.messages) and not any(
        m.get("t") == "error" for m in outcome.messages)


def validate(request: dict, settings: Settings, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Validates request["problem"] on request["device"]; always returns a report dict (never raises).

    The steps run in separate forked children, so a step that breaks its process (a device-side assert leaves the
    CUDA context unusable) cannot break the steps after it: load and determinism; sensitivity, restarted in a fresh
    child after each input whose redraw made the reference fail; eager timing. Each child starts with an empty
    CUDA allocator, so memory one step fragmented is not lost to the next."""
    preload()
    started = time.monotonic()
    target = request.get("eager_target_ms", EAGER_TARGET_MS)
    target = float(target) if isinstance(target, (int, float)) and not isinstance(target, bool) else EAGER_TARGET_MS
    problem_path = str(request.get("problem", ""))
    if not os.path.isfile(problem_path):
        outcome = sandbox.ChildOutcome(messages=[{"t": "error", "stage": "load",
                                                  "message": f"problem file {problem_path} does not exist"}])
        return judge(outcome, request, target)

    forwarded: list[str] = []

    def on_message(message: dict) -> None:  # each stage once, though several children enter "sensitivity"
        stage = str(message.get("stage"))
        if on_stage and message.get("t") == "stage" and (not forwarded or forwarded[-1] != stage):
            forwarded.append(stage)
            on_stage(stage)

    device = str(request.get("device") or "cpu")
    memory_limit = sandbox.cpu_memory_limit() if device == "cpu" else None
    deadline = started + settings.timeout_s
    seeds = {"base": fresh_seed(), "other": fresh_seed()}
    merged = sandbox.ChildOutcome()
    logs: list[str] = []

    def run_step(work: ChildTask) -> Optional[sandbox.ChildOutcome]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            merged.timed_out = True
            return None
        outcome = sandbox.run_in_child(work, remaining, settings.log_cap_bytes, on_message, memory_limit)
        logs.append(outcome.log)
        merged.log_bytes += outcome.log_bytes
        merged.garbage += outcome.garbage
        merged.timed_out = merged.timed_out or outcome.timed_out
        merged.last_stage = outcome.last_stage or merged.last_stage
        merged.exit_code, merged.exit_signal = outcome.exit_code, outcome.exit_signal
        return outcome

    def keep(outcome: sandbox.ChildOutcome) -> None:
        merged.messages.extend(m for m in outcome.messages if m.get("t") not in ("final", "sensitivity_done"))

    completed = False
    first = run_step(ChildTask("validate", "first_phase", (request, seeds)))
    if first is not None:
        keep(first)
    if first is not None and _finished(first) and not first.timed_out:
        start = 0
        sensitivity_ok = True
        while True:
            step = run_step(ChildTask("validate", "sensitivity_phase", (request, seeds, start)))
            if step is None:
                sensitivity_ok = False
                break
            keep(step)
            if step.timed_out or any(m.get("t") == "error" for m in step.messages):
                sensitivity_ok = False
                break
            if any(m.get("t") == "sensitivity_done" for m in step.messages):
                break
            begun = [int(m["index"]) for m in step.messages if m.get("t") == "redraw_begin"]
            reported = {int(m["index"]) for m in step.messages if m.get("t") == "redraw"}
            if not begun:  # died before its first input: nothing to attribute it to
                merged.messages.append({"t": "error", "stage": "sensitivity", "message": (
                    f"the validation process {_how_it_ended(step)} during stage sensitivity without a result")})
                sensitivity_ok = False
                break
            if begun[-1] not in reported:  # the child died inside this input's step: that input is the finding
                merged.messages.append({"t": "redraw", "index": begun[-1], "identical_input": False, "leaves": [],
                                        "error": f"the validation process {_how_it_ended(step)} while the "
                                                 "reference ran on it"})
            start = begun[-1] + 1
        if sensitivity_ok:
            eager = run_step(ChildTask("validate", "eager_phase", (request, settings)))
            if eager is not None:
                keep(eager)
                completed = _finished(eager) and not eager.timed_out
    if completed:
        merged.messages.append({"t": "final"})
    merged.log = "".join(logs)[-settings.log_cap_bytes:] if settings.log_cap_bytes else ""
    merged.seconds = time.monotonic() - started
    report = judge(merged, {**request, "timeout_s": settings.timeout_s}, target)
    report["seconds"] = round(time.monotonic() - started, 3)
    return report
