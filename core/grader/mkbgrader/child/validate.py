"""Validating a problem in the child (issue 4): runs the problem's code, in three phases each in a child of its own
(load and determinism with the near-zero check; sensitivity, one input at a time; eager timing), and sends raw
numbers; parent/validate.py starts the phases and judges their messages with the grading contract.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any, Callable, Optional

import torch

from mkbgrader.child import compare, draws, memory, timing, timing_lock
from mkbgrader.child.loading import load_module, one_line, set_reference_numerics
from mkbgrader.parent import quant
from mkbgrader.parent.settings import Settings

# Elements per chunk where validation scans a whole input (64 Mi: at most 512 MiB of float64 temporaries).
_CHUNK = 1 << 26

Send = Callable[[dict], None]


def _describe(value: Any) -> str:
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
        try:
            return draws.draw_inputs(self.make_inputs, self.device, seed)
        except BaseException as error:
            if memory.is_out_of_memory(error):
                words = memory.out_of_memory_words(error, self.budget)
                raise _NoRoom(f"make_inputs ran out of memory ({what}): {words}")
            raise RuntimeError(f"make_inputs failed ({what}): {one_line(error)}")

    def call(self, inputs: list, what: str, anchor: bool = False) -> Any:
        """The reference on `inputs` (promoted to float64 copies for the anchor); its failure in words."""
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


def first_phase(request: dict, seeds: dict, send: Send) -> None:
    """Load, determinism and the near-zero check, holding one input set wherever one suffices."""
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


def sensitivity_phase(request: dict, seeds: dict, start: int, send: Send) -> None:
    """Redraws each tensor input from index `start` on, one at a time. The reference on mixed inputs may break the
    process (a device-side assert breaks the CUDA context for good), so after the first such failure this child
    reports it and stops; the parent goes on in a fresh child from the next input."""
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


def _time_eager(runner: _Runner, settings: Settings) -> list[float]:
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
    return samples


def eager_phase(request: dict, settings: Settings, send: Send) -> None:
    """Eager timing of the reference on fresh inputs, one draw alive at a time, in a child of its own."""
    runner = _Runner(request, send)
    try:
        runner.open(announce=False, expandable=False)
        runner.enter("eager_timing")
        with timing_lock.held(request.get("device_lock")):  # no pre-started child warms up beside these timings
            samples = _time_eager(runner, settings)
        send({"t": "eager", "samples": samples})
    except _NoRoom as error:
        return runner.fail(f"cannot time the eager reference: {error}")
    except RuntimeError as error:
        return runner.fail(str(error))
    runner.enter("done")
    send({"t": "final"})
