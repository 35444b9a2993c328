"""slowdown: a grade request's "slowdown" (mkb calibrate's A/B control) grades a really slowed copy: every timed call
is followed by a delay of slowdown × the kernel's own warm-up median inside the timed region (re-timing's
DeviceDelay), and the verdict records it; a plain request is graded as before and a bad value is refused."""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

import gradertest
from gradertest import problem, solution

ADD = problem("01_vector_add.py")
GOOD = solution("01_vector_add.cpusim.py")
SETTINGS = {"warmup_draws": 9, "timing_draws": 21}

# CUDA must never be initialised in this process: the grader forks evaluation children from it.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available() and importlib.util.find_spec("triton") is not None
except ImportError:
    pass


def grade_slowed(slowdown: object, problem_path: str = ADD, kernel: str = GOOD, dsl: str = "cpusim",
                 device: str = "cpu", **overrides: object) -> dict:
    from mkbgrader.parent.grade import grade
    from mkbgrader.parent.settings import parse_settings

    request = {"problem": problem_path, "kernel": kernel, "dsl": dsl, "dsl_descriptor": gradertest.descriptor(dsl),
               "device": device, "slowdown": slowdown}
    return grade(request, parse_settings({**gradertest.FAST, **SETTINGS, **overrides}))


class SlowdownTest(unittest.TestCase):
    def test_a_slowed_copys_median_is_one_plus_s_times_its_own(self) -> None:
        # s = 3: the delay is three quarters of a slowed call, so the check holds however much the tiny CPU kernel's
        # own time moves between warm-up and timing on a busy machine (it moved 0.6x its warm-up median in CI).
        slowdown = 3.0
        verdict = grade_slowed(slowdown)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertEqual(verdict["slowdown"], slowdown)
        delay_ms = verdict["slowdown_delay_ms"]
        self.assertGreater(delay_ms, 0)
        own_ms = delay_ms / slowdown  # the kernel's own warm-up median, which sized the delay
        # A busy delay inside the timed region: no timed call can be shorter than it.
        self.assertGreaterEqual(verdict["kernel_median_ms"], delay_ms)
        ratio = verdict["kernel_median_ms"] / own_ms
        self.assertTrue(slowdown + 0.2 < ratio < 1.3 * (1 + slowdown), (ratio, verdict["kernel_median_ms"], own_ms))

    def test_a_plain_grading_records_no_slowdown(self) -> None:
        verdict = gradertest.grade(ADD, GOOD, **SETTINGS)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertEqual(verdict["slowdown"], 0.0)
        self.assertIsNone(verdict["slowdown_delay_ms"])
        self.assertTrue(grade_slowed(0)["slowdown_delay_ms"] is None)

    def test_a_bad_slowdown_is_an_infrastructure_error_naming_it(self) -> None:
        for bad in (-0.1, "0.1", True, float("nan")):
            with self.subTest(slowdown=bad):
                verdict = grade_slowed(bad)
                self.assertFalse(verdict["passed"])
                self.assertTrue(verdict["infrastructure_error"])
                self.assertIn("slowdown must be a non-negative number", verdict["error"])

    def test_the_server_refuses_a_bad_slowdown(self) -> None:
        env = {**os.environ, "PYTHONPATH": gradertest.GRADER, "PYTHONDONTWRITEBYTECODE": "1"}
        server = subprocess.Popen([sys.executable, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.addCleanup(server.wait, 30)  # runs last: after the kill below
        self.addCleanup(lambda: server.kill() if server.poll() is None else None)
        self.addCleanup(server.stdout.close)
        self.addCleanup(server.stdin.close)
        self.assertEqual(json.loads(server.stdout.readline())["type"], "ready")
        request = {"type": "grade", "id": "s1", "problem": ADD, "kernel": GOOD, "dsl": "cpusim",
                   "dsl_descriptor": gradertest.descriptor("cpusim"), "device": "cpu", "slowdown": -1}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        self.assertEqual((reply["type"], reply["id"]), ("error", "s1"))
        self.assertIn("slowdown must be a non-negative number", reply["message"])


class OwnStreamDelayTest(unittest.TestCase):
    """A DSL on a stream of its own (Pallas: JAX's stream) is slowed only after the device is idle, so the spin follows
    the kernel instead of running beside it; a kernel on torch's stream gets the spin alone (no host round trip)."""

    def delay_with_recorded_calls(self) -> tuple:
        from mkbgrader.child.delay import DeviceDelay

        calls: list = []
        delay = DeviceDelay("cpu")
        delay.cuda, delay.cycles_per_s, delay.how = True, 1e9, "torch.cuda._sleep"
        delay.sleep = lambda cycles: calls.append(("sleep", cycles))
        delay.synchronize = lambda: calls.append(("synchronize",))
        return delay, calls

    def test_an_own_stream_kernel_waits_for_the_device_before_the_spin(self) -> None:
        delay, calls = self.delay_with_recorded_calls()
        slowed = delay.slowed(lambda x: calls.append(("kernel", x)) or x + 1, 0.001, own_stream=True)
        self.assertEqual(slowed(1), 2)
        self.assertEqual(calls, [("kernel", 1), ("synchronize",), ("sleep", 1_000_000)])
        self.assertEqual(delay.how_for(True), "torch.cuda.synchronize + torch.cuda._sleep")

    def test_a_kernel_on_torchs_stream_gets_the_spin_alone(self) -> None:
        delay, calls = self.delay_with_recorded_calls()
        slowed = delay.slowed(lambda x: calls.append(("kernel", x)) or x, 0.001)
        slowed(3)
        self.assertEqual(calls, [("kernel", 3), ("sleep", 1_000_000)])
        self.assertEqual(delay.how_for(False), "torch.cuda._sleep")

    def test_only_pallas_declares_a_stream_of_its_own(self) -> None:
        from mkbgrader.child.dsls import adapter_for

        for dsl, own in (("pallas", True), ("numba", False), ("triton", False), ("cuda", False)):
            self.assertEqual(adapter_for(dsl, {}).own_stream, own, dsl)


@unittest.skipUnless(HAS_GPU, "needs an NVIDIA GPU with triton")
class GpuSlowdownTest(unittest.TestCase):
    def test_a_ten_percent_slowdown_on_cuda_is_ten_percent_of_the_kernels_own_median(self) -> None:
        verdict = grade_slowed(0.10, problem("05_cuda_only_add.py"), solution("05_cuda_only_add.triton.py"), "triton",
                               "cuda:0", timeout_s=300.0, correctness_draws=5, warmup_draws=10, timing_draws=50)
        self.assertTrue(verdict["passed"], verdict["error"])
        own_ms = verdict["slowdown_delay_ms"] / 0.10
        ratio = verdict["kernel_median_ms"] / own_ms
        print("\ncuda slowdown 0.10:", {"kernel_median_ms": verdict["kernel_median_ms"], "own_ms": own_ms,
                                        "ratio": ratio})
        self.assertTrue(1.05 < ratio < 1.16, (ratio, verdict["kernel_median_ms"], own_ms))


if __name__ == "__main__":
    unittest.main()
