"""The evaluation child's work: load, import, correctness, outliers, warm-up, timing, re-check, roofline.

Runs only inside the forked child. It reports raw numbers and notes through `send`; the parent (parent/grade.py,
parent/verdict.py) judges them.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import threading
from typing import Any, Callable, Optional, Sequence

import torch

from mkbgrader.child import boundary, compare, compliance_runtime, draws, memory, outliers, roofline, timing, timing_lock
from mkbgrader.child.compliance_runtime import ComplianceViolation
from mkbgrader.child.delay import DeviceDelay
from mkbgrader.child.dsls import adapter_for
from mkbgrader.child.loading import StageFailure, load_module, one_line, set_reference_numerics
from mkbgrader.parent import contract, judging, quant
from mkbgrader.parent import timing as timing_stats
from mkbgrader.parent.sandbox import freeze_heap
from mkbgrader.parent.settings import Settings

Send = Callable[[dict], None]

# The grader's own modules whose functions the tampering check watches during an evaluation.
GRADER_MODULES = (compare, judging, contract, quant, draws, timing, timing_stats, compliance_runtime, boundary)


class Evaluation:
    def __init__(self, request: dict, settings: Settings, send: Send) -> None:
        self.request = request
        self.settings = settings
        self.send = send
        self.device: str = request.get("device") or "cpu"
        self.stage = "load"
        self.imported = False
        self.solve_ran = False  # from the first solve call on, a broken CUDA context is the candidate's doing
        self.inplace: list[int] = []  # inputs the problem declares as outputs written in place (MKB_META)

    def enter(self, stage: str) -> None:
        self.stage = stage
        self.send({"t": "stage", "stage": stage})

    def run(self) -> None:
        try:
            self._run()
        except ComplianceViolation as violation:
            self.send({"t": "error", "stage": self.stage, "rule": violation.rule, "message": violation.detail,
                       "infrastructure": False, "imported": self.imported})
        except StageFailure as failure:
            self.send({"t": "error", "stage": self.stage, "message": str(failure),
                       "infrastructure": failure.infrastructure, "imported": self.imported})
        except BaseException as error:  # the grader's own bug: an infrastructure error, never a crash
            if self.solve_ran and memory.breaks_context(error):
                self.send({"t": "error", "stage": self.stage, "message": self.broken_by_candidate("the grader", error),
                           "infrastructure": False, "imported": self.imported})
            else:
                self.send({"t": "error", "stage": self.stage, "message": "grader error: " + one_line(error),
                           "infrastructure": True, "imported": self.imported})
        self.send({"t": "final"})

    # ----- stages ------------------------------------------------------------------------------------------
    def load_problem(self) -> Any:
        """Imports the request's problem, keeps its reference() and make_inputs(), and sends its MKB_META (the
        request's problem_meta over it); a problem that fails to load or lacks either function is an
        infrastructure StageFailure naming it. Shared by grading and re-timing."""
        try:
            problem = load_module(self.request["problem"], "mkb_problem")
        except BaseException as error:
            raise StageFailure(f"problem {self.request['problem']} failed to load: {one_line(error)}", True)
        self.reference = getattr(problem, "reference", None)
        self.make_inputs = getattr(problem, "make_inputs", None)
        if not callable(self.reference) or not callable(self.make_inputs):
            raise StageFailure(f"problem {self.request['problem']} lacks reference() or make_inputs()", True)
        meta = dict(getattr(problem, "MKB_META", {}) or {})
        meta.update(self.request.get("problem_meta") or {})
        self.meta = meta
        self.send({"t": "meta", "meta": meta})
        self.quant_thresholds = quant.thresholds_from_meta(meta)
        return problem

    def set_up_device(self) -> None:
        """The memory budget, the reference numerics and the CUDA device the request names; a CUDA device that torch
        cannot see is an infrastructure StageFailure. Shared by grading and re-timing."""
        self.budget = memory.Budget(self.device)
        set_reference_numerics()
        if self.device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise StageFailure(f"device {self.device} requested but torch sees no CUDA device", True)
            torch.cuda.set_device(torch.device(self.device))

    def _run(self) -> None:
        self.enter("load")
        # No allocator settings here (validation uses expandable segments): the eager baseline is timed as before.
        self.set_up_device()
        problem = self.load_problem()
        self.enter("import")
        self._prepare(problem)
        self.solve = self.import_kernel(self.request["kernel"], "kernel")
        self.imported = True
        self.send({"t": "imported"})
        if not self._check_correctness():
            return
        with timing_lock.held(self.request.get("device_lock")):  # the next grading's child warms up only beside
            self._time()  # the untimed stages
        self.enter("roofline")
        self._roofline()
        self.enter("done")

    def _prepare(self, problem: Any) -> None:
        """The DSL, the runtime guard over it and the grader, the clocks and the slowed copy's delay: all before the
        candidate is imported, so their references are the grader's own."""
        adapter = adapter_for(self.request.get("dsl", ""), self.request.get("dsl_descriptor") or {})
        missing = adapter.prepare()
        if missing:
            raise StageFailure(missing, False)
        self.start_guard(problem)
        watched = adapter.observe(self.guard)
        self.watch_grader(GRADER_MODULES, watched)
        for name in ("saw", "launch_wrote", "violation", "_check_candidate", "_passes_for"):
            self.guard.watch(boundary.BoundaryRecorder, name)
        self.start_clocks()
        # The calibration's slowed copy (request "slowdown", mkb calibrate only): its delay's references are taken
        # here, before the candidate is imported, as re-timing takes them.
        self.slowdown = float(self.request.get("slowdown") or 0.0)
        self.delay = DeviceDelay(self.device) if self.slowdown > 0 else None
        if self.delay is not None:
            self.guard.watch(DeviceDelay, "slowed")
        self.threads_before = threading.active_count()
        self.dsl = adapter.name
        self.own_stream = adapter.own_stream

    def _check_correctness(self) -> bool:
        """The correctness draws (the first also probes output dependence and the boundary), then the outlier draws;
        True when every correctness draw held."""
        self.enter("correctness")
        all_correct = True
        for index in range(self.settings.correctness_draws):
            ok = self.check_draw("correctness", index, outlier_seed=None, probe_dependence=(index == 0))
            all_correct = all_correct and ok
            if index == 0:
                freeze_heap()  # the first call compiled the candidate's kernels (sandbox.freeze_heap says why)
        positions = outliers.outlier_inputs_allowed(self.meta, 0)
        if self.settings.outliers and positions is not None and self.settings.outlier_draws > 0:
            self.enter("outliers")
            for index in range(self.settings.outlier_draws):
                self.check_draw("outliers", index, outlier_seed=draws.fresh_seed(), probe_dependence=False)
        return all_correct

    # ----- steps grading and re-timing share ---------------------------------------------------------------------
    def start_guard(self, problem: Any) -> None:
        """The runtime guard, its forbidden entry points installed (the problem's own functions among them)."""
        self.guard = compliance_runtime.RuntimeGuard(self.device)
        self.guard.install(problem)

    def watch_grader(self, modules: Sequence[Any], watched: list[tuple[Any, str]]) -> None:
        """The tampering check's watch list: timers and torch's entry points, the grader modules' functions, and
        what the DSL adapters hooked."""
        self.guard.watch_defaults(list(modules))
        for owner, name in watched:
            self.guard.watch(owner, name)

    def start_clocks(self) -> None:
        """The clock, the GPU timer, the clock sampler and the device synchronisation, taken before any candidate is
        imported."""
        self.clock = timing.Clock(self.device, self.settings.kernel_only_timing)
        self.gpu_timer = timing.GpuTimer(self.device)
        self.sampler = timing.ClockSampler(self.device)
        self.sync = torch.cuda.synchronize if self.device.startswith("cuda") else (lambda: None)

    def import_kernel(self, path: str, module_name: str) -> Callable[..., Any]:
        """Imports a kernel.py (its folder first on sys.path, for its own helpers) and returns its solve; an import
        that fails or defines no solve is a StageFailure, an exit during import a violation."""
        try:
            kernel_dir = os.path.dirname(os.path.abspath(path))
            if not sys.path or sys.path[0] != kernel_dir:
                sys.path.insert(0, kernel_dir)
            module = load_module(path, module_name)
        except ComplianceViolation:
            raise
        except SystemExit:
            raise self.guard.violate("exit", "kernel.py called sys.exit while being imported")
        except BaseException as error:
            raise StageFailure(f"kernel.py failed to import: {one_line(error)}")
        solve = getattr(module, "solve", None)
        if not callable(solve):
            raise StageFailure("kernel.py defines no callable solve(*inputs)")
        return solve

    def call_solve(self, inputs: list) -> Any:
        """One solve call with every runtime rule checked afterwards."""
        return self._solve_checked(inputs, None)[1]

    def timed_solve(self, inputs: list) -> tuple[float, Any]:
        """One timed solve call: only solve and the device-wide synchronisation are inside the timed region; the
        runtime rules are checked after the clock stopped, so their cost is never charged to the candidate."""
        elapsed, output = self._solve_checked(inputs, self.clock)
        return float(elapsed or 0.0), output

    def gpu_timed_solve(self, inputs: list) -> tuple[Optional[float], Any]:
        """One solve call under the GPU timer (CUDA activity records, timing.GpuTimer): (GPU ms or None, output).
        The runtime rules are checked as for every call; the profiler's overhead never enters a timed draw."""
        timer = self.gpu_timer
        measured: list[Optional[float]] = [None]

        class GpuClock:
            @staticmethod
            def time_call(call: Callable[[], Any]) -> tuple[float, Any]:
                measured[0], output = timer.time_call(call)
                return 0.0, output

        _, output = self._solve_checked(inputs, GpuClock)
        return measured[0], output

    def _solve_checked(self, inputs: list, clock: Optional[Any]) -> tuple[Optional[float], Any]:
        guard = self.guard
        guard.launches = 0
        self.solve_ran = True
        elapsed: Optional[float] = None
        try:
            with torch.no_grad():
                if clock is not None:
                    elapsed, output = clock.time_call(lambda: self.solve(*inputs))
                else:
                    output = self.solve(*inputs)
            self.sync()
        except ComplianceViolation:
            raise
        except SystemExit:
            raise guard.violate("exit", "solve called sys.exit; it must return its outputs")
        except BaseException as error:
            if guard.violation is not None:
                raise guard.violation
            raise StageFailure(f"solve raised {one_line(error)}")
        if guard.violation is not None:
            raise guard.violation
        tampered = guard.tampered()
        if tampered:
            raise guard.violate("tampering", tampered)
        if guard.launches == 0 and not guard.probing:
            raise guard.violate("no_launch", f"a solve call made no {self.dsl} kernel launch")
        if threading.active_count() > self.threads_before:
            raise guard.violate("threads", "solve left background threads running")
        return elapsed, output

    def broken_by_candidate(self, what: str, error: BaseException) -> str:
        return (f"the CUDA context was broken after the candidate's solve ran: {what} then failed with "
                f"{one_line(error)}; a device-side assert or illegal access in the candidate's kernels (which "
                "CUDA may report late) is the likely cause")

    def _problem_failure(self, what: str, error: BaseException) -> StageFailure:
        """A failure of the problem's own code, attributed honestly: after solve ran, a broken context is the
        candidate's; an allocation failure is the device's room, in bytes; anything else is the problem's."""
        if self.solve_ran and memory.breaks_context(error):
            return StageFailure(self.broken_by_candidate(f"the problem's {what}", error))
        if memory.is_out_of_memory(error):
            return StageFailure(f"cannot grade: {memory.out_of_memory_words(error, self.budget)} while the "
                                f"problem's {what} ran", True)
        return StageFailure(f"the problem's {what} failed: {one_line(error)}", True)

    def reference_pair(self, inputs: list, written: Optional[list] = None) -> tuple[Any, Any]:
        """The reference, then its float64 anchor once the memory for the anchor's inputs is known to be there; when
        every output is compared exactly (draws.exact_only), the reference stands in for the anchor, unread.

        With `written` (a problem's in-place outputs, draws.inplace_outputs), the inputs the reference and the anchor
        wrote at those positions are appended to it as (reference's, anchor's) pairs, to be compared as outputs."""
        reference_inputs = draws.clone_tree(inputs)
        try:
            with torch.no_grad():
                reference = self.reference(*reference_inputs)
        except BaseException as error:
            raise self._problem_failure("reference", error)
        kept = [reference_inputs[i] for i in self.inplace] if written is not None else []
        del reference_inputs
        if draws.exact_only(reference) and draws.exact_only(kept):
            # Every output is compared exactly, against the reference alone: a float64 anchor would be a second run
            # of the reference (the costliest part of a draw for a slow one) whose result nothing reads.
            if written is not None:
                written.extend(zip(kept, kept))
            return reference, reference
        memory.release(self.device)
        no_room = self.budget.shortfall(memory.promoted_bytes(inputs), memory.tensor_bytes(inputs) +
                                        memory.tensor_bytes(reference), "the problem's float64 anchor")
        if no_room:
            raise StageFailure(f"cannot grade: {no_room}", True)
        anchor_inputs = draws.promote_to_float64(inputs)
        try:
            with torch.no_grad():
                anchor = self.reference(*anchor_inputs)
        except BaseException as error:
            raise self._problem_failure("reference (float64 anchor)", error)
        if written is not None:
            written.extend(zip(kept, [anchor_inputs[i] for i in self.inplace]))
        return reference, anchor

    def inplace_leaves(self, candidate_written: list, written: list) -> list[dict]:
        """The declared in-place outputs compared as outputs: each input the candidate wrote against what the
        reference and its anchor wrote at the same position (a problem without them gets none)."""
        leaves: list[dict] = []
        for position, cand, (ref, anchor) in zip(self.inplace, candidate_written, written):
            leaves.extend(compare.compare_outputs(cand, ref, anchor, quantized=self.quant_thresholds is not None,
                                                  path=f"input[{position}] (written in place)"))
        return leaves

    def draw(self, seed: int) -> list:
        try:
            return draws.draw_inputs(self.make_inputs, self.device, seed)
        except BaseException as error:
            raise self._problem_failure("make_inputs", error)

    def check_draw(self, phase: str, index: int, outlier_seed: Optional[int], probe_dependence: bool) -> bool:
        memory.release(self.device)  # the previous draw's tensors go back before this draw allocates
        seed = draws.fresh_seed()
        inputs = self.draw(seed)
        if outlier_seed is not None:
            positions = outliers.outlier_inputs_allowed(self.meta, len(inputs)) or []
            p, scale = outliers.outlier_rates(self.meta, self.settings.outlier_p, self.settings.outlier_scale)
            outliers.inject_outliers(inputs, positions, p, scale, outlier_seed)
        self.inplace = draws.inplace_outputs(self.meta, len(inputs))
        given = draws.clone_tree(inputs)
        output = self.call_solve(given)
        launches = self.guard.launches
        mutation = draws.mutation_note(inputs, given, self.inplace)
        candidate_written = [given[i] for i in self.inplace]
        del given  # the candidate's copy is spent: the anchor needs the room
        written: list = []
        reference, anchor = self.reference_pair(inputs, written if self.inplace else None)
        leaves = compare.compare_outputs(output, reference, anchor, quantized=self.quant_thresholds is not None)
        leaves += self.inplace_leaves(candidate_written, written)
        self.send({"t": "draw", "phase": phase, "index": index, "leaves": leaves, "mutation": mutation,
                   "launches": launches})
        if mutation and phase == "correctness":
            raise StageFailure(f"draw {index + 1}: {mutation}")
        if probe_dependence:
            if self.inplace:  # what the candidate wrote into its inputs counts as returned output
                output = (output, *candidate_written)
                reference = (reference, *[ref for ref, _ in written])
                anchor = (anchor, *[anc for _, anc in written])
            self._probe(inputs, output, reference, anchor)
        return not mutation and all(judging.leaf_passes(leaf, self.quant_thresholds) for leaf in leaves)

    def _probe(self, inputs: list, output: Any, reference: Any, anchor: Any) -> None:
        """One more solve call on a clone of the draw's inputs with the DSL's results poisoned (output dependence)
        and every eager op watched (the implementation boundary, settings.boundary)."""
        guard = self.guard
        recorder = boundary.BoundaryRecorder(self.settings.boundary, lambda: guard.in_launch, reference, anchor,
                                             self.quant_thresholds, self.dsl, foreign=lambda: guard.foreign)
        mode = boundary.dispatch_mode(recorder)
        given = draws.clone_tree(inputs)  # cloned outside the mode: the grader's own copies are no eager results
        recorder.inputs_are(given)
        guard.probing = True
        guard.on_written = recorder.launch_wrote
        try:
            if mode is not None:
                with mode:
                    probed = self.call_solve(given)
            else:
                probed = self.call_solve(given)
            guard.poison_deferred()
            if self.inplace:
                probed = (probed, *[given[i] for i in self.inplace])
        finally:
            guard.probing = False
            guard.on_written = None
            guard.deferred_poison.clear()
        if compliance_runtime.outputs_identical(output, probed):
            raise guard.violate("launch_unused", f"no returned output depends on what the {self.dsl} kernels wrote "
                                "(poisoning their results changed nothing)")
        found = recorder.violation(compliance_runtime.dependent_leaves(output, probed)) if mode is not None else None
        if found is not None:
            raise guard.violate(*found)

    def _time(self) -> None:
        settings = self.settings
        self.enter("warmup")
        warmup_ms: list[float] = []
        for _ in range(max(settings.warmup_draws, 1 if self.delay is not None else 0)):
            seed = draws.fresh_seed()
            if self.delay is not None:  # the slowed copy's delay is sized from these calls' median
                warmup_ms.append(self.timed_solve(self.draw(seed))[0])
            else:
                self.call_solve(self.draw(seed))
            with torch.no_grad():
                self.reference(*self.draw(seed))
        if self.delay is not None:
            self._slow_down(warmup_ms)
        self.enter("timing")
        recheck = set(random.SystemRandom().sample(range(settings.timing_draws), settings.recheck_draws))
        kernel_ms: list[float] = []
        eager_ms: list[float] = []
        clocks: list[Optional[float]] = []
        throttled: list[bool] = []
        rechecked: list[tuple[int, list, Any]] = []
        for index in range(settings.timing_draws):
            seed = draws.fresh_seed()
            inputs = self.draw(seed)
            kept = self.park(inputs, len(recheck) - len(rechecked)) if index in recheck else None
            elapsed, output = self.timed_solve(inputs)
            if kept is not None and self.inplace:  # the in-place outputs are re-checked with the returned ones
                output = (output, memory.moved([inputs[i] for i in self.inplace], "cpu"))
            del inputs
            kernel_ms.append(elapsed)
            clock, slow = self.sampler.sample()
            clocks.append(clock)
            throttled.append(slow)
            if kept is not None:
                rechecked.append((index, kept, output))
            del output
            eager_inputs = self.draw(seed)
            with torch.no_grad():
                elapsed, _ = self.clock.time_call(lambda: self.reference(*eager_inputs))
            eager_ms.append(elapsed)
            del eager_inputs
        self.send({"t": "timings", "kernel_ms": kernel_ms, "eager_ms": eager_ms, "clock_mhz": clocks,
                   "throttled": throttled, "kernel_only": settings.kernel_only_timing,
                   "persisting_l2_reset": self.clock.persisting_reset is not None})
        self.enter("recheck")
        gpu_ms: list[float] = []
        while rechecked:  # each parked set goes back as soon as its re-check is done
            index, kept, output = rechecked.pop(0)
            memory.release(self.device)
            if not memory.is_on(kept, self.device):  # parked on the host: brought back once
                kept = memory.moved(kept, self.device)
            if self.gpu_timer.available:  # GPU time of a call on this re-checked draw's inputs (CUDA only)
                measured, _ = self.gpu_timed_solve(draws.clone_tree(kept))  # a copy: the call may write into it
                if measured is not None:
                    gpu_ms.append(measured)
                memory.release(self.device)
            written: list = []
            reference, anchor = self.reference_pair(kept, written if self.inplace else None)
            candidate_written: list = []
            if self.inplace:
                output, candidate_written = output[0], memory.moved(output[1], self.device)
            leaves = compare.compare_outputs(output, reference, anchor, quantized=self.quant_thresholds is not None)
            leaves += self.inplace_leaves(candidate_written, written)
            self.send({"t": "draw", "phase": "recheck", "index": index, "leaves": leaves, "mutation": "",
                       "launches": 1})
        self.send({"t": "gpu_times", "gpu_ms": gpu_ms, "source": self.gpu_timer.source if gpu_ms else "none"})
        self.last_inputs = self.draw(draws.fresh_seed())

    def park(self, inputs: list, sets_left: int) -> list:
        """A pristine copy of a timing draw's inputs, kept for its re-check (the call may write into the ones it is
        given). It stays on the device when this set and the `sets_left - 1` still to come fit there beside the
        re-check's float64 anchor and a second set of inputs, with a quarter of the device free besides
        (memory.fits_uncrowded): a device copy takes milliseconds, where parking 4 GiB on the host took 2.5-2.9 s and
        bringing it back 0.5 s on an H100 (docs/design.md §5.4). Otherwise it goes to the host."""
        size = memory.tensor_bytes(inputs)
        needed = sets_left * size + memory.promoted_bytes(inputs) + size
        place = self.device if memory.fits_uncrowded(self.budget, needed) else "cpu"
        return memory.moved(inputs, place)

    def _slow_down(self, warmup_ms: list[float]) -> None:
        """Makes this grading time a slowed copy of the kernel (mkb calibrate's A/B control): from here on every solve
        call is followed by a device-side delay of slowdown × the warm-up median, inside the timed region, exactly
        as re-timing slows a kernel (delay.DeviceDelay)."""
        base_s = statistics.median(warmup_ms) * 1e-3
        delay_s = self.slowdown * base_s
        self.solve = self.delay.slowed(self.solve, delay_s, self.own_stream)
        self.send({"t": "slowdown", "slowdown": self.slowdown, "delay_s": delay_s, "base_s": base_s,
                   "how": self.delay.how_for(self.own_stream)})

    def _roofline(self) -> None:
        inputs = self.last_inputs
        with torch.no_grad():
            outputs = self.reference(*draws.clone_tree(inputs))
        bytes_moved = self.meta.get("bytes") or draws.total_bytes(inputs) + draws.total_bytes(outputs)
        flops = self.meta.get("flops")
        if flops is None:
            try:
                flops = roofline.count_flops(self.reference, draws.clone_tree(inputs))
            except Exception:
                flops = None
        self.send({"t": "roofline", "bytes": bytes_moved, "flops": flops,
                   "dtype": roofline.dominant_dtype(draws.tensors_in(inputs))})


def evaluate(request: dict, settings: Settings, send: Send) -> None:
    Evaluation(request, settings, send).run()
