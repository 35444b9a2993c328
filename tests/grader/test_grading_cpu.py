"""grading on CPU: shipped cpusim solutions pass; each broken or cheating cpusim kernel gets its verdict; the grader
stays healthy after each (a good kernel grades normally right after)."""

import unittest

import gradertest
from gradertest import grade, hostile, problem, solution
from mkbgrader.parent.verdict import STAGES

ADD = problem("01_vector_add.py")
GOOD = solution("01_vector_add.cpusim.py")

# kernel → (stage, compliance_rule, words that must appear in error+mismatch)
HOSTILE = {
    "wrong_shape": ("correctness", "", "shape [32, 32] but the reference has shape [1024]"),
    "wrong_dtype": ("correctness", "", "dtype float64 but the reference has float32"),
    "list_instead_of_tensor": ("correctness", "", "output is a list but the reference returns a tensor"),
    "nan_output": ("correctness", "", "non-finite"),
    "off_by_small": ("correctness", "", "the allowance"),
    "mutates_inputs": ("correctness", "", "solve modified input 0 in place"),
    "no_launch": ("correctness", "no_launch", "made no cpusim kernel launch"),
    "discarded_launch": ("correctness", "launch_unused", "no returned output depends"),
    "copy_kernel": ("correctness", "eager_result_routed", "eager torch op aten.add"),
    "calls_reference": ("correctness", "calls_reference", "reference()"),
    "runtime_jit": ("correctness", "torch_jit", "torch.jit.script"),
    "runtime_subprocess": ("correctness", "subprocess", "subprocess.Popen"),
    "os_fork": ("correctness", "subprocess", "os.fork"),
    "sys_exit": ("correctness", "exit", "sys.exit"),
    "os_exit": ("correctness", "exit", "os._exit"),
    "segfault": ("correctness", "", "killed by signal SIGSEGV during stage correctness"),
    "patch_perf_counter": ("correctness", "tampering", "time.perf_counter was replaced"),
    "thread_left_running": ("correctness", "threads", "background threads"),
    "raises": ("correctness", "", "solve raised ValueError: not implemented yet"),
    "import_error": ("import", "", "kernel.py failed to import: ModuleNotFoundError"),
    "static_ctypes": ("static_check", "forbidden_import", "imports ctypes"),
    "no_kernel": ("static_check", "no_kernel", "defines no cpusim kernel"),
    "syntax_error": ("static_check", "", "does not parse: line 3"),
}


