"""Paired re-timing in the child (DESIGN §5.5): load the problem, import every kernel under one runtime guard, give
each kernel one correctness draw (anchor/allowance rule, output-dependence probe), warm up, then time the rounds,
every function on fresh inputs from each round's seed in a balanced order. The parent (parent/retime.py) computes
every statistic from the raw per-round times this sends.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Callable, Optional

import torch

from mkbgrader.child import draws, memory, timing_lock
from mkbgrader.child.kernel_slots import KernelSlots, Slot
from mkbgrader.child.loading import StageFailure
from mkbgrader.parent import retime_stats, stats
from mkbgrader.parent.retime_request import KernelSpec
from mkbgrader.parent.retime_stats import EAGER, converged
from mkbgrader.parent.sandbox import freeze_heap
from mkbgrader.parent.settings import RetimeSettings, Settings

GPU_CALLS = 5  # extra profiled calls per kernel after the rounds (CUDA only) for gpu_median_s


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


class RetimeEvaluation(KernelSlots):
    """The re-timing child: grading's loading, guard, clocks and correctness draw, then the rounds."""

    module_name = "mkb_retime_kernel"

    def __init__(self, request: dict, kernels: list[KernelSpec], settings: Settings, retime_settings: RetimeSettings,
                 seed: Optional[int], send: Callable[[dict], None]) -> None:
        super().__init__(request, kernels, settings, send)
        self.retime_settings = retime_settings
        self.seed_source = random.Random(seed) if seed is not None else None
        self.trace = bool(request.get("trace"))
        self.labelling: list[int] = []  # the current Williams block's labelling (block_labelling)

    def _next_seed(self) -> int:
        return self.seed_source.getrandbits(63) if self.seed_source is not None else draws.fresh_seed()

    def _run(self) -> None:
        self.enter("load")
        memory.configure_allocator(self.device)
        self.set_up_device()
        if self.device.startswith("cuda"):
            self.send({"t": "device", "name": torch.cuda.get_device_name(torch.device(self.device))})
        else:
            self.send({"t": "device", "name": "cpu"})
        problem = self.load_problem()
        self.enter("import")
        slots = self.import_kernels(problem, (stats, retime_stats, sys.modules[__name__]))
        self._check_kernels(slots)
        functions: list[Optional[Slot]] = list(slots) + [None]  # None is eager
        with timing_lock.held(self.request.get("device_lock")):  # no pre-started child warms up beside the rounds
            self._warm_up(functions, slots)
            self._rounds(functions, slots)
            if self.gpu_timer.available:
                self._time_on_gpu(slots)
        self.enter("done")

    def _check_kernels(self, slots: list[Slot]) -> None:
        """One correctness draw per kernel, with the output-dependence and boundary probe; a kernel that fails it
        ends the re-timing."""
        self.enter("correctness")
        for slot in slots:
            self.use(slot)
            if not self.check_draw("correctness", 0, outlier_seed=None, probe_dependence=True):
                raise StageFailure("its correctness draw failed (see the draw's mismatch)")
        self.use(None)
        freeze_heap()  # the first calls compiled the kernels (sandbox.freeze_heap says why)
        memory.release(self.device)  # the correctness draws' tensors go back before the rounds allocate

    def _warm_up(self, functions: list[Optional[Slot]], slots: list[Slot]) -> None:
        """Warm-up rounds; a kernel asked to be slowed gets its delay from its own warm-up median."""
        self.enter("warmup")
        for k in range(max(1, self.settings.warmup_draws)):
            self._round(functions, k, self._next_seed(), warmup=True)
        for slot in slots:
            if slot.spec.slowdown > 0:
                base_s = statistics.median(slot.warmup_s)
                slot.timed_solve = self.delay.slowed(slot.solve, slot.spec.slowdown * base_s, slot.own_stream)
                self.send({"t": "slowdown", "label": slot.spec.label, "delay_s": slot.spec.slowdown * base_s,
                           "base_s": base_s, "how": self.delay.how_for(slot.own_stream)})

    def _rounds(self, functions: list[Optional[Slot]], slots: list[Slot]) -> None:
        """The timed rounds, until every pair has converged (tested every 2% of rounds from min_rounds on), or the
        round or time limit; the stop reason is sent (the parent re-derives it from the times)."""
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
        self.use(None)
        self.send({"t": "stopped", "reason": reason})

    def _time_on_gpu(self, slots: list[Slot]) -> None:
        """GPU_CALLS profiled calls per kernel (CUDA only), for each kernel's GPU time."""
        self.enter("gpu_time")
        for slot in slots:
            self.use(slot)
            samples = []
            for _ in range(GPU_CALLS):
                inputs = self.draw(self._next_seed())
                gpu_ms, _ = self.gpu_timed_solve(inputs)
                if gpu_ms is not None:
                    samples.append(gpu_ms * 1e-3)
            self.send({"t": "gpu", "label": slot.spec.label, "samples_s": samples, "source": self.gpu_timer.source})
        self.use(None)

    def _round(self, functions: list[Optional[Slot]], k: int, seed: int, warmup: bool) -> dict[str, float]:
        """One round: every function once, on its own fresh inputs from this round's seed, in round_order(k) order.
        The inputs are drawn once per round and every function gets its own clone, made right before its call
        (fresh storage, the same values, written just before each call whatever its place in the round).
        make_inputs runs once instead of once per function; at most the drawn set and one clone are alive.
        (On the H200 A/A cells the round limit is reached as often with a clone for every call as with the
        drawn tensors for the last one, 13 of 24: what keeps those CIs wide is base/skill, two identical kernels
        whose per-round ratio depends on which of them went first.)"""
        m = len(functions)
        if k % design_period(m) == 0 or len(self.labelling) != m:
            self.labelling = block_labelling(seed, m)
        order = [functions[i] for i in round_order(k, m, self.labelling)]
        result: dict[str, float] = {}
        sums: dict[str, float] = {}
        drawn = self.draw(seed)
        for slot in order:
            inputs = draws.clone_tree(drawn)
            label = slot.spec.label if slot is not None else EAGER
            if self.trace:
                first = next(iter(t for t in inputs if isinstance(t, torch.Tensor)), None)
                sums[label] = float(first.double().sum()) if first is not None else 0.0
            if slot is None:
                self.use(None)
                with torch.no_grad():
                    elapsed, _ = self.clock.time_call(lambda: self.reference(*inputs))
            else:
                self.use(slot)
                self.solve = slot.solve if warmup else slot.timed_solve
                elapsed, _ = self.timed_solve(inputs)
                if warmup:
                    slot.warmup_s.append(elapsed * 1e-3)
            result[label] = elapsed * 1e-3
            del inputs  # before the next clone: never three copies of a several-GB input set at once
        self.use(None)
        if not warmup:
            message = {"t": "round", "k": k, "seed": seed, "order": [s.spec.label if s else EAGER for s in order],
                       "times_s": [result[s.spec.label if s else EAGER] for s in order]}
            if self.trace:
                message["input_sums"] = sums
            self.send(message)
        return result


def retime(request: dict, kernels: list[KernelSpec], settings: Settings, retime_settings: RetimeSettings,
           seed: Optional[int], send: Callable[[dict], None]) -> None:
    """The child's whole job (parent/retime.py names it in its ChildTask)."""
    RetimeEvaluation(request, kernels, settings, retime_settings, seed, send).run()
