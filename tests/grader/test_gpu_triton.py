"""GPU (label gpu): Triton kernels graded on CUDA: a shipped solution passes with timings; cheats fail."""

import importlib.util
import os
import unittest

import gradertest
from gradertest import grade, problem, solution

# CUDA must never be initialised in this process: the grader forks evaluation children from it.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available() and importlib.util.find_spec("triton") is not None
except ImportError:
    pass

HOSTILE_DIR = os.path.join(gradertest.REPO, "tests", "hostile")


@unittest.skipUnless(HAS_GPU, "needs an NVIDIA GPU with triton")
class TritonGpuTest(unittest.TestCase):
    def test_triton_solution_passes_with_timings(self) -> None:
        verdict = grade(problem("05_cuda_only_add.py"), solution("05_cuda_only_add.triton.py"), dsl="triton",
                        device="cuda:0", timeout_s=300.0, correctness_draws=5, warmup_draws=10, timing_draws=50,
                        recheck_draws=3)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertEqual(verdict["correct_draws"], 5)
        self.assertGreater(verdict["kernel_median_ms"], 0)
        self.assertGreater(verdict["eager_median_ms"], 0)
        self.assertGreater(verdict["speedup_vs_eager"], 0.2)
        self.assertTrue(verdict["recheck_correct"])
        print("\ntriton 05_cuda_only_add:", {k: verdict[k] for k in ("kernel_median_ms", "eager_median_ms",
                                                                        "speedup_vs_eager", "eval_seconds")})

    def test_kernel_only_timing_reports_iqr(self) -> None:
        verdict = grade(problem("05_cuda_only_add.py"), solution("05_cuda_only_add.triton.py"), dsl="triton",
                        device="cuda:0", timeout_s=300.0, kernel_only_timing=True, timing_draws=10)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertTrue(verdict["kernel_only_timing"])
        self.assertIsNotNone(verdict["kernel_iqr_ms"])

    def test_hostile_corpus_good_triton_passes(self) -> None:
        good = os.path.join(HOSTILE_DIR, "good", "good_triton.py")
        silu = os.path.join(HOSTILE_DIR, "problem", "mlp_norm", "01_silu_mul.py")
        if not (os.path.isfile(good) and os.path.isfile(silu)):
            self.skipTest("tests/hostile is not present")
        verdict = grade(silu, good, dsl="triton", device="cuda:0", timeout_s=300.0)
        self.assertTrue(verdict["passed"], verdict["error"])

    def test_copy_kernel_cheat_fails(self) -> None:
        cheat = os.path.join(HOSTILE_DIR, "kernels", "copy_kernel.py")
        silu = os.path.join(HOSTILE_DIR, "problem", "mlp_norm", "01_silu_mul.py")
        if not os.path.isfile(cheat):
            self.skipTest("tests/hostile is not present")
        verdict = grade(silu, cheat, dsl="triton", device="cuda:0", timeout_s=300.0)
        self.assertFalse(verdict["passed"])
        self.assertEqual(verdict["compliance_rule"], "eager_result_routed", verdict["error"])


if __name__ == "__main__":
    unittest.main()
