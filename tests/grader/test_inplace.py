"""in-place outputs: a problem that declares MKB_META["inplace_outputs"] has those inputs compared after the call as
outputs (KernelBench-X's optimizer steps, training-mode batch norm, index_fill_); one that declares nothing keeps the
rule that inputs must be left unchanged."""

import os
import unittest

import gradertest
from gradertest import grade, solution

from mkbgrader.child import draws

FOLDER = os.path.join(gradertest.FIXTURES, "problems", "_inplace")
DECLARED = os.path.join(FOLDER, "01_scaled_row_fill_inplace.py")
UNDECLARED = os.path.join(FOLDER, "02_scaled_row_fill_undeclared.py")
BATCH_NORM = os.path.join(FOLDER, "03_training_batch_norm_inplace.py")


class InplaceOutputsTest(unittest.TestCase):
    def test_declared_input_written_in_place_passes(self) -> None:
        verdict = grade(DECLARED, solution("inplace_row_fill.cpusim.py"))
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertTrue(verdict["recheck_correct"])

    def test_declared_input_left_unwritten_fails_naming_the_input(self) -> None:
        verdict = grade(DECLARED, solution("inplace_row_fill_not_written.cpusim.py"))
        self.assertFalse(verdict["passed"])
        self.assertIn("input[0] (written in place)", verdict["mismatch"] + verdict["error"])

    def test_declared_input_written_wrong_fails(self) -> None:
        verdict = grade(DECLARED, solution("inplace_row_fill_wrong_value.cpusim.py"))
        self.assertFalse(verdict["passed"])
        self.assertIn("input[0] (written in place)", verdict["mismatch"] + verdict["error"])

    def test_undeclared_problem_keeps_the_unchanged_inputs_rule(self) -> None:
        verdict = grade(UNDECLARED, solution("inplace_row_fill.cpusim.py"))
        self.assertFalse(verdict["passed"])
        self.assertIn("solve modified input 0 in place", verdict["error"] + verdict["mismatch"])

    def test_only_declared_positions_are_exempt(self) -> None:
        import torch

        before = [torch.zeros(3), torch.zeros(3)]
        after = [torch.ones(3), torch.ones(3)]
        self.assertEqual(draws.mutation_note(before, after, [0]),
                         "solve modified input 1 in place; inputs must be left unchanged")
        self.assertEqual(draws.mutation_note(before, after, [0, 1]), "")

    def test_declared_positions_are_read_within_the_inputs(self) -> None:
        self.assertEqual(draws.inplace_outputs({"inplace_outputs": [3, 0, 0, 9, True]}, 4), [0, 3])
        self.assertEqual(draws.inplace_outputs({}, 4), [])

    def test_validation_redraws_declared_outputs_that_a_native_kernel_wrote_unseen(self) -> None:
        # Training batch norm writes the running statistics without moving their version counters; validation
        # used to compare the written statistics with a fresh draw and call make_inputs non-deterministic.
        from mkbgrader.parent.settings import Settings
        from mkbgrader.parent.validate import validate

        report = validate({"problem": BATCH_NORM, "device": "cpu", "eager_target_ms": 0.0},
                          Settings(warmup_draws=1, timing_draws=3, timeout_s=120.0))
        self.assertEqual(report["error"], "", report["issues"])
        self.assertTrue(report["deterministic"], report["determinism_note"])


if __name__ == "__main__":
    unittest.main()
