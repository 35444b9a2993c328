"""Validating a problem (issue 4): its reference is deterministic for a seed, its outputs are not near zero and
change with every tensor input, and its eager time clears the launch-overhead target.

The problem's code runs only in the sandboxed child, which sends raw numbers; the parent judges them with the
grading contract (compare.leaf_passes → contract.allowance: one definition) and words the findings.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable, Optional

from mkbgrader import sandbox, timing
from mkbgrader.settings import Settings

# A reference's eager median below this is dominated by launch overhead (DESIGN §3: ≥ 50 µs on the target GPU).
EAGER_TARGET_MS = 0.05
# A floating output whose largest |value| is at most this fraction of the largest |floating input| is near zero.
NEAR_ZERO_FRACTION = 1e-6

STAGES = ["load", "determinism", "sensitivity", "eager_timing", "done"]

Send = Callable[[dict], None]


# ----- the child's side: runs the problem, sends raw numbers ------------------------------------------------------
def _describe(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).replace('torch.', '')}[{','.join(str(s) for s in value.shape)}]"
    text = repr(value)
    return f"{type(value).__name__} = {text if len(text) <= 40 else text[:37] + '...'}"


def _input_names(reference: Callable[..., Any], count: int) -> list[str]:
    names: list[str] = []
    try:
        for parameter in inspect.signature(reference).parameters.values():
            if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                names.append(parameter.name)
    except (TypeError, ValueError):
        pass
    return [names[i] if i < len(names) else f"arg{i}" for i in range(count)]


def _bitwise_equal(a: Any, b: Any) -> bool:
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            return False
        if a.is_floating_point() or a.is_complex():
            same = (a == b) | (torch.isnan(a) & torch.isnan(b))
            return bool(same.all())
        return bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_bitwise_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(_bitwise_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def _first_difference(a: Any, b: Any, path: str) -> str:
    """Where two output trees differ bitwise, in words ("" when identical)."""
    import torch

    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            note = _first_difference(x, y, f"{path}[{i}]")
            if note:
                return note
        return ""
    if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
        for key in a:
            note = _first_difference(a[key], b[key], f"{path}[{key!r}]")
            if note:
                return note
        return ""
    if _bitwise_equal(a, b):
        return ""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype:
        x, y = a.detach().to(torch.float64), b.detach().to(torch.float64)
        differing = int(((x != y) & ~(torch.isnan(x) & torch.isnan(y))).sum())
        diff = (x - y).abs()
        diff = torch.where(torch.isnan(diff), torch.zeros_like(diff), diff)
        largest = float(diff.max()) if diff.numel() else 0.0
        return f"{path} ({_describe(a)}): {differing} of {a.numel()} elements differ, max |diff| {largest:.3g}"
    return f"{path}: {_describe(a)} vs {_describe(b)}"


def _zeros_like_tree(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return torch.zeros_like(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_zeros_like_tree(v) for v in value)
    if isinstance(value, dict):
        return {k: _zeros_like_tree(v) for k, v in value.items()}
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return type(value)(0)
    return value


def _largest_float_input(inputs: list) -> float:
    from mkbgrader import draws

    largest = 0.0
    for tensor in draws.tensors_in(inputs):
        if tensor.is_floating_point() and tensor.numel():
            value = tensor.detach().double().abs()
            value = value[value.isfinite()]
            if value.numel():
                largest = max(largest, float(value.max()))
    return largest


def _validation_work(request: dict, settings: Settings, send: Send) -> None:
    """Everything that touches the problem's code: load, determinism, sensitivity, eager timing."""
    import torch

    from mkbgrader import compare, draws, quant
    from mkbgrader.evaluate import load_module, one_line, set_reference_numerics

    device = str(request.get("device") or "cpu")
    stage = "load"

    def enter(name: str) -> None:
        nonlocal stage
        stage = name
        send({"t": "stage", "stage": name})

    def fail(message: str) -> None:
        send({"t": "error", "stage": stage, "message": message})
        send({"t": "final"})

    enter("load")
    set_reference_numerics()
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            return fail(f"device {device} requested but torch sees no CUDA device")
        torch.cuda.set_device(torch.device(device))
        send({"t": "device", "name": torch.cuda.get_device_name(torch.device(device))})
    try:
        problem = load_module(str(request["problem"]), "mkb_problem")
    except BaseException as error:
        return fail(f"problem {request['problem']} failed to load: {one_line(error)}")
    reference = getattr(problem, "reference", None)
    make_inputs = getattr(problem, "make_inputs", None)
    if not callable(reference) or not callable(make_inputs):
        return fail(f"problem {request['problem']} lacks reference() or make_inputs()")
    meta = dict(getattr(problem, "MKB_META", {}) or {})
    meta.update(request.get("problem_meta") or {})
    send({"t": "meta", "meta": meta})
    quantized = quant.thresholds_from_meta(meta) is not None

    def draw(seed: int, what: str) -> list:
        try:
            return draws.draw_inputs(make_inputs, device, seed)
        except BaseException as error:
            raise RuntimeError(f"make_inputs failed ({what}): {one_line(error)}")

    def run_reference(inputs: list, what: str, anchor: bool = False) -> Any:
        try:
            with torch.no_grad():
                given = draws.promote_to_float64(inputs) if anchor else draws.clone_tree(inputs)
                return reference(*given)
        except BaseException as error:
            raise RuntimeError(f"reference failed ({what}): {one_line(error)}")

    try:
        enter("determinism")
        seed = draws.fresh_seed()
        first_inputs = draw(seed, "first draw")
        first_output = run_reference(first_inputs, "first draw")
        second_inputs = draw(seed, "second draw with the same seed")
        second_output = run_reference(second_inputs, "second draw with the same seed")
        names = _input_names(reference, len(first_inputs))
        descriptions = [f"input {i} ({names[i]}, {_describe(v)})" for i, v in enumerate(first_inputs)]
        input_note = ""
        if len(first_inputs) != len(second_inputs):
            input_note = f"make_inputs returned {len(first_inputs)} then {len(second_inputs)} inputs"
        else:
            for i, (a, b) in enumerate(zip(first_inputs, second_inputs)):
                if not _bitwise_equal(a, b):
                    input_note = f"{descriptions[i]} differs between two draws with the same seed"
                    break
        output_note = "" if input_note else _first_difference(first_output, second_output, "output")
        send({"t": "determinism", "input_note": input_note, "output_note": output_note,
              "inputs": [{"index": i, "name": names[i], "description": descriptions[i],
                          "tensor": isinstance(v, torch.Tensor)} for i, v in enumerate(first_inputs)]})

        enter("sensitivity")
        base_inputs = first_inputs
        base_output = first_output
        base_anchor = run_reference(base_inputs, "sensitivity base anchor", anchor=True)
        zero_leaves = compare.compare_outputs(_zeros_like_tree(base_output), base_output, base_anchor, False)
        send({"t": "near_zero", "leaves": zero_leaves, "largest_float_input": _largest_float_input(base_inputs)})
        other_inputs = draw(draws.fresh_seed(), "redraw with another seed")
        for i, value in enumerate(base_inputs):
            if not isinstance(value, torch.Tensor):
                continue
            mixed = list(base_inputs)
            mixed[i] = other_inputs[i]
            if _bitwise_equal(value, other_inputs[i]):
                send({"t": "redraw", "index": i, "identical_input": True, "leaves": []})
                continue
            try:
                mixed_output = run_reference(mixed, f"with input {i} redrawn")
                mixed_anchor = run_reference(mixed, f"anchor with input {i} redrawn", anchor=True)
            except RuntimeError as error:
                send({"t": "redraw", "index": i, "identical_input": False, "leaves": [], "error": str(error)})
                continue
            # A stale answer (the output before the redraw) judged against the redrawn reference and anchor: the
            # input matters iff that answer fails the grading contract.
            leaves = compare.compare_outputs(base_output, mixed_output, mixed_anchor, quantized)
            send({"t": "redraw", "index": i, "identical_input": False, "leaves": leaves})
            del mixed, mixed_output, mixed_anchor
        del first_output, second_output, second_inputs, base_output, base_anchor, other_inputs

        enter("eager_timing")
        clock = timing.Clock(device)
        for _ in range(settings.warmup_draws):
            run_reference(draw(draws.fresh_seed(), "warm-up"), "warm-up")
        samples: list[float] = []
        for _ in range(settings.timing_draws):
            inputs = draw(draws.fresh_seed(), "timing")
            with torch.no_grad():
                elapsed, _ = clock.time_call(lambda: reference(*inputs))
            samples.append(elapsed)
        send({"t": "eager", "samples": samples})
    except RuntimeError as error:
        return fail(str(error))
    enter("done")
    send({"t": "final"})


