"""server: the next evaluation child is forked ahead of time, serves the next grading, and is discarded cleanly
(no zombie, no leftover) when it died, does not match, waited too long or the server stops; children never share
state."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import gradertest

SETTINGS = {"correctness_draws": 1, "warmup_draws": 0, "timing_draws": 1, "recheck_draws": 0, "outliers": False}

_SOLUTION = open(gradertest.solution("01_vector_add.cpusim.py"), encoding="utf-8").read()
# Leaves a mark in its process's interpreter; a later grading that still saw it would answer wrongly.
_MARKS = _SOLUTION + "\nimport builtins\nbuiltins.mkb_left_by_an_earlier_kernel = True\n"
_CHECKS = _SOLUTION.replace("    return out", "    import builtins\n"
                            "    return out + 1 if hasattr(builtins, 'mkb_left_by_an_earlier_kernel') else out")


def children_of(pid: int) -> dict[int, str]:
    """The live children of `pid` with their state letter (Z for a zombie)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found[int(entry)] = fields[0]
    return found


def wait_for(condition, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


class PrestartTest(unittest.TestCase):
    def start(self, **env: str) -> subprocess.Popen:
        environment = {**os.environ, "PYTHONPATH": gradertest.GRADER, "PYTHONDONTWRITEBYTECODE": "1", **env}
        server = subprocess.Popen([sys.executable, "-m", "mkbgrader", "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=environment)
        self.addCleanup(lambda: (server.kill(), server.wait()) if server.poll() is None else None)
        self.addCleanup(server.stdout.close)
        self.addCleanup(server.stdin.close)
        self.assertEqual(json.loads(server.stdout.readline())["type"], "ready")
        return server

    def grade(self, server: subprocess.Popen, kernel: str, descriptor: dict = None, **extra) -> dict:
        request = {"type": "grade", "id": kernel, "problem": gradertest.problem("01_vector_add.py"), "kernel": kernel,
                   "dsl": "cpusim", "dsl_descriptor": descriptor or gradertest.descriptor("cpusim"), "device": "cpu",
                   "settings": SETTINGS, **extra}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if reply["type"] in ("verdict", "error"):
                return reply

    def waiting_child(self, server: subprocess.Popen) -> int:
        self.assertTrue(wait_for(lambda: len(children_of(server.pid)) == 1), children_of(server.pid))
        (pid, state), = children_of(server.pid).items()
        self.assertNotEqual(state, "Z")
        return pid

    def stop(self, server: subprocess.Popen) -> None:
        server.stdin.write(json.dumps({"type": "shutdown"}) + "\n")
        server.stdin.flush()
        self.assertEqual(server.wait(timeout=30), 0)

    def kernel(self, folder: str, name: str, source: str) -> str:
        path = os.path.join(folder, name, "kernel.py")
        os.makedirs(os.path.dirname(path))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        return path

    def answers_wrongly_once_marked(self, path: str) -> bool:
        import builtins
        import importlib.util

        import torch

        sys.path.insert(0, os.path.join(gradertest.FIXTURES, "cpusim_lib"))
        spec = importlib.util.spec_from_file_location("mkb_checks_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        x, y = torch.ones(300), torch.ones(300)
        builtins.mkb_left_by_an_earlier_kernel = True
        try:
            return not torch.equal(module.solve(x, y), x + y)
        finally:
            del builtins.mkb_left_by_an_earlier_kernel

    def test_the_second_grading_runs_in_the_child_started_after_the_first(self) -> None:
        server = self.start()
        self.assertEqual(children_of(server.pid), {}, "nothing is pre-started before the first grading")
        first = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        self.assertTrue(first["verdict"]["passed"], first["verdict"]["error"])
        self.assertFalse(first["prestarted"])
        waiting = self.waiting_child(server)
        second = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        self.assertTrue(second["verdict"]["passed"], second["verdict"]["error"])
        self.assertTrue(second["prestarted"])
        self.assertTrue(wait_for(lambda: waiting not in children_of(server.pid)), "the used child was not reaped")
        self.assertNotEqual(self.waiting_child(server), waiting, "a child must serve one grading only")
        self.stop(server)

    def test_the_child_for_the_next_grading_is_forked_as_a_grading_starts(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            slow = self.kernel(folder, "slow", _SOLUTION.replace("    return out", "    import time\n"
                                                                  "    time.sleep(0.3)\n    return out"))
            server = self.start()
            request = {"type": "grade", "id": "slow", "problem": gradertest.problem("01_vector_add.py"),
                       "kernel": slow, "dsl": "cpusim", "dsl_descriptor": gradertest.descriptor("cpusim"),
                       "device": "cpu", "settings": {**SETTINGS, "correctness_draws": 6}}
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            self.assertTrue(wait_for(lambda: len(children_of(server.pid)) == 2, 20),
                            f"while the first grading runs, the next child waits beside it: {children_of(server.pid)}")
            while json.loads(server.stdout.readline())["type"] != "verdict":
                pass
            self.stop(server)

    def test_the_next_grading_named_in_a_request_is_the_one_pre_started(self) -> None:
        other = {**gradertest.descriptor("cpusim"), "install_hint": "another"}
        server = self.start()
        first = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"),
                           next={"dsl": "cpusim", "dsl_descriptor": other})
        self.assertTrue(first["verdict"]["passed"], first["verdict"]["error"])
        self.waiting_child(server)
        second = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"), other)
        self.assertTrue(second["prestarted"], "the child pre-started for the named next grading was not used")
        third = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        self.assertFalse(third["prestarted"], "without a next, the child is for the request's own DSL (another here)")
        for bad, words in (("triton", "next must be an object"), ({"dsl": ""}, "next must be an object"),
                           ({"dsl": "cpusim", "dsl_descriptor": []}, "next.dsl_descriptor must be a JSON object")):
            with self.subTest(next=bad):
                reply = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"), next=bad)
                self.assertEqual(reply["type"], "error")
                self.assertIn(words, reply["message"])
        self.stop(server)

    def test_a_grading_without_room_says_a_child_was_warming_beside_it(self) -> None:
        # MKB_GRADER_MEMORY_BYTES makes the float64 anchor "not fit" on the CPU, as a nearly full GPU would.
        for env, beside in (({}, True), ({"MKB_GRADER_PRESTART": "0"}, False)):
            with self.subTest(env=env):
                server = self.start(MKB_GRADER_MEMORY_BYTES="64", **env)
                reply = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
                error = reply["verdict"]["error"]
                self.assertTrue(error.startswith("cannot grade:"), error)
                self.assertTrue(reply["verdict"]["infrastructure_error"])
                self.assertEqual("a child pre-started for the next grading was running beside this one" in error,
                                 beside, error)
                if beside:
                    self.assertIn("MKB_GRADER_PRESTART=0 leaves the whole device to each grading", error)
                self.stop(server)

    def test_a_pre_started_child_that_crashed_is_reaped_and_the_grading_forks_afresh(self) -> None:
        server = self.start()
        self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        waiting = self.waiting_child(server)
        os.kill(waiting, 9)
        self.assertTrue(wait_for(lambda: waiting not in children_of(server.pid)),
                        f"the crashed child is left as {children_of(server.pid).get(waiting)}")
        reply = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        self.assertTrue(reply["verdict"]["passed"], reply["verdict"]["error"])
        self.assertFalse(reply["prestarted"])
        self.waiting_child(server)
        self.stop(server)

    def test_a_child_for_another_descriptor_or_one_that_waited_too_long_is_discarded(self) -> None:
        for env, descriptor in (({}, {**gradertest.descriptor("cpusim"), "install_hint": "another"}),
                                ({"MKB_GRADER_PRESTART_MAX_WAIT_S": "0"}, None)):
            with self.subTest(env=env):
                server = self.start(**env)
                self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
                waiting = self.waiting_child(server)
                reply = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"), descriptor)
                self.assertTrue(reply["verdict"]["passed"], reply["verdict"]["error"])
                self.assertFalse(reply["prestarted"])
                self.assertNotIn(waiting, children_of(server.pid), "the discarded child was not reaped")
                self.stop(server)

    def test_shutdown_leaves_no_process_behind(self) -> None:
        server = self.start()
        self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        waiting = self.waiting_child(server)
        self.stop(server)
        self.assertTrue(wait_for(lambda: not os.path.exists(f"/proc/{waiting}")), "the waiting child outlived its server")

    def test_a_mark_left_by_one_kernel_never_reaches_the_next_grading(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            marks, checks = self.kernel(folder, "marks", _MARKS), self.kernel(folder, "checks", _CHECKS)
            self.assertTrue(self.answers_wrongly_once_marked(checks), "the checking kernel must notice the mark")
            server = self.start()
            self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
            self.waiting_child(server)
            first = self.grade(server, marks)
            self.assertTrue(first["prestarted"])
            self.assertTrue(first["verdict"]["passed"], first["verdict"]["error"])
            second = self.grade(server, checks)
            self.assertTrue(second["prestarted"])
            self.assertTrue(second["verdict"]["passed"], "the pre-started child saw the earlier kernel's mark: "
                            + str(second["verdict"]["error"]))
            self.stop(server)

    def test_pre_starting_can_be_turned_off(self) -> None:
        server = self.start(MKB_GRADER_PRESTART="0")
        self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        reply = self.grade(server, gradertest.solution("01_vector_add.cpusim.py"))
        self.assertFalse(reply["prestarted"])
        self.assertEqual(children_of(server.pid), {})
        self.stop(server)


class WarmUpLockTest(unittest.TestCase):
    """The warm-up holds the device's timing lock (not the device lock mkb holds around the grading
    it runs beside), and gives up (stays cold) when its request comes first; nothing here touches CUDA: warm_up
    itself is replaced."""

    def run_warm_up(self, lock_path: str, arrivals: list, device: str = "cuda:0") -> tuple[list, list]:
        import fcntl

        from mkbgrader.child import warmup

        calls, held_inside = [], []

        def fake_warm_up(device: str, dsls: list) -> None:
            calls.append(device)
            probe = os.open(lock_path + ".timing", os.O_RDWR)
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held_inside.append(False)
                fcntl.flock(probe, fcntl.LOCK_UN)
            except BlockingIOError:
                held_inside.append(True)
            finally:
                os.close(probe)

        original, warmup.warm_up = warmup.warm_up, fake_warm_up
        try:
            warmup.warm_up_under_lock(device, [("triton", {})], lock_path, lambda seconds: arrivals.pop(0))
        finally:
            warmup.warm_up = original
        return calls, held_inside

    def test_the_warm_up_runs_holding_the_timing_lock_beside_a_grading_that_holds_the_device_lock(self) -> None:
        import fcntl

        with tempfile.TemporaryDirectory() as folder:
            lock_path = os.path.join(folder, "mkb-gpu0.lock")
            grading = os.open(lock_path, os.O_RDWR | os.O_CREAT)
            fcntl.flock(grading, fcntl.LOCK_EX)  # mkb's current grading, in its correctness draws
            try:
                calls, held_inside = self.run_warm_up(lock_path, [])
            finally:
                os.close(grading)
            self.assertEqual(calls, ["cuda:0"])
            self.assertEqual(held_inside, [True], "the warm-up ran without the device's timing lock")

    def test_on_the_cpu_too_the_warm_up_holds_the_timing_lock(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            calls, held_inside = self.run_warm_up(os.path.join(folder, "mkb-cpu.lock"), [], device="cpu")
            self.assertEqual(calls, ["cpu"])
            self.assertEqual(held_inside, [True], "a warm-up on the CPU ran without the timing lock")

    def test_a_request_that_arrives_while_the_lock_is_busy_leaves_the_child_cold(self) -> None:
        import fcntl

        with tempfile.TemporaryDirectory() as folder:
            lock_path = os.path.join(folder, "mkb-gpu0.lock")
            holder = os.open(lock_path + ".timing", os.O_RDWR | os.O_CREAT)
            fcntl.flock(holder, fcntl.LOCK_EX)  # a grading on this device is being timed
            try:
                arrivals = [False, False, True]
                calls, _ = self.run_warm_up(lock_path, arrivals)
            finally:
                os.close(holder)
            self.assertEqual(calls, [], "the warm-up ran while another grading held the device")
            self.assertEqual(arrivals, [], "it polled for its request until it came")


class OverheadBenchTest(unittest.TestCase):
    def test_the_overhead_bench_runs_all_three_sides_on_cpu(self) -> None:
        bench = os.path.join(gradertest.REPO, "bench", "grader_overhead.py")
        done = subprocess.run([sys.executable, bench, "--device", "cpu", "--dsl", "cpusim", "--evaluations", "2",
                               "--cold-evaluations", "1", "--pause", "0.2"], capture_output=True, text=True,
                              timeout=240)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        for label in ("cold process per evaluation", "child forked per request", "pre-started child  ",
                      "ratio cold / pre-started", "goal (pre-started"):
            self.assertIn(label, done.stdout)
        self.assertIn("[2/2 pre-started]", done.stdout, "the paused side must run every counted evaluation warm")


if __name__ == "__main__":
    unittest.main()
