"""boundary: the two implementation boundaries on small cpusim fixtures built here. Under `mkb` eager PyTorch may
finish what a DSL kernel started but may not route a finished eager result through one; under `strict` every eager
op beyond data movement is named and rejected."""

import os
import tempfile
import textwrap
import unittest

import gradertest
from gradertest import grade, problem, solution

ADD = problem("01_vector_add.py")
SOFTMAX = problem("02_row_softmax.py")
GOOD_ADD = solution("01_vector_add.cpusim.py")

HEADER = "import cpusim\nimport torch\n\n"

KERNELS = {
    # eager computes the answer; a cpusim kernel copies it out
    "copy_route": """
        @cpusim.kernel
        def copy(pid, src, dst):
            dst[:] = src

        def solve(x, y):
            eager = x + y
            out = torch.empty_like(eager)
            copy[(1,)](eager, out)
            return out
    """,
    # eager computes the answer in float64; a cpusim kernel casts it to float32
    "cast_route": """
        @cpusim.kernel
        def cast(pid, src, dst):
            dst[:] = src.to(dst.dtype)

        def solve(x, y):
            wide = x.to(torch.float64) + y.to(torch.float64)
            out = torch.empty_like(x)
            cast[(1,)](wide, out)
            return out
    """,
    # eager computes the softmax of the transposed matrix; a cpusim kernel transposes it back
    "layout_route": """
        @cpusim.kernel
        def transpose(pid, src, dst):
            dst[:] = src.t()

        def solve(x):
            # softmax over a transposed copy, in float64 so that its reduction order cannot cost the few ulp that
            # would fail correctness before the boundary is judged
            flipped = torch.softmax(x.t().contiguous().double(), dim=0).float()
            out = torch.empty_like(x)
            transpose[(1,)](flipped, out)
            return out
    """,
    # a cpusim kernel computes the numerators, eager divides by their sums: a genuine hybrid
    "hybrid_softmax": """
        @cpusim.kernel
        def numerators(row, x, out):
            v = x[row]
            out[row] = torch.exp(v - v.max())

        def solve(x):
            e = torch.empty_like(x)
            numerators[(x.shape[0],)](x, e)
            return e / e.sum(dim=-1, keepdim=True)
    """,
    # a fused cpusim kernel, then a trivial eager epilogue
    "epilogue_times_one": """
        @cpusim.kernel
        def add(pid, x, y, out):
            out[:] = x + y

        def solve(x, y):
            out = torch.empty_like(x)
            add[(1,)](x, y, out)
            return out * 1.0
    """,
    # a cpusim kernel moves x, eager adds y to it (a bias add after a data-movement kernel)
    "bias_add_after_copy": """
        @cpusim.kernel
        def copy(pid, src, dst):
            dst[:] = src

        def solve(x, y):
            moved = torch.empty_like(x)
            copy[(1,)](x, moved)
            return moved + y
    """,
    # eager computes the answer; the kernel writes the same answer over a copy of it
    "overwrites_eager_result": """
        @cpusim.kernel
        def add(pid, x, y, out):
            out[:] = x + y

        def solve(x, y):
            out = torch.add(x, y)
            add[(1,)](x, y, out)
            return out
    """,
}

TWO_OUTPUTS_PROBLEM = '''
import torch


def reference(x):
    return (x * 2.0, x + 1.0)


def make_inputs(device="cpu"):
    return [torch.randn(256, device=device)]
'''

TWO_OUTPUTS_KERNELS = {
    # output 0 in eager, output 1 in the kernel: eager implements a remaining part, allowed under mkb
    "one_eager_one_kernel": """
        @cpusim.kernel
        def plus_one(pid, x, out):
            out[:] = x + 1.0

        def solve(x):
            second = torch.empty_like(x)
            plus_one[(1,)](x, second)
            return (x * 2.0, second)
    """,
    # both outputs computed in eager and copied out by the kernel
    "both_routed": """
        @cpusim.kernel
        def copy(pid, src, dst):
            dst[:] = src

        def solve(x):
            first, second = torch.empty_like(x), torch.empty_like(x)
            copy[(1,)](x * 2.0, first)
            copy[(1,)](x + 1.0, second)
            return (first, second)
    """,
}


class BoundaryGradingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.folder = tempfile.TemporaryDirectory(prefix="mkb-boundary-")
        cls.paths = {}
        for name, body in {**KERNELS, **TWO_OUTPUTS_KERNELS}.items():
            path = os.path.join(cls.folder.name, name + ".cpusim.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(f'"""Boundary fixture {name}."""\n\n' + HEADER + textwrap.dedent(body))
            cls.paths[name] = path
        cls.two_outputs = os.path.join(cls.folder.name, "two_outputs.py")
        with open(cls.two_outputs, "w", encoding="utf-8") as handle:
            handle.write('"""Two outputs, one per rule of the boundary."""\n' + TWO_OUTPUTS_PROBLEM)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.folder.cleanup()

    def verdict(self, problem_path: str, name: str, boundary: str) -> dict:
        path = self.paths.get(name, name)
        result = grade(problem_path, path, boundary=boundary)
        self.assertEqual(result["boundary"], boundary)
        self.assertFalse(result["infrastructure_error"], result["error"])
        return result

    def assert_passes(self, problem_path: str, name: str, boundary: str) -> None:
        result = self.verdict(problem_path, name, boundary)
        self.assertTrue(result["passed"], f"{name} under {boundary}: {result['error']}")

    def assert_rejected(self, problem_path: str, name: str, boundary: str, rule: str, words: str) -> None:
        result = self.verdict(problem_path, name, boundary)
        self.assertFalse(result["passed"], f"{name} passed under {boundary}")
        self.assertEqual(result["compliance_rule"], rule, result["error"])
        self.assertIn(words, result["error"])
        self.assertEqual(result["speedup_vs_eager"], 0.0)

    def test_an_honest_kernel_passes_under_both_boundaries(self) -> None:
        for boundary in ("mkb", "strict"):
            with self.subTest(boundary=boundary):
                self.assert_passes(ADD, GOOD_ADD, boundary)

    def test_an_eager_result_copied_out_by_a_kernel_fails_under_both(self) -> None:
        self.assert_rejected(ADD, "copy_route", "mkb", "eager_result_routed", "up to a copy")
        self.assert_rejected(ADD, "copy_route", "strict", "eager_compute", "aten.add")

    def test_an_eager_result_cast_by_a_kernel_fails_under_both(self) -> None:
        self.assert_rejected(ADD, "cast_route", "mkb", "eager_result_routed", "a cast from float64")
        self.assert_rejected(ADD, "cast_route", "strict", "eager_compute", "aten.add")

    def test_an_eager_result_transposed_by_a_kernel_fails_under_both(self) -> None:
        self.assert_rejected(SOFTMAX, "layout_route", "mkb", "eager_result_routed", "a layout change")
        self.assert_rejected(SOFTMAX, "layout_route", "strict", "eager_compute", "aten._softmax")

    def test_a_kernel_overwriting_an_eager_answer_fails_under_mkb(self) -> None:
        self.assert_rejected(ADD, "overwrites_eager_result", "mkb", "eager_result_routed", "aten.add")

    def test_eager_only_and_discarded_launches_fail_under_both(self) -> None:
        for boundary in ("mkb", "strict"):
            with self.subTest(boundary=boundary):
                self.assert_rejected(ADD, gradertest.hostile("no_launch"), boundary, "no_launch", "no cpusim")
                self.assert_rejected(ADD, gradertest.hostile("discarded_launch"), boundary, "launch_unused",
                                     "no returned output depends")

    def test_a_genuine_hybrid_passes_under_mkb_and_fails_under_strict(self) -> None:
        self.assert_passes(SOFTMAX, "hybrid_softmax", "mkb")
        self.assert_rejected(SOFTMAX, "hybrid_softmax", "strict", "eager_compute", "aten.sum")

    def test_a_small_eager_epilogue_passes_under_mkb_and_fails_under_strict_naming_the_op(self) -> None:
        self.assert_passes(ADD, "epilogue_times_one", "mkb")
        self.assert_rejected(ADD, "epilogue_times_one", "strict", "eager_compute", "aten.mul")
        self.assert_passes(ADD, "bias_add_after_copy", "mkb")
        self.assert_rejected(ADD, "bias_add_after_copy", "strict", "eager_compute", "aten.add")

    def test_an_eager_output_beside_a_kernel_output_passes_under_mkb(self) -> None:
        self.assert_passes(self.two_outputs, "one_eager_one_kernel", "mkb")
        self.assert_rejected(self.two_outputs, "one_eager_one_kernel", "strict", "eager_compute", "aten.mul")

    def test_every_output_routed_from_eager_fails_under_mkb(self) -> None:
        self.assert_rejected(self.two_outputs, "both_routed", "mkb", "eager_result_routed", "output[0]")

    def test_the_default_boundary_is_mkb(self) -> None:
        from mkbgrader.parent.settings import parse_settings

        self.assertEqual(parse_settings({}).boundary, "mkb")
        self.assertEqual(grade(ADD, GOOD_ADD)["boundary"], "mkb")

    def test_an_unknown_boundary_is_refused_with_the_allowed_names(self) -> None:
        from mkbgrader.parent.settings import parse_settings

        with self.assertRaises(ValueError) as caught:
            parse_settings({"boundary": "loose"})
        self.assertIn("mkb, strict", str(caught.exception))
        self.assertIn("'loose'", str(caught.exception))


class CheckSolutionsTest(unittest.TestCase):
    def test_the_suite_check_script_fails_an_eager_epilogue_under_strict_only(self) -> None:
        import shutil
        import subprocess
        import sys

        with tempfile.TemporaryDirectory(prefix="mkb-check-") as suite:
            solutions = os.path.join(suite, "basic", "_solutions")
            os.makedirs(solutions)
            shutil.copy(ADD, os.path.join(suite, "basic", "01_vector_add.py"))
            shutil.copy(SOFTMAX, os.path.join(suite, "basic", "02_row_softmax.py"))
            shutil.copy(GOOD_ADD, os.path.join(solutions, "01_vector_add.cpusim.py"))
            with open(os.path.join(solutions, "02_row_softmax.cpusim.py"), "w", encoding="utf-8") as handle:
                handle.write('"""Hybrid softmax."""\n\n' + HEADER + textwrap.dedent(KERNELS["hybrid_softmax"]))
            script = os.path.join(gradertest.REPO, "tests", "hostile", "check_solutions.py")
            runs = {}
            for boundary in ("mkb", "strict"):
                runs[boundary] = subprocess.run(
                    [sys.executable, script, "--suite", suite, "--dsls", "cpusim", "--device", "cpu", "--boundary",
                     boundary], capture_output=True, text=True, timeout=300)
            self.assertEqual(runs["mkb"].returncode, 0, runs["mkb"].stdout + runs["mkb"].stderr)
            self.assertIn("2 of 2 passed under mkb", runs["mkb"].stdout)
            self.assertEqual(runs["strict"].returncode, 1, runs["strict"].stdout + runs["strict"].stderr)
            self.assertIn("FAIL basic/_solutions/02_row_softmax.cpusim.py", runs["strict"].stdout)
            self.assertIn("[eager_compute]", runs["strict"].stdout)
            self.assertIn("1 of 2 passed under strict", runs["strict"].stdout)


class ProbeWriteTest(unittest.TestCase):
    def test_a_transpose_into_memory_that_already_held_its_answer_is_seen_writing(self) -> None:
        import torch
        from mkbgrader.child.compliance_runtime import RuntimeGuard

        guard = RuntimeGuard("cpu")
        guard.probing = True
        source = torch.randn(8, 16)
        destination = source.t().contiguous()  # stale memory that holds the answer already
        seen: list = []
        guard.on_written = seen.append
        guard.launch([source, destination], lambda: destination.copy_(source.t()))
        self.assertTrue(bool(torch.isnan(destination).all()), "the destination was not poisoned")
        self.assertFalse(bool(torch.isnan(source).any()), "the source was poisoned")
        self.assertEqual([t is destination for t in seen], [True])


class DataMovementTest(unittest.TestCase):
    def test_allocation_views_copies_casts_and_fills_are_data_movement(self) -> None:
        from mkbgrader.child.boundary import is_data_movement

        for name in ("empty_like", "view", "permute", "copy_", "_to_copy", "fill_", "clone", "cat", "permute_copy",
                     "squeeze_", "t_"):
            self.assertTrue(is_data_movement(name), name)

    def test_arithmetic_reductions_and_gathers_are_not(self) -> None:
        from mkbgrader.child.boundary import is_data_movement

        for name in ("add", "mul", "sum", "mean", "rsqrt", "_softmax", "index", "gather", "mm", "silu", "add_copy",
                     "add_", "mul_"):
            self.assertFalse(is_data_movement(name), name)


if __name__ == "__main__":
    unittest.main()
