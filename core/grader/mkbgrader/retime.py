"""Paired re-timing (DESIGN §5.5, docs/grader-protocol.md "Paired re-timing"): 2 to 4 kernels and eager timed
interleaved in one sandboxed child, round by round on shared seeds, until every pairwise ratio's CI is tight.

The parent (this module's `retime`) checks the request, runs the static compliance check and hashes each kernel,
forks one child (sandbox.run_in_child, as grading does) and computes every statistic from the child's raw per-round
times. The child (`RetimeEvaluation`) loads the problem, imports every kernel under one runtime guard, gives each
kernel one correctness draw (anchor/allowance rule, output-dependence probe), warms up, then runs the rounds.

Longer than 600 lines because the parent's statistics and the child's rounds are one protocol over one message
stream; split it if a third side joins them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import signal
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from mkbgrader import compliance_static, sandbox, stats
from mkbgrader.settings import Settings, parse_settings

EAGER = "eager"
STOP_RESAMPLES = 200  # resamples of the in-loop convergence test; the reported intervals use stats.RESAMPLES
GPU_CALLS = 5         # extra profiled calls per kernel after the rounds (CUDA only) for gpu_median_s


@dataclass(frozen=True)
class RetimeSettings:
    min_rounds: int = 100
    max_rounds: int = 2000
    max_seconds: float = 60.0
    ci_halfwidth: float = 0.01


@dataclass(frozen=True)
class KernelSpec:
    label: str
    kernel: str
    dsl: str
    descriptor: dict
    slowdown: float


def parse_retime_settings(raw: Any) -> RetimeSettings:
    """The request's "retime" object with defaults; raises ValueError naming the bad key."""
    if raw is None:
        return RetimeSettings()
    if not isinstance(raw, dict):
        raise ValueError("retime must be a JSON object")
    defaults = RetimeSettings()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if not hasattr(defaults, key):
            raise ValueError(f"unknown retime key '{key}' (known: ci_halfwidth, max_rounds, max_seconds, min_rounds)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"retime.{key} must be a number")
        if isinstance(getattr(defaults, key), int):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"retime.{key} must be a positive integer")
        elif value < 0 or (key == "max_seconds" and value == 0):
            raise ValueError(f"retime.{key} must be a {'positive' if key == 'max_seconds' else 'non-negative'} "
                             "number")
        values[key] = float(value) if isinstance(getattr(defaults, key), float) else value
    parsed = RetimeSettings(**{**defaults.__dict__, **values})
    if parsed.max_rounds < parsed.min_rounds:
        raise ValueError(f"retime.max_rounds ({parsed.max_rounds}) is below retime.min_rounds ({parsed.min_rounds})")
    return parsed


def parse_request(request: dict) -> tuple[list[KernelSpec], Settings, RetimeSettings, Optional[int]]:
    """Checks a retime request's shape; raises ValueError with the one-line reason the server replies with."""
    if not isinstance(request.get("problem"), str) or not request["problem"]:
        raise ValueError("retime request lacks problem")
    device = request.get("device", "cpu")
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device must be \"cpu\" or \"cuda[:N]\", not {device!r}")
    if "problem_meta" in request and not isinstance(request["problem_meta"], dict):
        raise ValueError("problem_meta must be a JSON object")
    raw_kernels = request.get("kernels")
    if not isinstance(raw_kernels, list) or not 2 <= len(raw_kernels) <= 4:
        raise ValueError("retime request needs \"kernels\": a list of 2 to 4 kernels")
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
    settings = parse_settings(request.get("settings"))
    retime_settings = parse_retime_settings(request.get("retime"))
    seed = request.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError("seed must be a non-negative integer")
    return kernels, settings, retime_settings, seed


def child_timeout(settings: Settings, retime_settings: RetimeSettings) -> float:
    """The bound of the re-timing child: the grading bound (load, import, correctness, warm-up) plus the rounds'
    time limit plus 60 s for the GPU-time calls and the last convergence test."""
    return settings.timeout_s + retime_settings.max_seconds + 60.0


# ----- the parent ------------------------------------------------------------------------------------------------
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


