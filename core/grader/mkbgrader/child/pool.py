"""Pooled correctness draws in the child (docs/grader-protocol.md "Pooled correctness draws"): several kernels of one
problem checked on the same draws, each draw's reference and float64 anchor computed once for all of them.

For every draw: fresh inputs, the reference and its anchor, then each kernel still in the pool on its own clone of
the inputs, compared as a grading's correctness draw is (anchor/allowance rule, in-place outputs, mutation). A kernel
that raises, breaks a runtime rule or mutates an input it may not is reported under its label and leaves the pool;
the others go on. When the CUDA context no longer works after such a failure, the pool ends there: the parent
reports the kernels that did not finish as incomplete. The parent (parent/pool.py) judges every draw.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import torch

from mkbgrader.child import compare, draws, memory
from mkbgrader.child.compliance_runtime import ComplianceViolation
from mkbgrader.child.kernel_slots import KernelSlots
from mkbgrader.child.loading import StageFailure
from mkbgrader.parent.retime_request import KernelSpec
from mkbgrader.parent.sandbox import freeze_heap
from mkbgrader.parent.settings import Settings


class PoolEvaluation(KernelSlots):
    """The pool's child: load the problem, import every kernel under one guard, then the shared draws."""

    module_name = "mkb_pool_kernel"

    def _run(self) -> None:
        self.enter("load")
        self.set_up_device()
        problem = self.load_problem()
        self.enter("import")
        live = self.import_kernels(problem, (sys.modules[__name__],))
        self.imported = True
        self.send({"t": "imported"})
        self.enter("correctness")
        for index in range(self.settings.correctness_draws):
            if not live:
                break
            memory.release(self.device)  # the previous draw's tensors go back before this draw allocates
            inputs = self.draw(draws.fresh_seed())
            self.inplace = draws.inplace_outputs(self.meta, len(inputs))
            written: list = []
            reference, anchor = self.reference_pair(inputs, written if self.inplace else None)
            for slot in list(live):
                self.use(slot)
                if not self._kernel_draw(index, inputs, reference, anchor, written):
                    live.remove(slot)
            self.use(None)
            del inputs, reference, anchor, written
            if index == 0:
                freeze_heap()  # the first calls compiled the kernels (sandbox.freeze_heap says why)
        self.enter("done")

    def _kernel_draw(self, index: int, inputs: list, reference: Any, anchor: Any, written: list) -> bool:
        """The current kernel on its own clone of the draw's inputs, compared and sent as its draw; False when it
        failed and leaves the pool (its error sent under its label). Ends the pool (raises) when the CUDA context no
        longer works after the failure."""
        try:
            given = draws.clone_tree(inputs)
            output = self.call_solve(given)
            launches = self.guard.launches
            mutation = draws.mutation_note(inputs, given, self.inplace)
            candidate_written = [given[i] for i in self.inplace]
            del given
            leaves = compare.compare_outputs(output, reference, anchor, quantized=self.quant_thresholds is not None)
            leaves += self.inplace_leaves(candidate_written, written)
            del output, candidate_written
            self.send({"t": "draw", "phase": "correctness", "index": index, "leaves": leaves, "mutation": mutation,
                       "launches": launches})
            if mutation:
                raise StageFailure(f"draw {index + 1}: {mutation}")
            return True
        except (ComplianceViolation, StageFailure) as failure:
            self.send_failure(failure)
        self._require_working_device()
        return False

    def _require_working_device(self) -> None:
        """Raises (ending the pool) when the device no longer works after a kernel's failure: a device-side assert
        or an illegal access poisons the CUDA context for every kernel after it."""
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()


def pool(request: dict, kernels: list[KernelSpec], settings: Settings, send: Callable[[dict], None]) -> None:
    """The child's whole job (parent/pool.py names it in its ChildTask)."""
    PoolEvaluation(request, kernels, settings, send).run()
