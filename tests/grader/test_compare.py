"""compare: containers, shapes, dtypes, exact integers and booleans, float leaves, and mismatch notes in words."""

import unittest

import torch

import gradertest  # noqa: F401
from mkbgrader.child import compare
from mkbgrader.parent import judging


def judge(cand, ref, anchor=None):
    leaves = compare.compare_outputs(cand, ref, ref if anchor is None else anchor)
    failing = [leaf for leaf in leaves if not judging.leaf_passes(leaf)]
    return (not failing), (judging.mismatch_note(failing[0]) if failing else "")


class CompareTest(unittest.TestCase):
    def test_identical_float_tensor_passes(self) -> None:
        x = torch.randn(4, 5)
        self.assertEqual(judge(x.clone(), x, x.double()), (True, ""))

    def test_container_type_and_length_must_match(self) -> None:
        x = torch.ones(3)
        ok, note = judge([x], (x,))
        self.assertFalse(ok)
        self.assertIn("output is a list but the reference returns a tuple", note)
        ok, note = judge((x,), (x, x))
        self.assertIn("has 1 elements but the reference has 2", note)

    def test_shape_dtype_and_kind_mismatches_are_named(self) -> None:
        x = torch.ones(2, 3)
        self.assertIn("shape [3, 2] but the reference has shape [2, 3]", judge(torch.ones(3, 2), x)[1])
        self.assertIn("dtype float64 but the reference has float32", judge(x.double(), x)[1])
        self.assertIn("is a float but the reference returns a tensor", judge(1.0, x)[1])

    def test_nested_path_names_the_output(self) -> None:
        ref = (torch.zeros(2), {"idx": torch.tensor([1, 2])})
        cand = (torch.zeros(2), {"idx": torch.tensor([1, 3])})
        ok, note = judge(cand, ref)
        self.assertFalse(ok)
        self.assertIn("output[1]['idx'] (int64) must equal the reference exactly but 1 of 2 elements differ", note)
        self.assertIn("first at index [1]: got 3, expected 2", note)

    def test_bool_outputs_must_be_equal(self) -> None:
        ok, note = judge(torch.tensor([True, False]), torch.tensor([True, True]))
        self.assertFalse(ok)
        self.assertIn("(bool)", note)

    def test_float_error_over_allowance_reports_factor_and_index(self) -> None:
        anchor = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
        ref = anchor.float()
        cand = ref.clone()
        cand[1, 0] += 0.01  # allowance = 3·eps32·4 ≈ 1.43e-6
        leaves = compare.compare_outputs(cand, ref, anchor)
        self.assertEqual(leaves[0]["worst_index"], [1, 0])
        self.assertAlmostEqual(leaves[0]["cand_err"], 0.01, places=6)
        self.assertEqual(leaves[0]["anchor_max_abs"], 4.0)
        ok, note = judge(cand, ref, anchor)
        self.assertFalse(ok)
        self.assertRegex(note, r"output \(float32\) max abs error 0\.0099999\d* against the float64 anchor exceeds "
                               r"the allowance 1\.43051e-06 \(6\.99e\+03x the allowance")
        self.assertIn("x the allowance", note)
        self.assertIn("at index [1, 0]", note)

    def test_error_within_reference_error_passes(self) -> None:
        anchor = torch.full((3,), 1.0, dtype=torch.float64)
        ref = torch.tensor([1.001, 1.0, 1.0])       # the reference is off by 1e-3
        cand = torch.tensor([1.0, 1.0025, 1.0])     # 2.5e-3 ≤ 3e-3
        self.assertTrue(judge(cand, ref, anchor)[0])
        cand = torch.tensor([1.0, 1.0035, 1.0])     # 3.5e-3 > 3e-3
        self.assertFalse(judge(cand, ref, anchor)[0])

    def test_nan_fails_and_is_called_non_finite(self) -> None:
        ref = torch.ones(4)
        cand = ref.clone()
        cand[2] = float("nan")
        ok, note = judge(cand, ref, ref.double())
        self.assertFalse(ok)
        self.assertIn("1 non-finite element(s)", note)
        self.assertIn("index [2]", note)

    def test_matching_nan_where_anchor_is_nan_passes(self) -> None:
        ref = torch.tensor([1.0, float("nan")])
        self.assertTrue(judge(ref.clone(), ref, ref.double())[0])

    def test_device_mismatch_is_named(self) -> None:
        x = torch.ones(2)
        leaves = compare.compare_outputs(x.to("meta"), x, x)
        self.assertEqual(leaves[0]["kind"], "structure")
        self.assertIn("device meta", judging.mismatch_note(leaves[0]))


class FiniteFastPathTest(unittest.TestCase):
    """_finite_numbers (every value finite) must give exactly _numbers's figures, which it stands in for."""

    def cases(self):
        generator = torch.Generator().manual_seed(7)
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            for shape in ((), (1,), (37,), (8, 33), (3, 4, 5)):
                anchor = torch.randn(shape, generator=generator, dtype=torch.float64) * 3
                cand = (anchor + 1e-3 * torch.randn(shape, generator=generator, dtype=torch.float64)).to(dtype)
                ref = anchor.to(dtype)
                yield f"{dtype} {shape}", cand, ref, anchor
        wide = torch.randn(6, 8, generator=generator, dtype=torch.float64)
        yield "non-contiguous", wide.t().float(), wide.t().float(), wide.t()
        tied = torch.zeros(10, dtype=torch.float64)
        yield "ties", tied.float() + 1, tied.float(), tied  # the first of equal worst differences
        yield "float32 anchor", torch.randn(9, generator=generator), torch.randn(9, generator=generator), \
            torch.randn(9, generator=generator)

    def test_the_fast_path_gives_the_general_paths_numbers(self) -> None:
        for name, cand, ref, anchor in self.cases():
            with self.subTest(name):
                anchor64 = anchor.to(torch.float64)
                fast = compare._finite_numbers(cand, ref, anchor64)
                general = compare._numbers(cand.to(torch.float64), ref.to(torch.float64), anchor64)
                for got, want in zip(fast[0] + fast[1], general[0] + general[1]):
                    self.assertEqual(got.dtype, torch.float64)
                    self.assertEqual(got.item(), want.item())

    def test_a_leaf_with_a_non_finite_value_takes_the_general_path(self) -> None:
        anchor = torch.tensor([1.0, float("inf"), 3.0], dtype=torch.float64)
        leaf = compare._float_leaf("output", torch.tensor([1.0, float("inf"), 2.0]), anchor.float(), anchor)
        self.assertEqual(leaf["nonfinite"], 0)
        self.assertEqual(leaf["cand_err"], 1.0)
        self.assertEqual(leaf["worst_index"], [2])
        leaf = compare._float_leaf("output", torch.tensor([1.0, 2.0, float("nan")]), anchor.float(), anchor)
        self.assertEqual(leaf["nonfinite"], 2)
        self.assertEqual(leaf["cand_err"], float("inf"))


if __name__ == "__main__":
    unittest.main()
