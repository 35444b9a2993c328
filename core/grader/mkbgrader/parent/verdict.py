"""Assembling the verdict in the parent from the child's raw messages (DESIGN §5.1 fields, all 0 on failure)."""

from __future__ import annotations

import math
import signal
from typing import Any, Optional

from mkbgrader.parent import judging, quant, roofline, stats, timing
from mkbgrader.parent.sandbox import ChildOutcome
from mkbgrader.parent.settings import Settings

STAGES = ["load", "static_check", "import", "correctness", "outliers", "warmup", "timing", "recheck", "roofline",
          "done"]


def empty_verdict() -> dict:
    return {
        "imported": False, "correct": False, "passed": False, "speedup_vs_eager": 0.0,
        "stage": "load", "error": "", "infrastructure_error": False, "timed_out": False,
        "correct_draws": 0, "total_draws": 0, "failed_draws": [], "mismatch": "", "compliant": True, "compliance_rule": "",
        "kernel_median_ms": None, "eager_median_ms": None, "kernel_iqr_ms": None, "eager_iqr_ms": None,
        "throttled": False, "throttled_samples": 0, "sm_clock_mhz_median": None, "kernel_only_timing": False,
        "outliers_correct": None, "outlier_mismatch": "", "recheck_correct": None, "quant": None, "roofline": None,
        "eval_seconds": 0.0, "log": "", "log_bytes": 0,
        "speedup_ci_low": None, "speedup_ci_high": None, "gpu_median_ms": None, "gpu_time_source": "none",
        "gpu_samples": 0, "boundary": "", "slowdown": 0.0, "slowdown_delay_ms": None,
    }