# ----- the parent's side: judges and words ------------------------------------------------------------------------
def _fmt(value: float) -> str:
    return f"{value:.3g}"


def _redraw_finding(leaves: list[dict], thresholds: Optional[dict]) -> tuple[bool, str, Optional[float],
                                                                               Optional[float]]:
    """(changed, words, max |diff| of the most-changed leaf, its allowance) for one redrawn input."""
    from mkbgrader import compare, contract

    best: Optional[tuple[float, str, Optional[float], Optional[float]]] = None  # (ratio, words, diff, allowance)
    for leaf in leaves:
        if compare.leaf_passes(leaf, thresholds):
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
    from mkbgrader import compare, quant

    report: dict = {
        "problem": str(request.get("problem", "")), "device": str(request.get("device") or "cpu"),
        "device_name": "", "stage": outcome.last_stage or "load", "error": "", "timed_out": outcome.timed_out,
        "deterministic": None, "determinism_note": "", "near_zero": None, "near_zero_outputs": [],
        "sensitive": None, "inputs": [], "eager_median_ms": None, "eager_iqr_ms": None, "eager_samples": 0,
        "eager_target_ms": eager_target_ms, "eager_ok": None, "issues": [], "clean": False,
        "seconds": round(outcome.seconds, 3), "log": outcome.log[-4096:],
    }
    meta: dict = dict(request.get("problem_meta") or {})
    inputs: dict[int, dict] = {}
    redraws: list[dict] = []
    near_zero: Optional[dict] = None
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
                                               "allowance": None, "note": "not a tensor: not redrawn"
                                               if not entry.get("tensor") else ""}
        elif kind == "near_zero":
            near_zero = message
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
            zero_passes = compare.leaf_passes(leaf, None)
            tiny = leaf["kind"] == "float" and leaf["anchor_max_abs"] <= floor
            if zero_passes or tiny:
                what = ("an all-zeros answer passes the grading contract" if zero_passes else
                        f"max |value| {_fmt(leaf['anchor_max_abs'])} ≤ {NEAR_ZERO_FRACTION:g} × the largest "
                        f"|floating input| ({_fmt(floor)})")
                if leaf["kind"] == "exact":
                    what = "every element is zero, so an all-zeros answer passes"
                report["near_zero_outputs"].append(f"{leaf['path']} ({leaf['dtype']}) is near zero: {what}")
        report["near_zero"] = bool(report["near_zero_outputs"])
        issues.extend(report["near_zero_outputs"])

    for message in redraws:
        index = int(message["index"])
        entry = inputs.setdefault(index, {"index": index, "name": f"arg{index}", "description": f"input {index}",
                                          "tensor": True, "changed": None, "exempt": False, "max_diff": None,
                                          "allowance": None, "note": ""})
        entry["exempt"] = index in exempt
        if message.get("error"):
            entry["changed"] = None
            entry["note"] = str(message["error"])
            issues.append(f"{entry['description']}: cannot be redrawn alone: {message['error']}")
            continue
        if message.get("identical_input"):
            entry["changed"] = False
            entry["note"] = "a redraw with another seed gives the same values (fixed structure)"
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
    if redraws or (inputs and not any(e.get("tensor") for e in inputs.values())):
        report["sensitive"] = report["near_zero"] is False and all(
            e["changed"] or (e["exempt"] and e["changed"] is False) for e in report["inputs"] if e.get("tensor"))
    elif near_zero is not None:
        report["sensitive"] = report["near_zero"] is False

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
        how = (f"was killed by signal {outcome.exit_signal}" if outcome.exit_signal is not None
               else f"exited with code {outcome.exit_code}")
        report["error"] = f"the validation process {how} during stage {report['stage']} without a result"
    elif outcome.garbage:
        report["error"] = "the validation child wrote unreadable results"
    if report["error"]:
        issues.insert(0, report["error"])
    report["clean"] = not issues and final and report["deterministic"] is True and report["sensitive"] is True \
        and report["eager_ok"] is not False
    return report


