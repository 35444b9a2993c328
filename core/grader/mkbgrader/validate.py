"""Validating a problem (issue 4): its reference is deterministic for a seed, its outputs are not near zero and
change with every tensor input, and its eager time clears the launch-overhead target.

The problem's code runs only in the sandboxed child, which sends raw numbers; the parent judges them with the
grading contract (compare.leaf_passes → contract.allowance: one definition) and words the findings.

Longer than 600 lines because the child's phases (determinism, near zero, sensitivity, eager time) and the parent's
judgement of their messages are one protocol; a candidate for a split into a child module and a judging module.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable, Optional

from mkbgrader import memory, sandbox, timing
from mkbgrader.settings import Settings

# A reference's eager median below this is dominated by launch overhead (DESIGN §3: ≥ 50 µs on the target GPU).
EAGER_TARGET_MS = 0.05
# A floating output whose largest |value| is at most this fraction of the largest |floating input| is near zero.
NEAR_ZERO_FRACTION = 1e-6

STAGES = ["load", "determinism", "sensitivity", "eager_timing", "done"]
# Elements per chunk where validation scans a whole input (64 Mi: at most 512 MiB of float64 temporaries).
_CHUNK = 1 << 26

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
        if torch.equal(a, b):
            return True
        if not (a.is_floating_point() or a.is_complex()):
            return False
        # NaN equals NaN; in chunks, so a multi-GB cache costs no full-size masks.
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)
        for begin in range(0, flat_a.numel(), _CHUNK):
            x, y = flat_a[begin:begin + _CHUNK], flat_b[begin:begin + _CHUNK]
            if not bool(((x == y) | (torch.isnan(x) & torch.isnan(y))).all()):
                return False
        return True
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

    import torch

    largest = 0.0
    for tensor in draws.tensors_in(inputs):
        if tensor.is_floating_point() and tensor.numel():
            # Chunk by chunk, flat, in the tensor's own width: value[value.isfinite()] on a float64 copy of a bf16
            # [29441, 64, 8, 128] cache asked for nonzero()'s int64 [N, 4] index, 32 bytes an element: 57.5 GiB.
            flat = tensor.detach().reshape(-1)
            for begin in range(0, flat.numel(), _CHUNK):
                value = flat[begin:begin + _CHUNK]
                if value.element_size() == 1:  # fp8 has no abs kernel; every fp8 value is a float32 value
                    value = value.float()
                value = value.abs()
                value = torch.where(value.isfinite(), value, torch.zeros_like(value))
                largest = max(largest, float(value.max()))
    return largest


class _NoRoom(RuntimeError):
    """A step ran out of memory: reported as "cannot check X because ...", never as the validation's failure."""


