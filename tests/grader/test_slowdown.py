"""slowdown: a grade request's "slowdown" (mkb calibrate's A/B control) grades a really slowed copy: every timed call
is followed by a delay of slowdown × the kernel's own warm-up median inside the timed region (re-timing's
DeviceDelay), and the verdict records it; a plain request is graded as before and a bad value is refused."""

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


def grade_slowed(slowdown: object) -> dict:
    from mkbgrader.grade import grade
    from mkbgrader.settings import parse_settings

    request = {"problem": ADD, "kernel": GOOD, "dsl": "cpusim", "dsl_descriptor": gradertest.descriptor("cpusim"),
               "device": "cpu", "slowdown": slowdown}
    return grade(request, parse_settings({**gradertest.FAST, **SETTINGS}))


class SlowdownTest(unittest.TestCase):
    def test_a_slowed_copys_median_is_one_plus_s_times_its_own(self) -> None:
        slowdown = 1.0
        verdict = grade_slowed(slowdown)
        self.assertTrue(verdict["passed"], verdict["error"])
        self.assertEqual(verdict["slowdown"], slowdown)
        delay_ms = verdict["slowdown_delay_ms"]
        self.assertGreater(delay_ms, 0)
        own_ms = delay_ms / slowdown  # the kernel's own warm-up median, which sized the delay
        # A busy delay inside the timed region: no timed call can be shorter than it.
        self.assertGreaterEqual(verdict["kernel_median_ms"], delay_ms)
        ratio = verdict["kernel_median_ms"] / own_ms
        self.assertTrue(0.8 * (1 + slowdown) < ratio < 1.3 * (1 + slowdown), (ratio, verdict["kernel_median_ms"], own_ms))

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


if __name__ == "__main__":
    unittest.main()