def validate(request: dict, settings: Settings, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Validates request["problem"] on request["device"]; always returns a report dict (never raises)."""
    import os

    from mkbgrader.grade import _cpu_memory_limit, preload

    preload()
    started = time.monotonic()
    target = request.get("eager_target_ms", EAGER_TARGET_MS)
    target = float(target) if isinstance(target, (int, float)) and not isinstance(target, bool) else EAGER_TARGET_MS
    problem_path = str(request.get("problem", ""))
    if not os.path.isfile(problem_path):
        outcome = sandbox.ChildOutcome(messages=[{"t": "error", "stage": "load",
                                                  "message": f"problem file {problem_path} does not exist"}])
        return judge(outcome, request, target)

    def on_message(message: dict) -> None:
        if on_stage and message.get("t") == "stage":
            on_stage(str(message.get("stage")))

    device = str(request.get("device") or "cpu")
    memory_limit = _cpu_memory_limit() if device == "cpu" else None
    outcome = sandbox.run_in_child(lambda send: _validation_work(request, settings, send), settings.timeout_s,
                                   settings.log_cap_bytes, on_message, memory_limit)
    report = judge(outcome, {**request, "timeout_s": settings.timeout_s}, target)
    report["seconds"] = round(time.monotonic() - started, 3)
    return report