class CpuGradingTest(unittest.TestCase):
    def assert_good_still_grades(self) -> None:
        verdict = grade(ADD, GOOD)
        self.assertTrue(verdict["passed"], verdict["error"])

    def test_shipped_solutions_pass(self) -> None:
        for name in ("01_vector_add", "02_row_softmax", "03_argmax_rows", "04_quantize_rows"):
            with self.subTest(problem=name):
                verdict = grade(problem(name + ".py"), solution(name + ".cpusim.py"))
                self.assertTrue(verdict["passed"], verdict["error"])
                self.assertTrue(verdict["imported"] and verdict["correct"] and verdict["compliant"])
                self.assertEqual((verdict["stage"], verdict["correct_draws"], verdict["total_draws"]), ("done", 2, 2))
                self.assertEqual(verdict["failed_draws"], [])
                self.assertGreater(verdict["speedup_vs_eager"], 0)
                self.assertGreater(verdict["kernel_median_ms"], 0)
                self.assertTrue(verdict["recheck_correct"])
                self.assertGreater(verdict["roofline"]["bytes"], 0)
                # What each stage cost: the parent's static check, then the child's stages in the order it went
                # through them (outliers only where allowed).
                stages = list(verdict["stage_s"])
                self.assertEqual(stages[0], "static_check")
                self.assertEqual(stages[1:], [s for s in STAGES if s in stages[1:]])
                self.assertLessEqual({"static_check", "load", "import", "correctness", "warmup", "timing", "recheck",
                                      "roofline", "done"}, set(stages))
                self.assertTrue(all(seconds >= 0 for seconds in verdict["stage_s"].values()), verdict["stage_s"])

    def test_launch_on_private_copies_is_not_called_unused(self) -> None:
        for _ in range(3):
            verdict = grade(ADD, solution("01_vector_add_copies.cpusim.py"))
            self.assertTrue(verdict["passed"], verdict["error"])

    def test_launch_reading_an_earlier_launchs_indices_passes(self) -> None:
        verdict = grade(problem("03_argmax_rows.py"), solution("03_argmax_rows_two_launches.cpusim.py"))
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertTrue(verdict["compliant"])

    def test_discarded_integer_launch_is_unused(self) -> None:
        verdict = grade(problem("03_argmax_rows.py"), hostile("discarded_index_launch"))
        self.assertFalse(verdict["passed"])
        self.assertEqual(verdict["compliance_rule"], "launch_unused", verdict["error"])
        self.assertIn("no returned output depends", verdict["error"])
        self.assert_good_still_grades()

    def test_quant_problem_reports_metrics(self) -> None:
        verdict = grade(problem("04_quantize_rows.py"), solution("04_quantize_rows.cpusim.py"))
        self.assertTrue(verdict["quant"]["passed"])
        self.assertGreater(verdict["quant"]["cosine"], 0.99)
        self.assertIsNone(verdict["outliers_correct"])  # MKB_META turns outliers off

    def test_outliers_are_reported_separately(self) -> None:
        verdict = grade(ADD, GOOD)
        self.assertTrue(verdict["outliers_correct"])

    def test_hostile_kernels_get_their_verdicts(self) -> None:
        for name, (stage, rule, words) in HOSTILE.items():
            with self.subTest(kernel=name):
                verdict = grade(ADD, hostile(name), timeout_s=30.0)
                text = verdict["error"] + " | " + verdict["mismatch"]
                self.assertFalse(verdict["passed"], name)
                self.assertEqual(verdict["speedup_vs_eager"], 0.0)
                self.assertFalse(verdict["infrastructure_error"], text)
                if stage:
                    self.assertEqual(verdict["stage"], stage, text)
                self.assertEqual(verdict["compliance_rule"], rule, text)
                self.assertIn(words, text)
                if stage == "correctness" and not rule:  # wrong on every draw, or died before reporting one
                    self.assertEqual(verdict["failed_draws"], list(range(verdict["total_draws"])), text)
        self.assert_good_still_grades()

    def test_output_cached_by_data_pointer_fails_whenever_served(self) -> None:
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as marks:
            os.environ["MKB_TEST_MARKS"] = marks
            try:
                verdict = grade(ADD, hostile("cache_by_pointer"), timing_draws=20)
            finally:
                del os.environ["MKB_TEST_MARKS"]
            served = os.path.exists(os.path.join(marks, "cache_by_pointer.served"))
        if served:  # a remembered output was returned: no launch in that call, old values
            self.assertFalse(verdict["passed"])
            self.assertIn(verdict["compliance_rule"], ("no_launch", ""), verdict["error"])
            self.assertTrue(verdict["compliance_rule"] == "no_launch" or "incorrect" in verdict["error"])
        else:  # pointers never repeated, so every call did honest work
            self.assertTrue(verdict["passed"], verdict["error"])

    def test_spinning_kernel_times_out_with_its_stage(self) -> None:
        # The bound leaves room for the child's start-up on a busy machine (at 3 s it sometimes died in "import").
        verdict = grade(ADD, hostile("spin_forever"), timeout_s=10.0)
        self.assertTrue(verdict["timed_out"])
        self.assertEqual(verdict["stage"], "correctness", verdict["error"])
        self.assertIn("exceeded 10 s during stage correctness", verdict["error"])
        self.assert_good_still_grades()

    def test_megabytes_of_stdout_still_pass(self) -> None:
        verdict = grade(ADD, hostile("stdout_flood"))
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertGreater(verdict["log_bytes"], 5_000_000)
        self.assertLessEqual(len(verdict["log"]), 4096)

    def test_missing_problem_is_an_infrastructure_error(self) -> None:
        verdict = grade(problem("99_missing.py"), GOOD)
        self.assertTrue(verdict["infrastructure_error"])
        self.assertIn("does not exist", verdict["error"])

    def test_missing_dsl_package_says_not_installed(self) -> None:
        for dsl, hint in (("cutedsl", "pip install nvidia-cutlass-dsl"), ("tirx", "pip install")):
            with self.subTest(dsl=dsl):
                import importlib.util

                module = "cutlass" if dsl == "cutedsl" else "tvm"
                if importlib.util.find_spec(module) is not None:
                    self.skipTest(f"{module} is installed here")
                descriptor = {"id": dsl, "compliance": {"adapter": dsl}}
                from mkbgrader.parent.grade import grade as run_grade
                from mkbgrader.parent.settings import parse_settings

                verdict = run_grade({"problem": ADD, "kernel": GOOD, "dsl": dsl, "dsl_descriptor": descriptor,
                                     "device": "cpu"}, parse_settings(gradertest.FAST))
                self.assertEqual(verdict["stage"], "import")
                self.assertFalse(verdict["infrastructure_error"])
                self.assertFalse(verdict["imported"])
                self.assertIn(f"{dsl} is not installed", verdict["error"])
                self.assertIn(hint, verdict["error"])


if __name__ == "__main__":
    unittest.main()
