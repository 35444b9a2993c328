"""The timing stage's re-check: a few timing draws are kept (a pristine copy of their inputs, parked on the device
when there is room, else on the host) and the kernel's timed output on each is compared with the reference again."""

import unittest

from gradertest import grade, hostile, problem

from mkbgrader.child import memory

# Every timing draw is re-checked: 2 correctness draws, the probe, 1 outlier draw and 1 warm-up come first.
SETTINGS = {"correctness_draws": 2, "outlier_draws": 1, "warmup_draws": 1, "timing_draws": 3, "recheck_draws": 3}


class RecheckTest(unittest.TestCase):
    def test_a_kernel_wrong_only_while_timed_fails_its_recheck(self) -> None:
        verdict = grade(problem("01_vector_add.py"), hostile("wrong_after_checks"), **SETTINGS)
        self.assertFalse(verdict["recheck_correct"])
        self.assertIn("(re-check)", verdict["error"])  # its checked calls were right: only the re-check saw it
        self.assertFalse(verdict["passed"])

    def test_a_timed_call_that_scribbles_on_its_inputs_is_rechecked_against_them_as_drawn(self) -> None:
        verdict = grade(problem("01_vector_add.py"), hostile("scribbles_after_checks"), **SETTINGS)
        self.assertTrue(verdict["recheck_correct"], verdict["mismatch"] or verdict["error"])
        self.assertTrue(verdict["passed"], verdict["error"])


class ParkingRoomTest(unittest.TestCase):
    def test_room_is_what_the_budget_leaves(self) -> None:
        budget = memory.Budget("cpu")
        budget.cap = 1000
        self.assertTrue(memory.fits_uncrowded(budget, 1000))
        self.assertFalse(memory.fits_uncrowded(budget, 1001))

    def test_no_known_room_is_no_room(self) -> None:
        budget = memory.Budget("cpu")
        budget.cap = None
        budget.free_bytes = lambda held=0: None  # type: ignore[method-assign]
        self.assertFalse(memory.fits_uncrowded(budget, 1))

    def test_a_parked_set_is_brought_back_only_when_it_is_elsewhere(self) -> None:
        import torch

        here = [torch.ones(2), (torch.zeros(1), 3)]
        self.assertTrue(memory.is_on(here, "cpu"))
        self.assertFalse(memory.is_on(here + [torch.ones(1, device="meta")], "cpu"))


if __name__ == "__main__":
    unittest.main()
