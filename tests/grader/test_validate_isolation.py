"""Isolation of validation steps: a redraw that breaks the process (as a device-side assert breaks a CUDA context)
is reported for that input alone, and the later inputs and the eager timing still complete in fresh children."""

from __future__ import annotations

import itertools
import os
import unittest
from unittest import mock

import gradertest  # noqa: F401  (puts core/grader on sys.path)
from mkbgrader.parent.settings import Settings
from mkbgrader.parent.validate import validate

FAST = Settings(warmup_draws=1, timing_draws=3, timeout_s=120.0)
GATHER = os.path.join(gradertest.FIXTURES, "problems", "_validation", "42_context_parallel_gather_breaks_on_redraw.py")


def run(path: str) -> tuple[dict, list[str]]:
    stages: list[str] = []
    # Fixed seeds: the base and the redraw get different seq_lens (a random pair could, rarely, agree in sum).
    with mock.patch("mkbgrader.parent.validate.fresh_seed", side_effect=itertools.count(11)):
        report = validate({"problem": path, "device": "cpu", "eager_target_ms": 0.0}, FAST, stages.append)
    return report, stages


class RedrawIsolationTest(unittest.TestCase):
    def test_a_redraw_that_breaks_the_process_is_named_and_later_steps_still_succeed(self) -> None:
        report, stages = run(GATHER)
        self.assertEqual(report["error"], "", report["issues"])
        by_name = {e["name"]: e for e in report["inputs"]}
        seq_lens = by_name["seq_lens"]
        self.assertIsNone(seq_lens["changed"])
        self.assertTrue(seq_lens["error"])
        self.assertIn("device-side assert triggered", seq_lens["note"])
        self.assertIn("input 2 (seq_lens, int32[24]): cannot be redrawn alone: reference failed (with input 2 "
                      "redrawn): RuntimeError: CUDA error: device-side assert triggered", "\n".join(report["issues"]))
        # The step after the broken one ran in a fresh process: the per-sequence scale was redrawn and judged.
        self.assertIs(by_name["scale"]["changed"], True, by_name["scale"]["note"])
        self.assertIs(by_name["cache"]["changed"], True)
        self.assertIs(by_name["block_table"]["changed"], True)
        self.assertEqual(report["eager_samples"], 3, "eager timing ran after the broken redraw")
        self.assertIsNotNone(report["eager_median_ms"])
        self.assertFalse(any("make_inputs failed" in issue for issue in report["issues"]), report["issues"])
        self.assertEqual(len(report["issues"]), 1, report["issues"])
        self.assertFalse(report["sensitive"], "an input that cannot be redrawn alone is a finding")
        self.assertEqual(stages, ["load", "determinism", "sensitivity", "eager_timing", "done"])

    def test_a_redraw_that_kills_the_process_is_named_and_later_steps_still_succeed(self) -> None:
        import tempfile
        import textwrap

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "p.py")
            with open(path, "w") as handle:
                handle.write(textwrap.dedent("""
                    import os, signal, torch
                    def reference(x, lengths, y, total):
                        if int(lengths.sum()) != total:  # a redraw of lengths alone: the process dies outright
                            os.kill(os.getpid(), signal.SIGABRT)
                        return x * lengths.to(x.dtype).sum() + y
                    def make_inputs(device="cpu"):
                        lengths = torch.randint(1, 1000, (4,), device=device)
                        return [torch.randn(8, device=device), lengths, torch.randn(8, device=device),
                                int(lengths.sum())]
                """))
            report, _ = run(path)
        self.assertEqual(report["error"], "", report["issues"])
        lengths = report["inputs"][1]
        self.assertTrue(lengths["error"])
        self.assertEqual(lengths["note"], "the validation process was killed by signal SIGABRT while the reference "
                                          "ran on it")
        self.assertIs(report["inputs"][2]["changed"], True)
        self.assertEqual(report["eager_samples"], 3)


if __name__ == "__main__":
    unittest.main()
