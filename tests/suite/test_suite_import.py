"""`mkb suite import kernelbenchx` on the fixture checkout tests/fixtures/kbx: what it writes from each harness, what
it refuses and why, that the result validates and grades on CPU, and that a second run changes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

MKB = os.environ["MKB_CLI"]
FIXTURE = Path(os.environ["MKB_SOURCE_DIR"]) / "tests" / "fixtures" / "kbx"
BROKEN = Path("data") / "kernelbenchx" / "Loss" / "broken_loss.py"
DSLS = Path(os.environ["MKB_SOURCE_DIR"]) / "tests" / "fixtures" / "dsls"
PYTHON = os.environ.get("MKB_TEST_PYTHON", "/usr/bin/python3")
# A cpusim kernel for the imported row_avg_pool1d task (kernel_size=4, stride=2), its result scaled by {scale}.
KERNEL = """import cpusim
import torch
import torch.nn.functional as F


@cpusim.kernel
def pool_rows(pid, x, out):
    if pid == 0:
        out.copy_(F.avg_pool1d(x, 4, stride=2) * {scale})


def solve(x):
    out = torch.empty(x.shape[0], x.shape[1], (x.shape[2] - 4) // 2 + 1, dtype=x.dtype, device=x.device)
    pool_rows[(1,)](x, out)
    return out
"""


def mkb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([MKB, *args], capture_output=True, text=True, timeout=120)


def clean_checkout(root: Path) -> Path:
    """The fixture without its malformed task, so that an import of it succeeds."""
    copy = root / "kbx"
    shutil.copytree(FIXTURE, copy)
    (copy / BROKEN).unlink()
    return copy


class ImportOfTheFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.folder = tempfile.TemporaryDirectory()
        cls.out = Path(cls.folder.name) / "suite"
        cls.result = mkb("suite", "import", "kernelbenchx", str(FIXTURE), "--out", str(cls.out))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.folder.cleanup()

    def problem(self, relative: str) -> str:
        return (self.out / relative).read_text()

    def test_a_malformed_task_is_an_error_naming_file_and_line_and_the_others_are_still_written(self) -> None:
        self.assertEqual(self.result.returncode, 3, self.result.stdout + self.result.stderr)
        self.assertIn("error    Loss/broken_loss: data/kernelbenchx/Loss/broken_loss.py:13: does not parse as Python",
                      self.result.stdout)
        written = sorted(str(p.relative_to(self.out)) for p in self.out.glob("*/*.py"))
        self.assertEqual(written, ["activation/100_gelu_fp16.py", "index/101_row_fill.py", "math/103_scaled_add.py",
                                   "matrix_multiply/104_mv_update.py", "pooling/106_row_avg_pool1d.py",
                                   "quantization/107_rowwise_matmul_w8a8.py"])

    def test_the_summary_counts_imported_skipped_and_errors(self) -> None:
        self.assertRegex(self.result.stdout, r"kernelbenchx: 9 tasks: 6 imported \(6 written, 0 rewritten, 0 unchanged, "
                                          r"0 differ\), 2 skipped, 1 errors, 0 stale in \d+\.\d\d s\n$")

    def test_every_unconvertible_task_is_named_with_its_reason(self) -> None:
        self.assertIn("skipped  Optimizer/momentum_sgd: returns a torch.optim optimizer object, not tensors to compare",
                      self.result.stdout)
        self.assertIn("skipped  Random/noisy_scale: draws random numbers inside the task (randn_like)", self.result.stdout)

    def test_every_imported_problem_validates(self) -> None:
        checked = mkb("problems", "validate", str(self.out))
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.assertIn("6 valid problem(s), 0 issue(s)", checked.stdout)

    def test_standard_mode_draws_become_plain_torch_with_dim_0_scaled_to_about_128_mib(self) -> None:
        text = self.problem("math/103_scaled_add.py")
        self.assertIn("    x = torch.randn((65536, 256), dtype=torch.float32, device=device)\n", text)
        self.assertIn("    y = torch.randn((65536, 256), dtype=torch.float32, device=device) + 1.0\n", text)
        self.assertIn("def reference(x, y):\n    return scaled_add(x, y, alpha=0.5)\n", text)
        self.assertIn("#   dim 0 of the harness's draw scaled by 1024 (64 -> 65536), 128 MiB of inputs.\n", text)
        self.assertNotIn("rand_tensor", text)
        self.assertNotIn("sys.path", text)

    def test_the_outlier_mode_becomes_the_graders_outlier_draws_with_kbx_rates(self) -> None:
        self.assertIn('"outliers": {"inputs": [0, 1], "p": 0.002, "scale": 20.0},', self.problem("math/103_scaled_add.py"))

    def test_quantization_thresholds_come_from_the_docstring_and_clamped_draws_get_no_outliers(self) -> None:
        text = self.problem("quantization/107_rowwise_matmul_w8a8.py")
        self.assertIn('"quant": {"min_cosine": 0.97, "max_relative_l1": 0.04, "max_rmse": 0.08},', text)
        self.assertIn('"precision": "w8a8",', text)
        self.assertIn('"outliers": False,', text)
        self.assertIn(".clamp(-10, 10)", text)

    def test_an_in_place_task_declares_the_input_it_writes_and_its_index_bound_grows_with_dim_0(self) -> None:
        text = self.problem("index/101_row_fill.py")
        self.assertIn('"inplace_outputs": [0],', text)
        self.assertIn('"insensitive": [0],', text)  # a written input is compared after the call instead
        self.assertIn("    x = torch.randn((262080, 128), dtype=torch.float32, device=device)\n"
                      "    idx = torch.randint(0, 262080, (16,), dtype=torch.int64, device=device)\n", text)
        self.assertIn("and the bound of 1 index draw(s) with it", text)
        self.assertIn("return row_fill_(0, x, idx, 3.14)", text)

    def test_a_size_the_call_names_is_not_scaled(self) -> None:
        text = self.problem("pooling/106_row_avg_pool1d.py")
        self.assertIn("its dim 0 (4) cannot grow, since it also sizes another dimension or argument", text)

    def test_a_parameter_the_task_writes_is_an_in_place_output_and_inputs_no_seed_changes_are_insensitive(self) -> None:
        text = self.problem("matrix_multiply/104_mv_update.py")
        self.assertIn('"outliers": {"inputs": [0, 1], "p": 0.001, "scale": 50.0},', text)  # rand_tensor's defaults
        self.assertIn('"inplace_outputs": [2],', text)
        self.assertIn('"insensitive": [2, 3],', text)
        self.assertIn("    A = torch.randn((671040, 48), dtype=torch.float32, device=device)\n"
                      "    x = torch.randn((48,), dtype=torch.float32, device=device)\n"
                      "    y = torch.zeros(671040, device=device)\n"
                      "    bias = torch.zeros(671040, device=device)\n", text)  # n = 96 is dim 0 of all three: it grows alone

    def test_an_uninitialised_buffer_becomes_zero_filled_so_one_seed_gives_one_draw(self) -> None:
        text = self.problem("matrix_multiply/104_mv_update.py")
        self.assertNotIn("torch.empty(", text)
        self.assertIn("# make_inputs: 1 torch.empty-like allocation(s) became zero-filled, so that one seed gives one "
                      "draw.\n", text)

    def test_a_harness_without_a_mode_loop_gives_its_largest_random_call(self) -> None:
        text = self.problem("pooling/106_row_avg_pool1d.py")
        self.assertIn("    input3 = torch.randn(4, 8, 32).to(device)\n", text)
        self.assertIn("return row_avg_pool1d(input3, kernel_size=4, stride=2)", text)
        self.assertIn('"outliers": False,', text)

    def test_a_branch_on_the_mode_is_followed_for_the_standard_mode(self) -> None:
        text = self.problem("activation/100_gelu_fp16.py")
        self.assertIn("x = 8.0 * torch.rand((131072, 512), dtype=torch.float16, device=device) + -4.0", text)
        self.assertIn('"precision": "fp16",', text)
        self.assertIn("return gelu_fp16(x, approximate='tanh')", text)

    def test_category_origin_title_and_prompt_come_from_the_checkout(self) -> None:
        text = self.problem("math/103_scaled_add.py")
        self.assertTrue(text.startswith('"""KernelBench-X Math/scaled_add: Adds other, scaled by alpha, to input '
                                        'elementwise."""\n'))
        self.assertIn('"category": "Math",', text)
        self.assertIn('"origin": "kernelbenchx:Math/scaled_add",', text)
        self.assertIn("# Signature:\n#   scaled_add(input, other, alpha=1.0) -> Tensor\n", text)
        self.assertIn("def scaled_add(input, other, alpha=1.0):\n    return torch.add(input, other, alpha=alpha)\n",
                      text)

    def test_suite_check_validates_an_imported_problem(self) -> None:
        store = Path(self.folder.name) / "store.sqlite"
        checked = mkb("suite", "check", "--suite", str(self.out), "--problems", "pooling/*", "--device", "cpu",
                      "--gradings", "0", "--eager-target-ms", "0", "--python", PYTHON, "--store", str(store))
        self.assertIn("pooling/106_row_avg_pool1d: deterministic, sensitive (1/1 inputs)", checked.stdout,
                      checked.stdout + checked.stderr)

    def test_an_imported_problem_grades_on_cpu_against_its_reference(self) -> None:
        def graded(scale: str) -> subprocess.CompletedProcess:
            kernel = Path(self.folder.name) / f"kernel_{scale}.py"
            kernel.write_text(KERNEL.format(scale=scale))
            return mkb("grade", str(kernel), "--suite", str(self.out), "--problem", "106", "--dsl", "cpusim",
                       "--dsl-dir", str(DSLS), "--device", "cpu", "--python", PYTHON)

        right = graded("1.0")
        self.assertEqual(right.returncode, 0, right.stdout + right.stderr)
        self.assertIn("correctness:  5/5 draws correct", right.stdout)
        wrong = graded("1.01")
        self.assertEqual(wrong.returncode, 1, wrong.stdout + wrong.stderr)
        self.assertIn("correctness:  0/5 draws correct", wrong.stdout)