class _Runner:
    """The problem's code inside one child: loading it, drawing inputs, calling the reference and its anchor."""

    def __init__(self, request: dict, send: Send) -> None:
        self.request = request
        self.send = send
        self.device = str(request.get("device") or "cpu")
        self.stage = "load"

    def enter(self, name: str) -> None:
        self.stage = name
        self.send({"t": "stage", "stage": name})

    def fail(self, message: str) -> None:
        self.send({"t": "error", "stage": self.stage, "message": message})
        self.send({"t": "final"})

    def open(self, announce: bool, expandable: bool = True) -> None:
        """Loads the problem; raises RuntimeError with the validation's error in words. `expandable`: expandable
        allocator segments (checks that hold large sets); eager timing keeps the allocator grading times with."""
        import torch

        from mkbgrader import quant
        from mkbgrader.evaluate import load_module, one_line, set_reference_numerics

        if expandable:
            memory.configure_allocator(self.device)
        set_reference_numerics()
        if self.device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise RuntimeError(f"device {self.device} requested but torch sees no CUDA device")
            torch.cuda.set_device(torch.device(self.device))
            if announce:
                self.send({"t": "device", "name": torch.cuda.get_device_name(torch.device(self.device))})
        self.budget = memory.Budget(self.device)
        problem_path = str(self.request["problem"])
        try:
            problem = load_module(problem_path, "mkb_problem")
        except BaseException as error:
            raise RuntimeError(f"problem {problem_path} failed to load: {one_line(error)}")
        self.reference = getattr(problem, "reference", None)
        self.make_inputs = getattr(problem, "make_inputs", None)
        if not callable(self.reference) or not callable(self.make_inputs):
            raise RuntimeError(f"problem {problem_path} lacks reference() or make_inputs()")
        meta = dict(getattr(problem, "MKB_META", {}) or {})
        meta.update(self.request.get("problem_meta") or {})
        if announce:
            self.send({"t": "meta", "meta": meta})
        self.meta = meta
        self.quantized = quant.thresholds_from_meta(meta) is not None

    def draw(self, seed: int, what: str) -> list:
        from mkbgrader import draws
        from mkbgrader.evaluate import one_line

        try:
            return draws.draw_inputs(self.make_inputs, self.device, seed)
        except BaseException as error:
            if memory.is_out_of_memory(error):
                words = memory.out_of_memory_words(error, self.budget)
                raise _NoRoom(f"make_inputs ran out of memory ({what}): {words}")
            raise RuntimeError(f"make_inputs failed ({what}): {one_line(error)}")

    def call(self, inputs: list, what: str, anchor: bool = False) -> Any:
        """The reference on `inputs` (promoted to float64 copies for the anchor); its failure in words."""
        import torch

        from mkbgrader import draws
        from mkbgrader.evaluate import one_line

        try:
            with torch.no_grad():
                if anchor:
                    return self.reference(*draws.promote_to_float64(inputs))
                return self.reference(*inputs)
        except BaseException as error:
            if memory.is_out_of_memory(error):
                raise _NoRoom(f"{memory.out_of_memory_words(error, self.budget)} while the reference ran ({what})")
            raise RuntimeError(f"reference failed ({what}): {one_line(error)}")

    def call_keeping(self, inputs: list, what: str, keep: Optional[list], seed: int,
                     seeds: Optional[dict] = None) -> Any:
        """The reference on `inputs` without copying them (copying every input for every call would hold a second
        input set). An input the reference modified in place (its version counter moved) is drawn again, from
        `seeds[position]` or else `seed`, and put back into `inputs` and, where shared, into `keep`: both stay as
        drawn, so the anchor that follows sees what the reference saw. Inputs the problem declares as written in
        place (MKB_META inplace_outputs) are drawn again whatever their version counter says: some native kernels
        (batch norm's running statistics) write a tensor without moving it."""
        from mkbgrader import draws

        before = _versions(inputs)
        declared = set(draws.inplace_outputs(getattr(self, "meta", {}), len(inputs)))
        output = self.call(inputs, what)
        for position, version in enumerate(_versions(inputs)):
            if version == before[position] and position not in declared:
                continue
            shared = keep is not None and position < len(keep) and keep[position] is inputs[position]
            fresh = self.draw((seeds or {}).get(position, seed),
                              f"restoring input {position} after the reference modified it")
            inputs[position] = fresh[position]
            if shared:
                keep[position] = fresh[position]
            del fresh
        return output


def _versions(inputs: list) -> list[tuple]:
    from mkbgrader import draws

    result: list[tuple] = []
    for value in inputs:
        counts = []
        for tensor in draws.tensors_in(value):
            try:
                counts.append(tensor._version)
            except RuntimeError:  # inference tensors carry no version counter
                counts.append(None)
        result.append(tuple(counts))
    return result


