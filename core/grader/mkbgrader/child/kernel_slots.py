"""Several kernels in one child under one runtime guard: what paired re-timing (child/retime.py) and the pooled
correctness draws (child/pool.py) share.

Each kernel of the request gets a `Slot`: its spec, its DSL's adapter and its imported solve. Every DSL is prepared
once, one guard is put over all of them (each adapter's launches count only for the kernels of its own DSL), the
clocks and the delay are taken before any kernel is imported, and every message sent while a kernel runs carries its
label, so the parent can attribute each draw, each time and each failure.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Optional, Sequence

from mkbgrader.child import memory
from mkbgrader.child.compliance_runtime import ComplianceViolation
from mkbgrader.child.delay import DeviceDelay
from mkbgrader.child.dsls import Adapter, adapter_for
from mkbgrader.child.evaluate import GRADER_MODULES, Evaluation
from mkbgrader.child.loading import StageFailure, one_line
from mkbgrader.parent.retime_request import KernelSpec
from mkbgrader.parent.settings import Settings


class DslLaunches:
    """What one DSL adapter sees as the guard: every launch goes through the shared guard, but only launches of the
    DSL of the kernel being called count for that call's no_launch rule."""

    def __init__(self, owner: "KernelSlots", guard: Any, adapter_name: str) -> None:
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


class Slot:
    """One kernel of the request in the child: its spec, its DSL's adapter, its solve and its warm-up times."""

    def __init__(self, spec: KernelSpec, adapter_name: str, own_stream: bool) -> None:
        self.spec = spec
        self.adapter_name = adapter_name
        self.own_stream = own_stream  # its DSL launches on a stream of its own (delay.DeviceDelay)
        self.solve: Any = None
        self.timed_solve: Any = None  # solve plus the slowdown delay, when one is asked for
        self.warmup_s: list[float] = []


class KernelSlots(Evaluation):
    """Grading's loading, guard, clocks and draws, for several kernels at once; a subclass's `_run` says what is
    done with them. `module_name` prefixes the kernels' module names."""

    module_name = "mkb_kernel"

    def __init__(self, request: dict, kernels: list[KernelSpec], settings: Settings,
                 send: Callable[[dict], None]) -> None:
        super().__init__(request, settings, self._send_labelled)
        self.outer_send = send
        self.specs = kernels
        self.current_label = ""
        self.current_adapter = ""

    def _send_labelled(self, message: dict) -> None:
        if self.current_label and "label" not in message:
            message = {**message, "label": self.current_label}
        self.outer_send(message)

    def run(self) -> None:
        try:
            self._run()
        except (ComplianceViolation, StageFailure) as failure:
            self.send_failure(failure)
        except BaseException as error:  # the grader's own bug, or a kernel's exception escaping a guard
            if getattr(self, "solve_ran", False) and memory.breaks_context(error):
                self.send({"t": "error", "stage": self.stage, "infrastructure": False,
                           "message": self.broken_by_candidate("the grader", error)})
            else:
                self.send({"t": "error", "stage": self.stage, "message": "grader error: " + one_line(error),
                           "infrastructure": not self.current_label})
        self.current_label = ""
        self.send({"t": "final"})

    def _run(self) -> None:
        raise NotImplementedError

    def send_failure(self, failure: BaseException) -> None:
        """A runtime rule broken or a stage failed, as the error message of the kernel that runs (its label)."""
        if isinstance(failure, ComplianceViolation):
            self.send({"t": "error", "stage": self.stage, "rule": failure.rule, "message": failure.detail,
                       "infrastructure": False})
        else:
            self.send({"t": "error", "stage": self.stage, "message": str(failure),
                       "infrastructure": bool(getattr(failure, "infrastructure", False))})

    def use(self, slot: Optional[Slot]) -> None:
        """Makes `slot` the kernel that runs next (None: the grader or eager): its solve and DSL, and its label on
        every message until the next use."""
        label = slot.spec.label if slot else ""
        if label != self.current_label:  # who runs next, so a crash that leaves no message can be attributed
            self.outer_send({"t": "calling", "label": label})
        self.current_label = label
        self.current_adapter = slot.adapter_name if slot else ""
        if slot is not None:
            self.solve = slot.solve
            self.dsl = slot.adapter_name

    def import_kernels(self, problem: Any, extra_modules: Sequence[Any] = ()) -> list[Slot]:
        """Prepares each kernel's DSL once, puts one guard over all of them (each adapter's launches counted for its
        own kernels), takes the clocks and the delay before any kernel is imported, then imports every kernel. The
        tampering check also watches `extra_modules` (the caller's own grader modules)."""
        adapters: dict[str, Adapter] = {}
        slots: list[Slot] = []
        for spec in self.specs:
            self.current_label = spec.label
            adapter = adapter_for(spec.dsl, spec.descriptor)
            if adapter.name not in adapters:
                missing = adapter.prepare()
                if missing:
                    raise StageFailure(missing, False)
                adapters[adapter.name] = adapter
            slots.append(Slot(spec, adapter.name, adapter.own_stream))
        self.current_label = ""
        self.start_guard(problem)
        watched: list[tuple[Any, str]] = []
        for name, adapter in adapters.items():
            watched.extend(adapter.observe(DslLaunches(self, self.guard, name)))
        self.watch_grader(GRADER_MODULES + (sys.modules[__name__],) + tuple(extra_modules), watched)
        self.start_clocks()
        self.delay = DeviceDelay(self.device)
        self.threads_before = threading.active_count()
        for index, slot in enumerate(slots):
            self.use(slot)
            slot.solve = self.import_kernel(slot.spec.kernel, f"{self.module_name}_{index}")
            slot.timed_solve = slot.solve
        self.use(None)
        return slots