class RepeatedImport(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.checkout = clean_checkout(Path(self.folder.name))
        self.out = Path(self.folder.name) / "suite"

    def tearDown(self) -> None:
        self.folder.cleanup()

    def imported(self, *extra: str) -> subprocess.CompletedProcess:
        return mkb("suite", "import", "kernelbenchx", str(self.checkout), "--out", str(self.out), *extra)

    def test_a_second_run_rewrites_nothing_and_leaves_identical_bytes(self) -> None:
        first = self.imported()
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("6 imported (6 written,", first.stdout)
        before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in self.out.glob("*/*.py")}
        second = self.imported()
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertIn("6 imported (0 written, 0 rewritten, 6 unchanged, 0 differ), 2 skipped, 0 errors, 0 stale",
                      second.stdout)
        self.assertEqual({p: (p.read_bytes(), p.stat().st_mtime_ns) for p in self.out.glob("*/*.py")}, before)

    def test_a_changed_file_is_reported_and_kept_unless_forced(self) -> None:
        self.imported()
        edited = self.out / "math" / "102_scaled_add.py"  # one number lower: the broken task is gone
        original = edited.read_text()
        edited.write_text(original + "# my note\n")
        kept = self.imported()
        self.assertEqual(kept.returncode, 1, kept.stdout + kept.stderr)
        self.assertIn("imported Math/scaled_add -> math/102_scaled_add.py (differs; an existing different file is "
                      "kept, use --force to replace it", kept.stdout)
        self.assertEqual(edited.read_text(), original + "# my note\n")
        forced = self.imported("--force")
        self.assertEqual(forced.returncode, 0, forced.stdout + forced.stderr)
        self.assertIn("(0 written, 1 rewritten, 5 unchanged, 0 differ)", forced.stdout)
        self.assertEqual(edited.read_text(), original)


    def test_files_an_earlier_import_wrote_are_reported_stale_and_removed_only_with_force(self) -> None:
        full = mkb("suite", "import", "kernelbenchx", str(FIXTURE), "--out", str(self.out))
        self.assertEqual(full.returncode, 3, full.stdout + full.stderr)  # its broken task is an error
        mine = self.out / "math" / "999_my_own.py"
        mine.write_text('"""My own problem."""\n')  # no kernelbenchx origin: never touched
        renumbered = self.imported()  # without the broken task, the four tasks after it move down one number
        self.assertEqual(renumbered.returncode, 1, renumbered.stdout + renumbered.stderr)
        self.assertIn("stale    math/103_scaled_add.py: an earlier import wrote it and this one did not", renumbered.stdout)
        self.assertIn("2 skipped, 0 errors, 4 stale in", renumbered.stdout)
        self.assertTrue((self.out / "math" / "103_scaled_add.py").exists())
        forced = self.imported("--force")
        self.assertEqual(forced.returncode, 0, forced.stdout + forced.stderr)
        self.assertIn("removed  math/103_scaled_add.py", forced.stdout)
        self.assertFalse((self.out / "math" / "103_scaled_add.py").exists())
        self.assertTrue(mine.exists())
        self.assertEqual(len(list(self.out.glob("*/*.py"))), 7)


