"""contract: the float64-anchor allowance rule with hand-computed numbers."""

import math
import unittest

import gradertest  # noqa: F401
from mkbgrader.parent import contract


class ContractTest(unittest.TestCase):
    def test_allowance_uses_reference_error_when_larger(self) -> None:
        # ref_err 1e-3 beats eps(float32)·max|anchor| = 1.19e-7 · 10 = 1.19e-6 → 3 × 1e-3
        self.assertAlmostEqual(contract.allowance(1e-3, "float32", 10.0), 3e-3)

    def test_allowance_uses_epsilon_scale_when_reference_is_exact(self) -> None:
        # bf16: eps 2^-7 = 0.0078125; max|anchor| 4 → 0.03125; × 3 = 0.09375
        self.assertAlmostEqual(contract.allowance(0.0, "bfloat16", 4.0), 0.09375)
        self.assertAlmostEqual(contract.allowance(0.0, "float16", 2.0), 3 * 2 * 0.0009765625)

    def test_error_at_allowance_passes_and_just_over_fails(self) -> None:
        self.assertTrue(contract.float_output_passes(0.09375, 0.0, "bfloat16", 4.0))
        self.assertFalse(contract.float_output_passes(0.09376, 0.0, "bfloat16", 4.0))

    def test_non_finite_error_never_passes(self) -> None:
        self.assertFalse(contract.float_output_passes(math.inf, 1e9, "float32", 1e9))
        self.assertFalse(contract.float_output_passes(math.nan, 1e9, "float32", 1e9))

    def test_over_allowance_factor(self) -> None:
        self.assertAlmostEqual(contract.over_allowance_factor(0.3, 0.1), 3.0)
        self.assertIsNone(contract.over_allowance_factor(1.0, 0.0))

    def test_unknown_dtype_is_an_error(self) -> None:
        with self.assertRaises(ValueError):
            contract.allowance(0.0, "int32", 1.0)


if __name__ == "__main__":
    unittest.main()
