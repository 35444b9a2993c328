"""GPU (label gpu): CUDA C++ through mkb_cuda: compile cache, typed arguments, grading, and a discarded launch."""

import importlib.util
import os
import sys
import tempfile
import unittest

import gradertest
from gradertest import grade, problem, solution

# CUDA must never be initialised in this process: the grader forks evaluation children from it.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available() and importlib.util.find_spec("cupy") is not None
except ImportError:
    pass

HOSTILE_DIR = os.path.join(gradertest.REPO, "tests", "hostile")


@unittest.skipUnless(HAS_GPU, "needs an NVIDIA GPU with cupy")
class CudaGpuTest(unittest.TestCase):
    def in_child(self, work) -> dict:
        """Runs `work()` in a forked child (CUDA stays uninitialised here) and returns its result dict."""
        from mkbgrader.parent import sandbox

        def run(send) -> None:
            try:
                send({"t": "result", **work()})
            except BaseException as error:
                send({"t": "result", "error": f"{type(error).__name__}: {error}"})

        outcome = sandbox.run_in_child(run, 300)
        results = [m for m in outcome.messages if m.get("t") == "result"]
        self.assertTrue(results, f"child died: {outcome.exit_code} {outcome.exit_signal} {outcome.log[-2000:]}")
        return results[0]

    def test_compile_cache_and_typed_arguments(self) -> None:
        def work() -> dict:
            import time

            import mkb_cuda

            source = r'''
            extern "C" __global__ void fill(float* out, float a, double b, int n, long long big) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) out[i] = a + (float)b + (float)(big >> 32);
            }'''
            with tempfile.TemporaryDirectory() as cache:
                os.environ["MKB_CUDA_CACHE"] = cache
                started = time.perf_counter()
                kernel = mkb_cuda.compile(source, "fill")
                compile_s = time.perf_counter() - started
                cubins = len([f for f in os.listdir(cache) if f.endswith(".cubin")])
                out = torch.zeros(1000, device="cuda")
                kernel((4,), (256,), [out, 1.5, 2.25, 1000, 3 << 32])
                torch.cuda.synchronize()
                return {"cubins": cubins, "ok": bool(torch.all(out == 6.75)), "first": float(out[0]),
                        "compile_s": compile_s}

        result = self.in_child(work)
        self.assertNotIn("error", result, result.get("error"))
        print(f"\nmkb_cuda first compile: {result['compile_s']:.3f} s", file=sys.stderr)
        self.assertEqual(result["cubins"], 1)
        self.assertTrue(result["ok"], result["first"])

    def test_compile_error_is_reported_with_the_kernel_name(self) -> None:
        def work() -> dict:
            import mkb_cuda

            mkb_cuda.compile('extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }', "broken")
            return {}

        result = self.in_child(work)
        self.assertIn("NVRTC failed to compile broken", result.get("error", ""))

    def test_cuda_solution_passes(self) -> None:
        verdict = grade(problem("05_cuda_only_add.py"), solution("05_cuda_only_add.cuda.py"), dsl="cuda",
                        device="cuda:0", timeout_s=300.0, correctness_draws=5, warmup_draws=10, timing_draws=50,
                        recheck_draws=3)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertGreater(verdict["speedup_vs_eager"], 0.2)
        print("\ncuda 05_cuda_only_add:", {k: verdict[k] for k in ("kernel_median_ms", "eager_median_ms",
                                                                      "speedup_vs_eager", "eval_seconds")})

    def test_discarded_cuda_launch_fails(self) -> None:
        verdict = grade(problem("05_cuda_only_add.py"), solution("05_cuda_only_add.cuda_discarded.py"), dsl="cuda",
                        device="cuda:0", timeout_s=300.0)
        self.assertFalse(verdict["passed"])
        self.assertEqual(verdict["compliance_rule"], "launch_unused", verdict["error"])

    def test_hostile_corpus_good_cuda_passes(self) -> None:
        good = os.path.join(HOSTILE_DIR, "good", "good_cuda.py")
        silu = os.path.join(HOSTILE_DIR, "problem", "mlp_norm", "01_silu_mul.py")
        if not (os.path.isfile(good) and os.path.isfile(silu)):
            self.skipTest("tests/hostile is not present")
        verdict = grade(silu, good, dsl="cuda", device="cuda:0", timeout_s=300.0)
        self.assertTrue(verdict["passed"], verdict["error"])


if __name__ == "__main__":
    unittest.main()