class BadInput(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.root = Path(self.folder.name)

    def tearDown(self) -> None:
        self.folder.cleanup()

    def test_a_missing_checkout_is_named(self) -> None:
        missing = self.root / "nowhere"
        run = mkb("suite", "import", "kernelbenchx", str(missing), "--out", str(self.root / "out"))
        self.assertEqual(run.returncode, 3)
        self.assertEqual(run.stderr, f"mkb suite import: {missing}: no such folder (give the root of a KernelBench-X "
                                     f"checkout)\n")
        self.assertFalse((self.root / "out").exists())

    def test_a_folder_without_the_task_layout_is_not_a_checkout(self) -> None:
        run = mkb("suite", "import", "kernelbenchx", str(self.root), "--out", str(self.root / "out"))
        self.assertEqual(run.returncode, 3)
        self.assertIn("not a KernelBench-X checkout (it has no data/kernelbenchx/ folder", run.stderr)

    def test_usage_errors_name_what_is_missing(self) -> None:
        no_out = mkb("suite", "import", "kernelbenchx", str(FIXTURE))
        self.assertEqual(no_out.returncode, 2)
        self.assertIn("--out DIR is required", no_out.stderr)
        other = mkb("suite", "import", "kernelbench", str(FIXTURE), "--out", str(self.root / "out"))
        self.assertEqual(other.returncode, 2)
        self.assertIn("unknown benchmark 'kernelbench'", other.stderr)

    def test_a_task_without_a_harness_and_a_broken_prompt_file_are_errors_with_file_and_line(self) -> None:
        checkout = clean_checkout(self.root)
        (checkout / "data" / "kernelbenchx" / "Math" / "bare.py").write_text("import torch\n\ndef bare(x):\n"
                                                                              "    return x\n")
        (checkout / "data" / "kernelbenchx_v1.json").write_text('[\n {"name": "torch.add",\n')
        run = mkb("suite", "import", "kernelbenchx", str(checkout), "--out", str(self.root / "out"))
        self.assertEqual(run.returncode, 3, run.stdout + run.stderr)
        self.assertIn("error    data/kernelbenchx_v1.json:3: is not JSON:", run.stdout)
        self.assertIn("error    Math/bare: data/kernelbenchx/Math/bare.py:1: has no test_*() harness function",
                      run.stdout)
        self.assertIn("6 imported", run.stdout)


if __name__ == "__main__":
    unittest.main()
