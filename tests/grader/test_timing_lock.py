"""The device's timing lock (child/timing_lock.py): every stage that times holds it, and the stages that do not
time leave it free, so the next grading's pre-started child can warm up beside them. Each side runs the grader's
child function in a process of its own (the evaluation installs its runtime guard in the process it runs in), with
a `send` that tries the lock from another file descriptor whenever a stage starts."""

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import unittest

import gradertest

_RUN = r'''
import fcntl, json, os, sys
sys.path.insert(0, {grader!r})
lock = {lock!r}
seen = {{}}

def send(message):
    if message.get("t") != "stage":
        return
    probe = os.open(lock + ".timing", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        seen[message["stage"]] = False
        fcntl.flock(probe, fcntl.LOCK_UN)
    except BlockingIOError:
        seen[message["stage"]] = True
    finally:
        os.close(probe)

from mkbgrader.parent.settings import parse_settings
settings = parse_settings({settings!r})
request = {request!r}
{call}
print(json.dumps(seen))
'''


class TimingLockTest(unittest.TestCase):
    def held_by_stage(self, call: str, request: dict, settings: dict) -> dict:
        with tempfile.TemporaryDirectory() as folder:
            lock = os.path.join(folder, "mkb-gpu0.lock")
            script = _RUN.format(grader=gradertest.GRADER, lock=lock, settings=settings,
                                 request={**request, "device_lock": lock}, call=call)
            environment = {**os.environ, "PYTHONPATH": gradertest.GRADER, "PYTHONDONTWRITEBYTECODE": "1"}
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240,
                                  env=environment)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])

    def test_an_evaluation_holds_it_while_it_times_and_not_while_it_checks_correctness(self) -> None:
        request = {"problem": gradertest.problem("01_vector_add.py"),
                   "kernel": gradertest.solution("01_vector_add.cpusim.py"), "dsl": "cpusim",
                   "dsl_descriptor": gradertest.descriptor("cpusim"), "device": "cpu"}
        held = self.held_by_stage("from mkbgrader.child.evaluate import evaluate\nevaluate(request, settings, send)",
                                  request, gradertest.FAST)
        self.assertEqual({stage: held.get(stage) for stage in ("correctness", "warmup", "timing", "recheck",
                                                               "roofline")},
                         {"correctness": False, "warmup": True, "timing": True, "recheck": True, "roofline": False},
                         held)

    def test_a_validation_holds_it_while_it_times_the_eager_reference(self) -> None:
        request = {"problem": gradertest.problem("01_vector_add.py"), "device": "cpu"}
        call = ("from mkbgrader.child import validate\n"
                "original = validate._time_eager\n"
                "def timed(runner, settings):\n"
                "    send({'t': 'stage', 'stage': 'inside eager timing'})\n"
                "    return original(runner, settings)\n"
                "validate._time_eager = timed\n"
                "validate.eager_phase(request, settings, send)")
        held = self.held_by_stage(call, request, {"warmup_draws": 1, "timing_draws": 3})
        self.assertEqual(held.get("inside eager timing"), True, held)
        self.assertEqual(held.get("done"), False, held)

    def test_without_a_device_lock_a_stage_runs_unlocked(self) -> None:
        from mkbgrader.child import timing_lock

        with timing_lock.held("") as locked:
            self.assertFalse(locked)
        with timing_lock.held(None) as locked:
            self.assertFalse(locked)

    def test_a_holder_that_never_lets_go_delays_a_timing_only_up_to_its_bound(self) -> None:
        from mkbgrader.child import timing_lock

        with tempfile.TemporaryDirectory() as folder:
            lock = os.path.join(folder, "mkb-gpu0.lock")
            holder = os.open(lock + ".timing", os.O_RDWR | os.O_CREAT)
            fcntl.flock(holder, fcntl.LOCK_EX)
            try:
                with timing_lock.held(lock, max_wait_s=0.2) as locked:
                    self.assertFalse(locked)
            finally:
                os.close(holder)
            with timing_lock.held(lock) as locked:
                self.assertTrue(locked, "once the holder let go, the lock is had")


if __name__ == "__main__":
    unittest.main()