def finite_or_none(value: Any) -> Any:
    """Strict JSON: non-finite floats become null, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_none(v) for v in value]
    return value


def fail(verdict: dict, stage: str, error: str, infrastructure: bool = False, rule: str = "") -> dict:
    verdict["stage"] = stage
    verdict["error"] = error
    verdict["infrastructure_error"] = infrastructure
    if rule:
        verdict["compliant"] = False
        verdict["compliance_rule"] = rule
    verdict["correct"] = False
    verdict["passed"] = False
    verdict["speedup_vs_eager"] = 0.0
    verdict["speedup_ci_low"] = verdict["speedup_ci_high"] = None  # no speedup, no interval
    return verdict


def static_failure(rule: str, detail: str, log_seconds: float = 0.0) -> dict:
    verdict = empty_verdict()
    verdict["eval_seconds"] = log_seconds
    if rule == "syntax":
        return fail(verdict, "static_check", detail)
    return fail(verdict, "static_check", f"compliance: {rule}: {detail}", rule=rule)


def _worst_quant(leaves: list[dict], current: Optional[dict]) -> Optional[dict]:
    for leaf in leaves:
        if leaf.get("kind") != "quant":
            continue
        if current is None or leaf["cosine"] < current["cosine"]:
            current = {k: leaf[k] for k in ("cosine", "relative_l1", "rmse", "finite")}
    return current


def build(outcome: ChildOutcome, settings: Settings, peaks: Optional[dict], meta: Optional[dict],
          correctness_only: bool = False) -> dict:
    """The verdict for one evaluation; every judgement on numbers happens here, outside the child. With
    `correctness_only` (the pooled correctness draws, which time nothing) a kernel whose draws all held is correct,
    with no error, but not passed: passing takes a timing."""
    verdict = empty_verdict()
    verdict["eval_seconds"] = round(outcome.seconds, 3)
    verdict["log"] = outcome.log[-4096:] if len(outcome.log) > 4096 else outcome.log
    verdict["log_bytes"] = outcome.log_bytes
    verdict["kernel_only_timing"] = settings.kernel_only_timing
    verdict["boundary"] = settings.boundary
    thresholds = quant.thresholds_from_meta(meta or {})
    stage = "load"
    error: Optional[dict] = None
    final = False
    correctness: dict[int, bool] = {}
    outlier_results: list[bool] = []
    recheck_results: list[bool] = []
    timings: Optional[dict] = None
    raw_roofline: Optional[dict] = None
    quant_worst: Optional[dict] = None
    for message in outcome.messages:
        kind = message.get("t")
        if kind == "stage":
            stage = str(message.get("stage"))
        elif kind == "imported":
            verdict["imported"] = True
        elif kind == "draw":
            leaves = message.get("leaves") or []
            ok = not message.get("mutation") and all(judging.leaf_passes(l, thresholds) for l in leaves)
            failing = next((l for l in leaves if not judging.leaf_passes(l, thresholds)), None)
            phase = message.get("phase")
            if thresholds is not None and phase == "correctness":
                quant_worst = _worst_quant(leaves, quant_worst)
            note = message.get("mutation") or (judging.mismatch_note(failing, thresholds) if failing else "")
            if phase == "correctness":
                correctness[int(message.get("index", len(correctness)))] = ok
                if not ok and not verdict["mismatch"]:
                    verdict["mismatch"] = f"draw {int(message.get('index', 0)) + 1}: {note}"
            elif phase == "outliers":
                outlier_results.append(ok)
                if not ok and not verdict["outlier_mismatch"]:
                    verdict["outlier_mismatch"] = f"outlier draw {int(message.get('index', 0)) + 1}: {note}"
            elif phase == "recheck":
                recheck_results.append(ok)
                if not ok and not verdict["mismatch"]:
                    verdict["mismatch"] = f"timing draw {int(message.get('index', 0)) + 1} (re-check): {note}"
        elif kind == "timings":
            timings = message
        elif kind == "gpu_times":
            gpu_ms = [float(x) for x in message.get("gpu_ms", []) if isinstance(x, (int, float)) and x > 0]
            verdict["gpu_samples"] = len(gpu_ms)
            verdict["gpu_median_ms"] = timing.median(gpu_ms)
            verdict["gpu_time_source"] = str(message.get("source") or "none") if gpu_ms else "none"
        elif kind == "slowdown":  # mkb calibrate's slowed copy: the delay added to every timed call
            verdict["slowdown_delay_ms"] = float(message.get("delay_s") or 0.0) * 1e3
        elif kind == "roofline":
            raw_roofline = message
        elif kind == "error" and error is None:
            error = message
        elif kind == "final":
            final = True

    verdict["total_draws"] = settings.correctness_draws
    verdict["correct_draws"] = sum(1 for ok in correctness.values() if ok)
    # Every correctness draw that did not hold, or never reported (0-based): lets a caller that pooled several
    # gradings' draws into one evaluation say exactly which of them held.
    verdict["failed_draws"] = [i for i in range(settings.correctness_draws) if not correctness.get(i, False)]
    if outlier_results:
        verdict["outliers_correct"] = all(outlier_results)
    if recheck_results:
        verdict["recheck_correct"] = all(recheck_results)
    if quant_worst is not None:
        verdict["quant"] = {**{k: quant_worst[k] for k in ("cosine", "relative_l1", "rmse")},
                            "passed": quant.passes(quant_worst, thresholds or {})}
    if timings is not None:
        kernel = [float(x) for x in timings.get("kernel_ms", [])]
        eager = [float(x) for x in timings.get("eager_ms", [])]
        verdict["kernel_median_ms"] = timing.median(kernel)
        verdict["eager_median_ms"] = timing.median(eager)
        paired = [(e, k) for e, k in zip(eager, kernel) if e > 0 and k > 0]
        if len(paired) >= 2 and len(eager) == len(kernel):
            # The speedup's 95% percentile-bootstrap interval over the paired draws (eager and kernel on one seed).
            _, verdict["speedup_ci_low"], verdict["speedup_ci_high"] = stats.ratio_of_medians_ci(
                [e for e, _ in paired], [k for _, k in paired])
        verdict["kernel_iqr_ms"] = timing.iqr(kernel)
        verdict["eager_iqr_ms"] = timing.iqr(eager)
        flags = [bool(x) for x in timings.get("throttled", [])]
        verdict["throttled_samples"] = sum(flags)
        verdict["throttled"] = any(flags)
        clocks = [float(c) for c in timings.get("clock_mhz", []) if isinstance(c, (int, float))]
        verdict["sm_clock_mhz_median"] = timing.median(clocks)
    verdict["stage"] = outcome.last_stage or stage

    # Failures, in order of precedence: timeout, silent death, reported error, wrong answers.
    if outcome.timed_out:
        verdict["timed_out"] = True
        return finite_or_none(fail(verdict, verdict["stage"], f"evaluation exceeded {settings.timeout_s:g} s "
                                    f"during stage {verdict['stage']}; the process group was killed"))
    if error is not None:
        infrastructure = bool(error.get("infrastructure"))
        rule = str(error.get("rule") or "")
        text = str(error.get("message") or "")
        if rule:
            text = f"compliance: {rule}: {text}"
        return finite_or_none(fail(verdict, str(error.get("stage") or verdict["stage"]), text, infrastructure, rule))
    if not final:
        if outcome.exit_signal is not None:
            how = f"was killed by signal {signal.Signals(outcome.exit_signal).name}"
        else:
            how = f"exited with code {outcome.exit_code}"
        infrastructure = verdict["stage"] == "load"
        return finite_or_none(fail(verdict, verdict["stage"], f"the evaluation process {how} during stage "
                                    f"{verdict['stage']} without a result", infrastructure))
    if outcome.garbage:
        return finite_or_none(fail(verdict, verdict["stage"], "the evaluation child wrote unreadable results",
                                    True))
    verdict["correct"] = bool(correctness) and all(correctness.values()) and \
        len(correctness) == settings.correctness_draws and verdict["recheck_correct"] is not False
    if not verdict["correct"]:
        return finite_or_none(fail(verdict, "correctness" if verdict["recheck_correct"] is not False else "recheck",
                                    "incorrect: " + verdict["mismatch"]))
    if correctness_only:
        verdict["stage"] = "done"
        return finite_or_none(verdict)
    if verdict["kernel_median_ms"] is None:
        return finite_or_none(fail(verdict, verdict["stage"], "timing did not complete"))
    verdict["passed"] = True
    verdict["speedup_vs_eager"] = timing.speedup(verdict["eager_median_ms"], verdict["kernel_median_ms"])
    verdict["roofline"] = roofline.roofline(raw_roofline or {}, verdict["kernel_median_ms"], peaks,
                                            verdict["gpu_median_ms"])
    verdict["stage"] = "done"
    return finite_or_none(verdict)