def pair_stats(times: dict[str, list[float]], a: str, b: str, resamples: int = stats.RESAMPLES) -> dict:
    """The pair (a, b): ratio = median over rounds of time(a)/time(b), its percentile-bootstrap CI and n."""
    ratios = [x / y for x, y in zip(times[a], times[b]) if y > 0 and x > 0]
    if not ratios:
        return {"a": a, "b": b, "ratio": None, "ci_low": None, "ci_high": None, "n": 0}
    ratio, low, high = stats.median_ci(ratios, resamples)
    low, high = min(low, ratio), max(high, ratio)  # a percentile interval of a median holds it; make sure of it
    return {"a": a, "b": b, "ratio": ratio, "ci_low": low, "ci_high": high, "n": len(ratios)}


def pair_names(labels: list[str]) -> list[tuple[str, str]]:
    """Every pair i < j in request order, then each kernel against eager (a = "eager": the kernel's speedup)."""
    pairs = [(labels[i], labels[j]) for i in range(len(labels)) for j in range(i + 1, len(labels))]
    return pairs + [(EAGER, label) for label in labels]


def rotation(k: int, m: int) -> list[int]:
    """The order of round k over m functions: a Williams design. Round k starts with function k mod m; over m rounds
    (2m when m is odd, the second m mirrored) every function holds every position equally often and follows every
    other function directly equally often, so no kernel is always the one called right after eager (on a loaded
    CPU, plain rotation made one of two identical kernels 8-18% slower: the one that followed eager more often)."""
    base, low, high = [0], 1, m - 1
    while len(base) < m:
        base.append(low)
        low += 1
        if len(base) < m:
            base.append(high)
            high -= 1
    mirrored = m % 2 == 1 and (k // m) % 2 == 1
    return [((k - b) if mirrored else (k + b)) % m for b in base]


def design_period(m: int) -> int:
    """Rounds in one Williams block: m, or 2m when m is odd (the block and its mirror)."""
    return m if m % 2 == 0 else 2 * m


def block_labelling(seed: int, m: int) -> list[int]:
    """Which function plays each index of the Williams square during one block, drawn afresh per block from the
    seed of the block's first round. The square balances position and the direct predecessor, but not what ran two
    or more calls before: with 3 kernels and eager (m = 4), index 1 never has eager two calls back while indices 0
    and 2 do, and on a loaded CPU three identical kernels came out 1-5% apart by their place in the request.
    A fresh labelling per block keeps each block's balance exact and spreads those longer carry-overs evenly."""
    labelling = list(range(m))
    random.Random(seed).shuffle(labelling)
    return labelling


def round_order(k: int, m: int, labelling: list[int]) -> list[int]:
    """The functions of round k in calling order: the Williams row of round k under its block's labelling."""
    return [labelling[i] for i in rotation(k, m)]


def converged(times: dict[str, list[float]], labels: list[str], halfwidth: float,
              resamples: int = STOP_RESAMPLES) -> bool:
    """The adaptive stop's test: every pair's CI within ratio × (1 ± halfwidth)."""
    for a, b in pair_names(labels):
        pair = pair_stats(times, a, b, resamples)
        if pair["ratio"] is None or not stats.within(pair["ratio"], pair["ci_low"], pair["ci_high"], halfwidth):
            return False
    return True


def retime(request: dict, on_stage: Optional[Callable[[str], None]] = None) -> dict:
    """Runs one retime request (already shape-checked by parse_request); always returns the "retime" object."""
    from mkbgrader.fingerprint import grader_fingerprint
    from mkbgrader.grade import _cpu_memory_limit, preload

    started = time.monotonic()
    kernels, settings, retime_settings, seed = parse_request(request)
    device = str(request.get("device") or "cpu")
    result = _result(kernels, device)
    result["grader_fingerprint"] = grader_fingerprint()

    def finish(value: dict) -> dict:
        from mkbgrader.verdict import finite_or_none

        value["seconds"] = round(time.monotonic() - started, 3)
        return finite_or_none(value)

    preload()
    if not os.path.isfile(request["problem"]):
        return finish(_failed(result, f"problem file {request['problem']} does not exist", infrastructure=True))
    if on_stage:
        on_stage("static_check")
    for spec, entry in zip(kernels, result["kernels"]):
        try:
            with open(spec.kernel, "rb") as handle:
                raw = handle.read(settings.max_kernel_bytes + 1)
        except OSError as error:
            return finish(_failed(result, f"kernel '{spec.label}': cannot read {spec.kernel}: {error.strerror}",
                                  spec.label))
        entry["sha256"] = hashlib.sha256(raw).hexdigest() if len(raw) <= settings.max_kernel_bytes else ""
        if len(raw) > settings.max_kernel_bytes:
            return finish(_failed(result, f"kernel '{spec.label}': kernel.py is over the limit of "
                                  f"{settings.max_kernel_bytes} bytes", spec.label))
        finding = compliance_static.check_source(raw.decode("utf-8", "replace"), spec.descriptor,
                                                 settings.max_kernel_bytes)
        if finding is not None:
            rule = "" if finding.rule == "syntax" else f"compliance: {finding.rule}: "
            return finish(_failed(result, f"kernel '{spec.label}': {rule}{finding.detail}", spec.label))

    work = functools.partial(_work, request, kernels, settings, retime_settings, seed)  # picklable: a pre-started
    #                                                                                     child can take it
    stage_marks: list[tuple[str, float]] = []  # (stage, when the child entered it): the cost of each stage

    def on_message(message: dict) -> None:
        if message.get("t") == "stage":
            stage_marks.append((str(message.get("stage")), time.monotonic()))
            if on_stage:
                on_stage(str(message.get("stage")))

    memory_limit = _cpu_memory_limit() if device == "cpu" else None
    bound = child_timeout(settings, retime_settings)
    outcome = sandbox.run_in_child(work, bound, settings.log_cap_bytes, on_message, memory_limit)
    built = build(outcome, kernels, settings, retime_settings, result, bound, bool(request.get("trace")))
    ends = [when for _, when in stage_marks[1:]] + [time.monotonic()]
    built["stage_s"] = {stage: round(end - when, 3) for (stage, when), end in zip(stage_marks, ends)}
    return finish(built)


def _work(request: dict, kernels: list[KernelSpec], settings: Settings, retime_settings: RetimeSettings,
          seed: Optional[int], send: Callable[[dict], None]) -> None:
    """The child's whole job (module level, so that it can be handed to a pre-started child)."""
    RetimeEvaluation(request, kernels, settings, retime_settings, seed, send).run()


def request_dsls(request: dict) -> list[tuple[str, dict]]:
    """The distinct (dsl, descriptor) pairs of a well-formed retime request's kernels, sorted."""
    found: dict[tuple[str, str], tuple[str, dict]] = {}
    for item in request.get("kernels") or []:
        if isinstance(item, dict) and isinstance(item.get("dsl"), str):
            descriptor = item.get("dsl_descriptor") if isinstance(item.get("dsl_descriptor"), dict) else {}
            found.setdefault((item["dsl"], json.dumps(descriptor, sort_keys=True, default=str)),
                             (item["dsl"], descriptor))
    return [found[key] for key in sorted(found)]


def build(outcome: sandbox.ChildOutcome, kernels: list[KernelSpec], settings: Settings,
          retime_settings: RetimeSettings, result: dict, bound: float, trace: bool = False) -> dict:
    """The retime object from the child's raw messages; every statistic is computed here, outside the child."""
    from mkbgrader import compare, quant

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
            failing = next((leaf for leaf in leaves if not compare.leaf_passes(leaf, thresholds)), None)
            if (message.get("mutation") or failing is not None) and error is None:
                note = message.get("mutation") or compare.mismatch_note(failing, thresholds)
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


# ----- the child -------------------------------------------------------------------------------------------------
class _DslLaunches:
    """What one DSL adapter sees as the guard: every launch goes through the shared guard, but only launches of the
    DSL of the kernel being called count for that call's no_launch rule."""

    def __init__(self, owner: "RetimeEvaluation", guard: Any, adapter_name: str) -> None:
        self.owner = owner
        self.guard = guard
        self.adapter_name = adapter_name

    def launch(self, args: Any, run: Callable[[], Any]) -> Any:
        result = self.guard.launch(args, run)
        if self.owner.current_adapter != self.adapter_name:
            self.guard.launches -= 1  # another DSL's launch does not count for this kernel
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.guard, name)


