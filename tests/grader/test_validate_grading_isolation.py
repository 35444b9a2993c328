"""Grading after a candidate broke the device: the problem's code failing next is reported as the candidate's doing
(not as an infrastructure error of the problem), in the stage where it surfaced."""

from __future__ import annotations

import os
import unittest

import gradertest
from gradertest import grade

FOLDER = os.path.join(gradertest.FIXTURES, "problems", "_validation")
PROBLEM = os.path.join(FOLDER, "43_vector_add_on_a_breakable_device.py")
KERNEL = os.path.join(FOLDER, "kernels", "43_breaks_the_device_late.cpusim.py")


class BrokenContextAttributionTest(unittest.TestCase):
    def test_a_context_the_candidate_broke_is_blamed_on_the_candidate(self) -> None:
        verdict = grade(PROBLEM, KERNEL)
        self.assertFalse(verdict["passed"])
        self.assertFalse(verdict["infrastructure_error"], verdict["error"])
        self.assertEqual(verdict["stage"], "correctness")
        self.assertTrue(verdict["error"].startswith("the CUDA context was broken after the candidate's solve ran: "
                                                    "the problem's "), verdict["error"])
        self.assertIn("device-side assert triggered (index 4096 out of bounds in the candidate's kernel)",
                      verdict["error"])
        self.assertNotIn("make_inputs failed", verdict["error"])


if __name__ == "__main__":
    unittest.main()
