"""The timed region: timing.Clock names its device and stream once, at construction, so nothing inside a timed call
looks up the current device or stream (bench/README.md, twenty-fourth batch: that lookup was 9.5 us of every timed
call on an H100). Checked on the CPU with a stand-in for torch.cuda that records what the clock calls and when; the
real device's clock is proved by the gpu tests (grader_gpu_triton, grader_gpu_cuda, the slowed-copy checks)."""

import types
import unittest
from unittest import mock

import gradertest  # noqa: F401 (puts the grader package on sys.path)
from mkbgrader.child import timing


class FakeCuda:
    """torch.cuda as far as the clock uses it, writing each call into a shared journal."""

    def __init__(self, journal: list) -> None:
        self.journal = journal
        self.default_stream = object()
        cuda = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.enable_timing = enable_timing

            def record(self, stream: object = None) -> None:
                cuda.journal.append(("record", stream))

            def synchronize(self) -> None:
                cuda.journal.append(("event.synchronize",))

            def elapsed_time(self, other: "Event") -> float:
                return 0.25

        self.Event = Event

    def synchronize(self, device: object = None) -> None:
        self.journal.append(("synchronize", device))

    def current_stream(self, device: object = None) -> object:
        self.journal.append(("current_stream", device))
        return self.default_stream


def fake_torch(journal: list) -> types.SimpleNamespace:
    return types.SimpleNamespace(cuda=FakeCuda(journal), device=lambda name: ("device", name))


class ClockTest(unittest.TestCase):
    def test_a_timed_call_names_its_device_and_stream(self) -> None:
        journal: list = []
        torch = fake_torch(journal)
        cuda = torch.cuda
        with mock.patch.object(timing, "torch", torch):
            clock = timing.Clock("cuda:1")
            built = list(journal)
            journal.clear()
            elapsed, result = clock.time_call(lambda: journal.append(("call",)) or "out")
        self.assertEqual((elapsed, result), (0.25, "out"))
        self.assertIn(("current_stream", ("device", "cuda:1")), built, "the stream is looked up once, when built")
        self.assertEqual(journal, [("synchronize", ("device", "cuda:1")), ("record", cuda.default_stream), ("call",),
                                   ("synchronize", ("device", "cuda:1")), ("record", cuda.default_stream),
                                   ("event.synchronize",)],
                         "inside a timed call: the device synchronised by name, both events on the named stream, "
                         "and no lookup of the current device or stream")

    def test_a_replaced_synchronize_does_not_change_the_clock(self) -> None:
        journal: list = []
        torch = fake_torch(journal)
        with mock.patch.object(timing, "torch", torch):
            clock = timing.Clock("cuda:0")
            torch.cuda.synchronize = lambda device=None: journal.append(("replaced", device))
            journal.clear()
            clock.time_call(lambda: None)
        self.assertNotIn("replaced", [entry[0] for entry in journal],
                         "the clock keeps the synchronize it captured before the candidate was imported")

    def test_the_cpu_clock_times_with_the_host_counter(self) -> None:
        elapsed, result = timing.Clock("cpu").time_call(lambda: 7)
        self.assertEqual(result, 7)
        self.assertGreaterEqual(elapsed, 0.0)


if __name__ == "__main__":
    unittest.main()
