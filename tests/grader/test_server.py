"""server: the JSON-lines protocol round trip (ready, stages, verdict, error replies, shutdown), stdout kept clean."""

import json
import os
import subprocess
import sys
import unittest

import gradertest


class ServerTest(unittest.TestCase):
    def start(self) -> subprocess.Popen:
        env = {**os.environ, "PYTHONPATH": gradertest.GRADER, "PYTHONDONTWRITEBYTECODE": "1"}
        server = subprocess.Popen([sys.executable, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.addCleanup(lambda: server.kill() if server.poll() is None else None)
        self.addCleanup(server.stdout.close)
        self.addCleanup(server.stderr.close)
        self.addCleanup(server.stdin.close)
        return server

    def send(self, server: subprocess.Popen, message: object) -> None:
        server.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        server.stdin.flush()

    def read(self, server: subprocess.Popen) -> dict:
        line = server.stdout.readline()
        self.assertTrue(line, "the server closed stdout")
        return json.loads(line)  # every line on stdout must be JSON

    def until(self, server: subprocess.Popen, kind: str) -> tuple[dict, list[dict]]:
        seen = []
        while True:
            reply = self.read(server)
            seen.append(reply)
            if reply["type"] == kind:
                return reply, seen

    def test_round_trip(self) -> None:
        server = self.start()
        ready = self.read(server)
        self.assertEqual(ready["type"], "ready")
        self.assertEqual(ready["protocol"], 1)
        self.assertEqual(len(ready["grader_fingerprint"]), 64)
        self.assertTrue(ready["torch"])

        request = {"type": "grade", "id": "g1", "problem": gradertest.problem("01_vector_add.py"),
                   "kernel": gradertest.hostile("stdout_flood"), "dsl": "cpusim",
                   "dsl_descriptor": gradertest.descriptor("cpusim"), "device": "cpu",
                   "settings": {"correctness_draws": 2, "warmup_draws": 1, "timing_draws": 3, "recheck_draws": 1},
                   "peaks": {"copy_gbps": 100.0, "tflops": {"float32": 1.0}}}
        self.send(server, request)
        verdict, seen = self.until(server, "verdict")
        stages = [r["stage"] for r in seen if r["type"] == "stage"]
        self.assertEqual(stages[:3], ["static_check", "load", "import"])
        self.assertEqual(stages[-1], "done")
        self.assertEqual(verdict["id"], "g1")
        body = verdict["verdict"]
        self.assertTrue(body["passed"], body["error"])
        for key in ("imported", "correct", "passed", "speedup_vs_eager", "stage", "error", "infrastructure_error",
                    "timed_out", "correct_draws", "total_draws", "mismatch", "compliant", "compliance_rule",
                    "kernel_median_ms", "eager_median_ms", "kernel_iqr_ms", "throttled", "outliers_correct", "quant",
                    "roofline", "eval_seconds"):
            self.assertIn(key, body)
        self.assertIsNotNone(body["roofline"]["iou"])

        self.send(server, "this is not json")
        self.assertEqual(self.read(server)["type"], "error")
        self.send(server, {"type": "grade", "id": "g2", "problem": "/x.py", "kernel": "/y.py", "dsl": "cpusim",
                           "settings": {"draws": 3}})
        error = self.read(server)
        self.assertEqual((error["type"], error["id"]), ("error", "g2"))
        self.assertIn("unknown settings key 'draws'", error["message"])
        self.send(server, {"type": "grade", "id": "g3"})
        self.assertIn("lacks problem, kernel, dsl", self.read(server)["message"])
        self.send(server, {"type": "launch_rockets", "id": "g4"})
        self.assertIn("unknown request type", self.read(server)["message"])
        self.send(server, {"type": "probe", "id": "p1", "device": "cpu"})
        self.assertEqual(self.read(server)["type"], "error")

        # After all of that the server still grades.
        self.send(server, {**request, "id": "g5", "kernel": gradertest.hostile("sys_exit")})
        verdict, _ = self.until(server, "verdict")
        self.assertEqual(verdict["verdict"]["compliance_rule"], "exit")

        self.send(server, {"type": "shutdown"})
        self.assertEqual(server.wait(timeout=30), 0)
        self.assertEqual(server.stdout.read(), "")


if __name__ == "__main__":
    unittest.main()