def _digest(value: Any) -> str:
    """SHA-256 over a value's bytes, read in chunks through the host: lets one draw be compared with another without
    holding both on the device."""
    import hashlib

    import torch

    from mkbgrader import draws

    digest = hashlib.sha256()
    for tensor in draws.tensors_in(value):
        digest.update(f"{tensor.dtype}{tuple(tensor.shape)}".encode())
        flat = tensor.detach().reshape(-1)
        if flat.is_complex():
            flat = torch.view_as_real(flat).reshape(-1)
        if flat.dtype == torch.bool:
            flat = flat.to(torch.uint8)
        same_width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[flat.element_size()]
        step = max(1, (64 << 20) // flat.element_size())
        for begin in range(0, flat.numel(), step):
            digest.update(flat[begin:begin + step].view(same_width).cpu().numpy().tobytes())
    if not draws.tensors_in(value):
        digest.update(repr(value).encode())
    return digest.hexdigest()


def _first_phase(request: dict, seeds: dict, send: Send) -> None:
    """Load, determinism and the near-zero check, holding one input set wherever one suffices."""
    import torch

    from mkbgrader import compare

    runner = _Runner(request, send)
    try:
        runner.enter("load")
        runner.open(announce=True)
        runner.enter("determinism")
        seed = int(seeds["base"])
        first = runner.draw(seed, "first draw")
        first_output = runner.call_keeping(first, "first draw", first, seed)
        names = _input_names(runner.reference, len(first))
        descriptions = [f"input {i} ({names[i]}, {_describe(v)})" for i, v in enumerate(first)]
        held = memory.tensor_bytes(first) + memory.tensor_bytes(first_output)
        no_room = runner.budget.shortfall(memory.tensor_bytes(first), held, "a second draw")
        input_note = ""
        if not no_room:
            second = runner.draw(seed, "second draw with the same seed")
            if len(first) != len(second):
                input_note = f"make_inputs returned {len(first)} then {len(second)} inputs"
            else:
                for i, (a, b) in enumerate(zip(first, second)):
                    if not _bitwise_equal(a, b):
                        input_note = f"{descriptions[i]} differs between two draws with the same seed"
                        break
        else:
            # Two draws do not fit: compare the second with the first's digests, then keep the second as the base.
            send({"t": "note", "note": f"determinism: the two draws were compared by SHA-256 because {no_room}"})
            digests = [_digest(v) for v in first]
            count = len(first)
            del first
            memory.release(runner.device)
            second = runner.draw(seed, "second draw with the same seed")
            if count != len(second):
                input_note = f"make_inputs returned {count} then {len(second)} inputs"
            else:
                for i, value in enumerate(second):
                    if _digest(value) != digests[i]:
                        input_note = f"{descriptions[i]} differs between two draws with the same seed (by SHA-256)"
                        break
            first = second
        second_output = runner.call_keeping(second, "second draw with the same seed", None, seed)
        output_note = "" if input_note else _first_difference(first_output, second_output, "output")
        del second, second_output
        memory.release(runner.device)
        send({"t": "determinism", "input_note": input_note, "output_note": output_note,
              "inputs": [{"index": i, "name": names[i], "description": descriptions[i],
                          "tensor": isinstance(v, torch.Tensor)} for i, v in enumerate(first)]})

        runner.enter("sensitivity")
        held = memory.tensor_bytes(first) + memory.tensor_bytes(first_output)
        no_room = runner.budget.shortfall(memory.promoted_bytes(first), held, "its float64 anchor")
        if no_room:
            send({"t": "near_zero_skipped", "reason": no_room})
        else:
            try:
                anchor = runner.call(first, "near-zero anchor", anchor=True)
            except _NoRoom as error:
                send({"t": "near_zero_skipped", "reason": str(error)})
            else:
                # The all-zeros answer is judged as grading judges an answer: by the quant thresholds against the
                # reference where the problem declares them, else by the float contract against the anchor.
                leaves = compare.compare_outputs(_zeros_like_tree(first_output), first_output, anchor,
                                                 runner.quantized)
                send({"t": "near_zero", "leaves": leaves, "largest_float_input": _largest_float_input(first)})
                del anchor
    except _NoRoom as error:
        return runner.fail(f"cannot validate: {error}")
    except RuntimeError as error:
        return runner.fail(str(error))
    send({"t": "final"})


def _sensitivity_phase(request: dict, seeds: dict, start: int, send: Send) -> None:
    """Redraws each tensor input from index `start` on, one at a time. The reference on mixed inputs may break the
    process (a device-side assert breaks the CUDA context for good), so after the first such failure this child
    reports it and stops; the parent goes on in a fresh child from the next input."""
    import torch

    from mkbgrader import compare

    runner = _Runner(request, send)
    try:
        runner.open(announce=False)
        runner.enter("sensitivity")
        base_seed, other_seed = int(seeds["base"]), int(seeds["other"])
        base = runner.draw(base_seed, "sensitivity base draw")
        base_output = runner.call_keeping(base, "sensitivity base draw", base, base_seed)
    except _NoRoom as error:
        return runner.fail(f"cannot check sensitivity: {error}")
    except RuntimeError as error:
        return runner.fail(str(error))
    for i in range(start, len(base)):
        if not isinstance(base[i], torch.Tensor):
            continue
        mixed_output = mixed_anchor = replacement = None  # the previous input's tensors, dropped before this draw
        send({"t": "redraw_begin", "index": i})
        memory.release(runner.device)

        def skip(reason: str) -> None:
            send({"t": "redraw", "index": i, "identical_input": False, "leaves": [], "skipped": reason})

        held = memory.tensor_bytes(base) + memory.tensor_bytes(base_output)
        no_room = runner.budget.shortfall(memory.tensor_bytes(base), held, "redrawing it (one more make_inputs draw)")
        if no_room:
            skip(no_room)
            continue
        try:
            other = runner.draw(other_seed, "redraw with another seed")
        except _NoRoom as error:
            skip(str(error))
            continue
        except RuntimeError as error:
            send({"t": "redraw", "index": i, "identical_input": False, "leaves": [], "error": str(error)})
            send({"t": "final", "stopped_at": i})
            return
        replacement = other[i]
        del other
        memory.release(runner.device)
        if _bitwise_equal(base[i], replacement):
            send({"t": "redraw", "index": i, "identical_input": True, "leaves": []})
            continue
        mixed = list(base)
        mixed[i] = replacement
        stop = False
        try:
            mixed_output = runner.call_keeping(mixed, f"with input {i} redrawn", base, base_seed, {i: other_seed})
            held += memory.tensor_bytes(replacement) + memory.tensor_bytes(mixed_output)
            no_room = runner.budget.shortfall(memory.promoted_bytes(mixed), held, "its float64 anchor")
            if no_room:
                skip(no_room)
                continue
            mixed_anchor = runner.call(mixed, f"anchor with input {i} redrawn", anchor=True)
            # A stale answer (the output before the redraw) judged against the redrawn reference and anchor: the
            # input matters iff that answer fails the grading contract. An asynchronous CUDA error can surface
            # here, in the comparison, rather than in the reference call that caused it.
            leaves = compare.compare_outputs(base_output, mixed_output, mixed_anchor, runner.quantized)
        except _NoRoom as error:
            skip(str(error))
            continue
        except RuntimeError as error:
            send({"t": "redraw", "index": i, "identical_input": False, "leaves": [], "error": str(error)})
            stop = True
        finally:
            del mixed
        if stop:
            send({"t": "final", "stopped_at": i})
            return
        send({"t": "redraw", "index": i, "identical_input": False, "leaves": leaves})
    send({"t": "sensitivity_done"})
    send({"t": "final"})


def _eager_phase(request: dict, settings: Settings, send: Send) -> None:
    """Eager timing of the reference on fresh inputs, one draw alive at a time, in a child of its own."""
    import torch

    from mkbgrader import draws
    from mkbgrader.evaluate import one_line

    runner = _Runner(request, send)
    try:
        runner.open(announce=False, expandable=False)
        runner.enter("eager_timing")
        clock = timing.Clock(runner.device)
        for _ in range(settings.warmup_draws):
            runner.call(runner.draw(draws.fresh_seed(), "warm-up"), "warm-up")
        samples: list[float] = []
        for _ in range(settings.timing_draws):
            inputs = runner.draw(draws.fresh_seed(), "timing")
            try:
                with torch.no_grad():
                    elapsed, output = clock.time_call(lambda: runner.reference(*inputs))
            except BaseException as error:
                if memory.is_out_of_memory(error):
                    raise _NoRoom(f"{memory.out_of_memory_words(error, runner.budget)} while the reference ran "
                                  "(timing)")
                raise RuntimeError(f"reference failed (timing): {one_line(error)}")
            samples.append(elapsed)
            del inputs, output
        send({"t": "eager", "samples": samples})
    except _NoRoom as error:
        return runner.fail(f"cannot time the eager reference: {error}")
    except RuntimeError as error:
        return runner.fail(str(error))
    runner.enter("done")
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
            zero_passes = compare.leaf_passes(leaf, thresholds)
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
            import signal

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
    import os

    from mkbgrader import draws
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

    forwarded: list[str] = []

    def on_message(message: dict) -> None:  # each stage once, though several children enter "sensitivity"
        stage = str(message.get("stage"))
        if on_stage and message.get("t") == "stage" and (not forwarded or forwarded[-1] != stage):
            forwarded.append(stage)
            on_stage(stage)

    device = str(request.get("device") or "cpu")
    memory_limit = _cpu_memory_limit() if device == "cpu" else None
    deadline = started + settings.timeout_s
    seeds = {"base": draws.fresh_seed(), "other": draws.fresh_seed()}
    merged = sandbox.ChildOutcome()
    logs: list[str] = []

    def run_step(work: Callable[[Send], None]) -> Optional[sandbox.ChildOutcome]:
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
    first = run_step(lambda send: _first_phase(request, seeds, send))
    if first is not None:
        keep(first)
    if first is not None and _finished(first) and not first.timed_out:
        start = 0
        sensitivity_ok = True
        while True:
            step = run_step(lambda send, begin=start: _sensitivity_phase(request, seeds, begin, send))
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
            eager = run_step(lambda send: _eager_phase(request, settings, send))
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
