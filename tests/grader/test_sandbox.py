"""sandbox: the forked child's timeout kills its whole process group, output is capped, silent deaths are seen."""

import os
import signal
import tempfile
import time
import unittest

import gradertest  # noqa: F401
from mkbgrader.parent import sandbox


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); read its state.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


_SERVER_THAT_GETS_KILLED = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from mkbgrader.parent import sandbox

def work(send):
    with open(sys.argv[2], "w") as handle:
        handle.write(str(__import__("os").getpid()))
    time.sleep(120)

sandbox.run_in_child(work, 300)
"""


class SandboxTest(unittest.TestCase):
    def test_child_dies_with_a_killed_server(self) -> None:
        import subprocess
        import sys

        package = gradertest.GRADER
        with tempfile.TemporaryDirectory() as folder:
            pid_file = os.path.join(folder, "child.pid")
            server = subprocess.Popen([sys.executable, "-c", _SERVER_THAT_GETS_KILLED, package, pid_file])
            deadline = time.monotonic() + 30
            while not (os.path.exists(pid_file) and os.path.getsize(pid_file)) and time.monotonic() < deadline:
                time.sleep(0.05)
            child = int(open(pid_file).read())
            self.assertTrue(_alive(child))
            server.kill()  # SIGKILL: no cleanup code of the server runs
            server.wait()
            deadline = time.monotonic() + 10
            while _alive(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(_alive(child), "the evaluation child outlived its killed grader server")

    def test_messages_and_exit(self) -> None:
        outcome = sandbox.run_in_child(lambda send: (send({"t": "stage", "stage": "import"}), send({"t": "final"})), 10)
        self.assertEqual([m["t"] for m in outcome.messages], ["stage", "final"])
        self.assertEqual(outcome.last_stage, "import")
        if outcome.exit_deferred:  # its exit took longer than the grace: it is reaped later
            self.assertIsNone(outcome.exit_code)
        else:
            self.assertEqual(outcome.exit_code, 0)
        self.assertFalse(outcome.timed_out)

    def test_a_finished_child_whose_exit_lingers_is_not_waited_for_and_does_not_run_on(self) -> None:
        def finish_then_linger(send):
            send({"t": "final"})
            devnull = os.open(os.devnull, os.O_WRONLY)
            for fd in (1, 2):
                os.dup2(devnull, fd)
            os.closerange(3, 65536)  # the result pipe too: the collector sees both pipes end, as in an exit
            time.sleep(20)  # a slow teardown (a CUDA context's takes a tenth of a second or more)

        started = time.monotonic()
        outcome = sandbox.run_in_child(finish_then_linger, 30)
        self.assertLess(time.monotonic() - started, 5)
        self.assertTrue(outcome.exit_deferred)
        self.assertEqual([m["t"] for m in outcome.messages], ["final"])
        deadline, reaped = time.monotonic() + 10, []
        while not reaped and time.monotonic() < deadline:  # killed with its group: reaped at the next look
            reaped = sandbox.reap_exiting()
            time.sleep(0.01)
        self.assertEqual(len(reaped), 1)
        self.assertTrue(os.WIFSIGNALED(reaped[0][1]))

    def test_spinning_child_is_killed_at_the_timeout_with_its_stage(self) -> None:
        def spin(send):
            send({"t": "stage", "stage": "timing"})
            while True:
                pass

        started = time.monotonic()
        outcome = sandbox.run_in_child(spin, 1.0)
        self.assertTrue(outcome.timed_out)
        self.assertEqual(outcome.last_stage, "timing")
        self.assertEqual(outcome.exit_signal, signal.SIGKILL)
        self.assertLess(time.monotonic() - started, 5.0)

    def test_grandchild_dies_with_the_group(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            marker = os.path.join(folder, "grandchild.pid")

            def fork_grandchild(send):
                pid = os.fork()
                if pid == 0:
                    while True:
                        time.sleep(0.1)
                with open(marker, "w") as handle:
                    handle.write(str(pid))
                send({"t": "stage", "stage": "correctness"})
                while True:
                    time.sleep(0.1)

            outcome = sandbox.run_in_child(fork_grandchild, 1.5)
            self.assertTrue(outcome.timed_out)
            with open(marker) as handle:
                grandchild = int(handle.read())
            deadline = time.monotonic() + 3
            while _alive(grandchild) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(_alive(grandchild), "the grandchild survived the group kill")

    def test_grandchild_left_behind_after_a_normal_exit_is_killed(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            marker = os.path.join(folder, "orphan.pid")

            def leave_orphan(send):
                pid = os.fork()
                if pid == 0:
                    while True:
                        time.sleep(0.1)
                with open(marker, "w") as handle:
                    handle.write(str(pid))
                send({"t": "final"})

            started = time.monotonic()
            outcome = sandbox.run_in_child(leave_orphan, 30)
            self.assertLess(time.monotonic() - started, 10)
            self.assertFalse(outcome.timed_out)
            with open(marker) as handle:
                orphan = int(handle.read())
            time.sleep(0.2)
            self.assertFalse(_alive(orphan))

    def test_megabytes_of_output_are_capped_not_fatal(self) -> None:
        def flood(send):
            os.write(1, b"a" * 3_000_000)
            os.write(2, b"b" * 1_000_000)
            send({"t": "final"})

        outcome = sandbox.run_in_child(flood, 30, log_cap=4096)
        self.assertEqual(outcome.log_bytes, 4_000_000)
        self.assertEqual(len(outcome.log), 4096)
        self.assertEqual(outcome.messages[-1]["t"], "final")

    def test_death_without_result_is_reported(self) -> None:
        outcome = sandbox.run_in_child(lambda send: os._exit(3), 10)
        self.assertEqual(outcome.exit_code, 3)
        self.assertEqual(outcome.messages, [])

    def test_garbage_on_result_pipe_is_counted(self) -> None:
        outcome = sandbox.ChildOutcome()
        for line in (b"not json", b"[1, 2]", b'{"t": "stage", "stage": "warmup"}'):
            sandbox._accept(line, outcome, None)
        self.assertEqual(outcome.garbage, 2)
        self.assertEqual(outcome.last_stage, "warmup")

if __name__ == "__main__":
    unittest.main()
