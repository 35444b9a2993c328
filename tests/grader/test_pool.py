"""pool: pooled correctness draws through the real server on cpu (cpusim): one reference and anchor per draw for every
kernel, each kernel judged alone, a failing kernel leaving the pool, a dying one leaving the rest incomplete."""

import json
import os
import subprocess
import tempfile
import unittest

import gradertest

COUNTED_ADD = os.path.join(gradertest.FIXTURES, "problems", "_pool", "counted_add.py")
GOOD = gradertest.solution("01_vector_add.cpusim.py")
COPIES = gradertest.solution("01_vector_add_copies.cpusim.py")


def kernel(label: str, path: str) -> dict:
    return {"label": label, "kernel": path, "dsl": "cpusim", "dsl_descriptor": gradertest.descriptor("cpusim")}


class PoolServerTest(unittest.TestCase):
    server: subprocess.Popen
    counter = 0

    @classmethod
    def setUpClass(cls) -> None:
        cls.scratch = tempfile.TemporaryDirectory()
        cls.log = os.path.join(cls.scratch.name, "references.log")
        cls.server, _ = gradertest.start_server({"MKB_TEST_REFERENCE_LOG": cls.log})

    @classmethod
    def tearDownClass(cls) -> None:
        gradertest.stop_server(cls.server)
        cls.scratch.cleanup()

    def setUp(self) -> None:
        if os.path.exists(self.log):
            os.remove(self.log)

    def references_run(self) -> list[str]:
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as handle:
            return handle.read().split()

    def ask(self, kernels: list, draws: int = 4, **extra: object) -> dict:
        PoolServerTest.counter += 1
        request_id = f"pool{self.counter}"
        request = {"type": "pool", "id": request_id, "problem": COUNTED_ADD, "device": "cpu", "kernels": kernels,
                   "settings": {"correctness_draws": draws, "warmup_draws": 0, "timing_draws": 0, "recheck_draws": 0,
                                "outliers": False, "timeout_s": 60}, **extra}
        self.server.stdin.write(json.dumps(request) + "\n")
        self.server.stdin.flush()
        while True:
            reply = json.loads(self.server.stdout.readline())
            self.assertEqual(reply.get("id"), request_id, reply)
            if reply["type"] != "stage":
                return reply

    def entries(self, reply: dict) -> dict:
        self.assertEqual(reply["type"], "pool", reply)
        return {entry["label"]: entry for entry in reply["pool"]["kernels"]}

    def test_each_draws_reference_and_anchor_run_once_for_all_kernels(self) -> None:
        reply = self.ask([kernel("a", GOOD), kernel("b", COPIES), kernel("c", GOOD)], draws=4)
        result = reply["pool"]
        self.assertTrue(result["ok"], result)
        self.assertEqual(result["draws"], 4)
        self.assertEqual(list(result["stage_s"]), ["load", "import", "correctness", "done"])
        for label, entry in self.entries(reply).items():
            self.assertTrue(entry["complete"], label)
            self.assertEqual(len(entry["sha256"]), 64)
            verdict = entry["verdict"]
            self.assertEqual((verdict["correct_draws"], verdict["total_draws"], verdict["failed_draws"]),
                             (4, 4, []), (label, verdict))
            self.assertTrue(verdict["correct"], verdict)
            self.assertTrue(verdict["compliant"])
        # One reference (float32) and one float64 anchor per draw, whatever the number of kernels: 8 calls, where
        # three kernels checked one by one ran 24.
        calls = self.references_run()
        self.assertEqual(sorted(set(calls)), ["torch.float32", "torch.float64"], calls)
        self.assertEqual(len(calls), 8, calls)

    def test_a_wrong_kernel_is_judged_alone_and_the_others_hold(self) -> None:
        reply = self.ask([kernel("good", GOOD), kernel("off", gradertest.hostile("off_by_small"))], draws=3)
        entries = self.entries(reply)
        self.assertTrue(reply["pool"]["ok"], reply)
        self.assertEqual(entries["good"]["verdict"]["correct_draws"], 3)
        off = entries["off"]["verdict"]
        self.assertTrue(entries["off"]["complete"])
        self.assertEqual((off["correct_draws"], off["failed_draws"]), (0, [0, 1, 2]), off)
        self.assertIn("draw 1", off["mismatch"])

    def test_a_kernel_that_raises_leaves_the_pool_and_the_others_finish(self) -> None:
        reply = self.ask([kernel("raises", gradertest.hostile("raises")), kernel("good", GOOD)], draws=3)
        entries = self.entries(reply)
        self.assertTrue(entries["raises"]["complete"])
        self.assertIn("solve raised", entries["raises"]["verdict"]["error"])
        self.assertFalse(entries["raises"]["verdict"]["infrastructure_error"])
        self.assertEqual(entries["good"]["verdict"]["correct_draws"], 3)
        self.assertTrue(reply["pool"]["ok"], reply)

    def test_a_kernel_refused_by_the_static_check_is_judged_and_the_others_run(self) -> None:
        reply = self.ask([kernel("ctypes", gradertest.hostile("static_ctypes")), kernel("good", GOOD)], draws=2)
        entries = self.entries(reply)
        refused = entries["ctypes"]["verdict"]
        self.assertEqual(refused["stage"], "static_check")
        self.assertFalse(refused["compliant"])
        self.assertEqual(entries["good"]["verdict"]["correct_draws"], 2)

    def test_a_dying_kernel_leaves_the_unfinished_kernels_incomplete_and_names_itself(self) -> None:
        reply = self.ask([kernel("good", GOOD), kernel("dies", gradertest.hostile("segfault"))], draws=3)
        result = reply["pool"]
        entries = self.entries(reply)
        self.assertFalse(result["ok"])
        self.assertIn("dies", result["error"])
        self.assertIn("SIGSEGV", result["error"])
        # Neither finished: the caller checks each of them alone.
        self.assertFalse(entries["good"]["complete"])
        self.assertIsNone(entries["good"]["verdict"])
        self.assertFalse(entries["dies"]["complete"])

    def test_malformed_requests_get_one_line_naming_the_field(self) -> None:
        reply = self.ask([])
        self.assertEqual(reply["type"], "error")
        self.assertIn("1 to 8 kernels", reply["message"])
        reply = self.ask([kernel("a", GOOD), kernel("a", COPIES)])
        self.assertIn("used twice", reply["message"])
        reply = self.ask([{**kernel("a", GOOD), "slowdown": 0.5}])
        self.assertIn("no slowdown", reply["message"])


if __name__ == "__main__":
    unittest.main()
