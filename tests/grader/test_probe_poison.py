"""The output-dependence probe's tensor helpers: equality, the shifted copy and the poison, for every float width
(one-byte floats only where this torch has them: Debian's CPU torch does not)."""

import unittest

import gradertest  # noqa: F401  (puts the grader on sys.path)
import torch

from mkbgrader.child import compliance_runtime as runtime

FP8 = [getattr(torch, name) for name in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, name)]


class ProbePoisonTest(unittest.TestCase):
    def values(self) -> torch.Tensor:
        return torch.tensor([0.0, 1.0, -2.5, 3.0e4, float("nan"), float("inf"), -float("inf")])

    def test_shifted_differs_in_every_element(self) -> None:
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            with self.subTest(dtype=dtype):
                before = self.values().to(dtype)
                shifted = runtime._shifted(before)
                self.assertEqual(shifted.dtype, dtype)
                differs = ~((shifted == before) | (torch.isnan(shifted) & torch.isnan(before)))
                self.assertTrue(bool(differs.all()), f"{before} -> {shifted}")
                self.assertFalse(runtime._bitwise_equal(shifted, before))
                self.assertTrue(runtime._bitwise_equal(before, before.clone()))  # NaN equals NaN here

    @unittest.skipUnless(FP8, "this torch has no float8 dtypes")
    def test_fp8_shift_equality_and_poison(self) -> None:
        for dtype in FP8:
            with self.subTest(dtype=dtype):
                before = torch.tensor([0.0, 1.0, -2.5, 448.0 if dtype == torch.float8_e4m3fn else 5.0e4]).to(dtype)
                shifted = runtime._shifted(before)
                self.assertEqual(shifted.dtype, dtype)
                self.assertTrue(bool((shifted.float() != before.float()).all()), f"{before} -> {shifted}")
                self.assertTrue(runtime._bitwise_equal(before, before.clone()))
                self.assertFalse(runtime._bitwise_equal(shifted, before))
                poisoned = before.clone()
                runtime._poison(poisoned)
                self.assertTrue(bool(torch.isnan(poisoned.float()).all()))

    def test_poison_changes_integers_and_booleans(self) -> None:
        ints = torch.arange(-3, 4, dtype=torch.int32)
        flags = torch.tensor([True, False])
        runtime._poison(ints)
        runtime._poison(flags)
        self.assertEqual(ints.tolist(), [2, 1, 0, -1, -2, -3, -4])
        self.assertEqual(flags.tolist(), [False, True])


if __name__ == "__main__":
    unittest.main()