class _Slot:
    def __init__(self, spec: KernelSpec, adapter_name: str) -> None:
        self.spec = spec
        self.adapter_name = adapter_name
        self.solve: Any = None
        self.timed_solve: Any = None  # solve plus the slowdown delay, when one is asked for
        self.warmup_s: list[float] = []


def _make_evaluation_class() -> type:
    """RetimeEvaluation subclasses evaluate.Evaluation, which imports torch: built on first use in the child."""
    from mkbgrader import evaluate

    class _RetimeEvaluation(evaluate.Evaluation):
        def __init__(self, request: dict, kernels: list[KernelSpec], settings: Settings,
                     retime_settings: RetimeSettings, seed: Optional[int], send: Callable[[dict], None]) -> None:
            super().__init__(request, settings, self._send_labelled)
            self.outer_send = send
            self.specs = kernels
            self.retime_settings = retime_settings
            self.seed_source = random.Random(seed) if seed is not None else None
            self.trace = bool(request.get("trace"))
            self.current_label = ""
            self.current_adapter = ""
            self.labelling: list[int] = []  # the current Williams block's labelling (block_labelling)

        def _send_labelled(self, message: dict) -> None:
            if self.current_label and "label" not in message:
                message = {**message, "label": self.current_label}
            self.outer_send(message)

        def _next_seed(self) -> int:
            from mkbgrader import draws

            return self.seed_source.getrandbits(63) if self.seed_source is not None else draws.fresh_seed()

        def run(self) -> None:
            from mkbgrader.compliance_runtime import ComplianceViolation
            from mkbgrader.evaluate import StageFailure, one_line

            try:
                self._run()
            except ComplianceViolation as violation:
                self.send({"t": "error", "stage": self.stage, "rule": violation.rule, "message": violation.detail,
                           "infrastructure": False})
            except StageFailure as failure:
                self.send({"t": "error", "stage": self.stage, "message": str(failure),
                           "infrastructure": failure.infrastructure})
            except BaseException as error:  # the grader's own bug, or a kernel's exception escaping a guard
                from mkbgrader import memory

                if getattr(self, "solve_ran", False) and memory.breaks_context(error):
                    self.send({"t": "error", "stage": self.stage, "infrastructure": False,
                               "message": self._broken_by_candidate("the grader", error)})
                else:
                    self.send({"t": "error", "stage": self.stage, "message": "grader error: " + one_line(error),
                               "infrastructure": not self.current_label})
            self.current_label = ""
            self.send({"t": "final"})

        def _use(self, slot: Optional[_Slot]) -> None:
            label = slot.spec.label if slot else ""
            if label != self.current_label:  # who runs next, so a crash that leaves no message can be attributed
                self.outer_send({"t": "calling", "label": label})
            self.current_label = label
            self.current_adapter = slot.adapter_name if slot else ""
            if slot is not None:
                self.solve = slot.solve
                self.dsl = slot.adapter_name

        def _run(self) -> None:
            import threading

            import torch

            from mkbgrader import compare, compliance_runtime, contract, draws, memory, timing
            from mkbgrader.dsls import adapter_for
            from mkbgrader.evaluate import StageFailure, load_module, one_line

            self.enter("load")
            memory.configure_allocator(self.device)
            self._set_up_device()
            if self.device.startswith("cuda"):
                self.send({"t": "device", "name": torch.cuda.get_device_name(torch.device(self.device))})
            else:
                self.send({"t": "device", "name": "cpu"})
            problem = self._load_problem()

            self.enter("import")
            adapters: dict[str, Any] = {}
            slots: list[_Slot] = []
            for spec in self.specs:
                self.current_label = spec.label
                adapter = adapter_for(spec.dsl, spec.descriptor)
                if adapter.name not in adapters:
                    missing = adapter.prepare()
                    if missing:
                        raise StageFailure(missing, False)
                    adapters[adapter.name] = adapter
                slots.append(_Slot(spec, adapter.name))
            self.current_label = ""
            self.guard = compliance_runtime.RuntimeGuard(self.device)
            self.guard.install(problem)
            watched: list[tuple[Any, str]] = []
            for name, adapter in adapters.items():
                watched.extend(adapter.observe(_DslLaunches(self, self.guard, name)))
            import mkbgrader.retime as retime_module

            self.guard.watch_defaults([compare, contract, draws, timing, compliance_runtime, stats, retime_module])
            for owner, name in watched:
                self.guard.watch(owner, name)
            self.clock = timing.Clock(self.device, self.settings.kernel_only_timing)
            self.gpu_timer = timing.GpuTimer(self.device)  # before any kernel is imported, as the clock
            self.sampler = timing.ClockSampler(self.device)
            self.sync = torch.cuda.synchronize if self.device.startswith("cuda") else (lambda: None)
            self.delay = DeviceDelay(self.device)
            self.threads_before = threading.active_count()
            for index, slot in enumerate(slots):
                self._use(slot)
                path = slot.spec.kernel
                try:
                    import sys

                    kernel_dir = os.path.dirname(os.path.abspath(path))
                    if kernel_dir not in sys.path:
                        sys.path.insert(0, kernel_dir)
                    module = load_module(path, f"mkb_retime_kernel_{index}")
                except compliance_runtime.ComplianceViolation:
                    raise
                except SystemExit:
                    raise self.guard.violate("exit", "kernel.py called sys.exit while being imported")
                except BaseException as error:
                    raise StageFailure(f"kernel.py failed to import: {one_line(error)}")
                slot.solve = getattr(module, "solve", None)
                if not callable(slot.solve):
                    raise StageFailure("kernel.py defines no callable solve(*inputs)")
                slot.timed_solve = slot.solve
            self._use(None)

            self.enter("correctness")
            for slot in slots:
                self._use(slot)
                if not self._check_draw("correctness", 0, outlier_seed=None, probe_dependence=True):
                    raise StageFailure("its correctness draw failed (see the draw's mismatch)")
            self._use(None)
            memory.release(self.device)  # the correctness draws' tensors go back before the rounds allocate

            functions: list[Optional[_Slot]] = list(slots) + [None]  # None is eager
            self.enter("warmup")
            for k in range(max(1, self.settings.warmup_draws)):
                self._round(functions, k, self._next_seed(), warmup=True)
            for slot in slots:
                if slot.spec.slowdown > 0:
                    base_s = statistics.median(slot.warmup_s)
                    slot.timed_solve = self.delay.slowed(slot.solve, slot.spec.slowdown * base_s)
                    self.send({"t": "slowdown", "label": slot.spec.label, "delay_s": slot.spec.slowdown * base_s,
                               "base_s": base_s, "how": self.delay.how})
            self.enter("rounds")
            labels = [s.spec.label for s in slots]
            times: dict[str, list[float]] = {f: [] for f in labels + [EAGER]}
            limits = self.retime_settings
            started = time.monotonic()
            next_check = limits.min_rounds
            reason = "round_limit"
            for k in range(limits.max_rounds):
                for label, value in self._round(functions, k, self._next_seed(), warmup=False).items():
                    times[label].append(value)
                done = k + 1
                if done >= next_check:
                    next_check = done + max(10, done // 50)  # the test costs milliseconds: look every 2%
                    if converged(times, labels, limits.ci_halfwidth):
                        reason = "converged"
                        break
                if time.monotonic() - started >= limits.max_seconds and done < limits.max_rounds:
                    reason = "time_limit"
                    break
            self._use(None)
            self.send({"t": "stopped", "reason": reason})
            if self.gpu_timer.available:
                self.enter("gpu_time")
                for slot in slots:
                    self._use(slot)
                    samples = []
                    for _ in range(GPU_CALLS):
                        inputs = self._draw(self._next_seed())
                        gpu_ms, _ = self.gpu_timed_solve(inputs)
                        if gpu_ms is not None:
                            samples.append(gpu_ms * 1e-3)
                    self.send({"t": "gpu", "label": slot.spec.label, "samples_s": samples,
                               "source": self.gpu_timer.source})
                self._use(None)
            self.enter("done")

        def _round(self, functions: list, k: int, seed: int, warmup: bool) -> dict[str, float]:
            """One round: every function once, on its own fresh inputs from this round's seed, in round_order(k) order.
            The inputs are drawn once per round and every function gets its own clone, made right before its call
            (fresh storage, the same values, written just before each call whatever its place in the round).
            make_inputs runs once instead of once per function; at most the drawn set and one clone are alive.
            (On the H200 A/A cells the round limit is reached as often with a clone for every call as with the
            drawn tensors for the last one, 13 of 24: what keeps those CIs wide is base/skill, two identical kernels
            whose per-round ratio depends on which of them went first.)"""
            import torch

            from mkbgrader import draws

            m = len(functions)
            if k % design_period(m) == 0 or len(self.labelling) != m:
                self.labelling = block_labelling(seed, m)
            order = [functions[i] for i in round_order(k, m, self.labelling)]
            result: dict[str, float] = {}
            sums: dict[str, float] = {}
            drawn = self._draw(seed)
            for slot in order:
                inputs = draws.clone_tree(drawn)
                label = slot.spec.label if slot is not None else EAGER
                if self.trace:
                    first = next(iter(t for t in inputs if isinstance(t, torch.Tensor)), None)
                    sums[label] = float(first.double().sum()) if first is not None else 0.0
                if slot is None:
                    self._use(None)
                    with torch.no_grad():
                        elapsed, _ = self.clock.time_call(lambda: self.reference(*inputs))
                else:
                    self._use(slot)
                    self.solve = slot.solve if warmup else slot.timed_solve
                    elapsed, _ = self.timed_solve(inputs)
                    if warmup:
                        slot.warmup_s.append(elapsed * 1e-3)
                result[label] = elapsed * 1e-3
                del inputs  # before the next clone: never three copies of a several-GB input set at once
            self._use(None)
            if not warmup:
                message = {"t": "round", "k": k, "seed": seed, "order": [s.spec.label if s else EAGER for s in order],
                           "times_s": [result[s.spec.label if s else EAGER] for s in order]}
                if self.trace:
                    message["input_sums"] = sums
                self.send(message)
            return result

    return _RetimeEvaluation


def RetimeEvaluation(*args: Any) -> Any:  # noqa: N802 (a factory standing in for the class)
    return _make_evaluation_class()(*args)


class DeviceDelay:
    """The calibration's slowdown (A/B control): a busy delay after a kernel's call, inside the timed region.

    On CUDA it enqueues torch.cuda._sleep (a spin of N SM cycles) on the current stream, so the final device-wide
    synchronisation waits for it; N comes from the delay and the spin's measured cycles per second (timed with CUDA
    events once). On CPU it busy-waits on perf_counter. References are taken before any candidate is imported.
    """

    def __init__(self, device: str) -> None:
        self.cuda = device.startswith("cuda")
        self.perf_counter = time.perf_counter
        self.how = "busy_wait"
        self.cycles_per_s = 0.0
        if self.cuda:
            import torch

            self.sleep = getattr(torch.cuda, "_sleep", None)
            self.how = "torch.cuda._sleep" if self.sleep is not None else "busy_wait"
            if self.sleep is not None:
                self.cycles_per_s = self._calibrate(torch)

    def _calibrate(self, torch: Any) -> float:
        cycles = 2_000_000
        rates = []
        for _ in range(3):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            self.sleep(cycles)
            end.record()
            end.synchronize()
            elapsed_s = start.elapsed_time(end) * 1e-3
            if elapsed_s > 0:
                rates.append(cycles / elapsed_s)
        return sorted(rates)[len(rates) // 2] if rates else 1.5e9

    def slowed(self, solve: Callable[..., Any], delay_s: float) -> Callable[..., Any]:
        if delay_s <= 0:
            return solve
        if self.cuda and self.sleep is not None:
            sleep, cycles = self.sleep, max(1, int(delay_s * self.cycles_per_s))

            def slowed_cuda(*inputs: Any) -> Any:
                output = solve(*inputs)
                sleep(cycles)
                return output

            return slowed_cuda
        clock = self.perf_counter

        def slowed_cpu(*inputs: Any) -> Any:
            output = solve(*inputs)
            until = clock() + delay_s
            while clock() < until:
                pass
            return output

        return slowed_cpu
