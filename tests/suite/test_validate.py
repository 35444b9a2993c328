"""The grader's problem validation (mkbgrader.validate and the server's "validate" request) on CPU problems."""

from __future__ import annotations

import io
import json
import os
import tempfile
import textwrap
import unittest

from mkbgrader.parent.server import Server
from mkbgrader.parent.settings import Settings
from mkbgrader.parent.validate import validate

FAST = Settings(warmup_draws=1, timing_draws=3, timeout_s=120.0)


class ProblemFiles:
    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory()

    def write(self, name: str, source: str) -> str:
        path = os.path.join(self.folder.name, name)
        with open(path, "w") as handle:
            handle.write(textwrap.dedent(source))
        return path


def run(path: str, target: float = 0.0, **extra) -> dict:
    return validate({"problem": path, "device": "cpu", "eager_target_ms": target, **extra}, FAST)


class ValidateTest(unittest.TestCase):
    def setUp(self) -> None:
        self.files = ProblemFiles()

    def tearDown(self) -> None:
        self.files.folder.cleanup()

    def test_clean_problem_reports_every_input_changed(self) -> None:
        # "validate: a clean problem is deterministic, sensitive to each input, with an eager median"
        path = self.files.write("p.py", """
            import torch
            def reference(x, seq_lens):
                return x * seq_lens.to(x.dtype)[:, None]
            def make_inputs(device="cpu"):
                return [torch.randn(8, 16, device=device), torch.randint(1, 9, (8,), dtype=torch.int32, device=device)]
        """)
        report = run(path)
        self.assertTrue(report["clean"], report["issues"])
        self.assertTrue(report["deterministic"])
        self.assertTrue(report["sensitive"])
        self.assertEqual([e["changed"] for e in report["inputs"]], [True, True])
        self.assertEqual(report["inputs"][1]["description"], "input 1 (seq_lens, int32[8])")
        self.assertRegex(report["inputs"][1]["note"], r"^output changed, max \|diff\| \S+ > allowance \S+$")
        self.assertGreater(report["inputs"][1]["max_diff"], report["inputs"][1]["allowance"])
        self.assertEqual(report["eager_samples"], 3)
        self.assertIsNotNone(report["eager_median_ms"])

    def test_unused_input_is_an_issue_unless_listed_insensitive(self) -> None:
        # "validate: an input whose redraw leaves the output unchanged is reported, unless MKB_META exempts it"
        body = """
            import torch
            {meta}
            def reference(x, unused):
                return x + 1
            def make_inputs(device="cpu"):
                return [torch.randn(64, device=device), torch.randn(64, device=device)]
        """
        report = run(self.files.write("a.py", body.format(meta="")))
        self.assertFalse(report["clean"])
        self.assertFalse(report["sensitive"])
        self.assertEqual(report["inputs"][1]["changed"], False)
        self.assertEqual(len(report["issues"]), 1, report["issues"])
        self.assertIn("input 1 (unused, float32[64]): output unchanged within the grading allowance", report["issues"][0])
        self.assertIn('MKB_META["insensitive"]', report["issues"][0])
        exempt = run(self.files.write("b.py", body.format(meta='MKB_META = {"insensitive": [1]}')))
        self.assertTrue(exempt["clean"], exempt["issues"])
        self.assertTrue(exempt["inputs"][1]["exempt"])

    def test_fixed_structure_input_is_named_as_not_checkable(self) -> None:
        # "validate: an input that is the same for every seed cannot be checked by redrawing, and says so (not
        # 'insensitive': the redraw proves nothing either way)"
        path = self.files.write("p.py", """
            import torch
            def reference(x, positions):
                return x + positions
            def make_inputs(device="cpu"):
                return [torch.randn(32, device=device), torch.arange(32, dtype=torch.float32, device=device)]
        """)
        report = run(path)
        self.assertIsNone(report["inputs"][1]["changed"])
        self.assertIsNone(report["sensitive"])
        self.assertIn("cannot check sensitivity of input 1", report["issues"][0])
        self.assertIn("fixed structure", report["issues"][0])

    def test_change_within_allowance_is_not_sensitivity(self) -> None:
        # "validate: a change below the grading allowance counts as unchanged (one allowance definition)"
        path = self.files.write("p.py", """
            import torch
            def reference(x, tiny):
                return x + tiny * 1e-17
            def make_inputs(device="cpu"):
                return [torch.randn(64, dtype=torch.float64, device=device) * 100,
                        torch.randn(64, dtype=torch.float64, device=device)]
        """)
        report = run(path)
        self.assertEqual(report["inputs"][1]["changed"], False)
        self.assertIn("allowance", report["inputs"][1]["note"])

    def test_near_zero_output_is_reported(self) -> None:
        # "validate: an output that is all near zero is an issue (an all-zeros answer would pass)"
        path = self.files.write("p.py", """
            import torch
            def reference(x):
                return (x * 1e-9, torch.zeros(4, dtype=torch.int64, device=x.device))
            def make_inputs(device="cpu"):
                return [torch.randn(64, device=device)]
        """)
        report = run(path)
        self.assertTrue(report["near_zero"])
        self.assertFalse(report["sensitive"])
        self.assertEqual(len(report["near_zero_outputs"]), 2, report["near_zero_outputs"])
        self.assertIn("output[0] (float32) is near zero", report["near_zero_outputs"][0])
        self.assertIn("output[1] (int64) is near zero", report["near_zero_outputs"][1])

    def test_zero_answer_of_a_quant_problem_is_judged_by_its_thresholds(self) -> None:
        # "validate: a quant problem's all-zeros answer is judged as grading judges it (quant thresholds against the
        # reference), not by the float contract against the float64 anchor"
        # One row's amax / 448 sits one float32 ulp above 2^-6: float32 rounds it to the power of two, float64 does
        # not, so the anchor's scale is twice the reference's and its codes half as large in that row. That gap is
        # the reference error the float contract allows for, and an all-zeros answer would fit in it.
        path = self.files.write("p.py", """
            import torch
            MKB_META = {"quant": {"min_cosine": 0.9999}}
            def reference(x):
                w = x if x.dtype == torch.float64 else x.float()
                amax = w.abs().amax(dim=-1)
                scale = torch.exp2(torch.ceil(torch.log2(amax / 448.0)))
                return (w / scale[:, None]).round()
            def make_inputs(device="cpu"):
                x = (2.0 * torch.randn(64, 32, device=device)).clamp(-6.5, 6.5)
                x[5, 3] = 7.000000476837158
                return [x]
        """)
        report = run(path)
        self.assertFalse(report["near_zero"], report["near_zero_outputs"])
        self.assertTrue(report["clean"], report["issues"])

    def test_tiny_output_of_a_quant_problem_is_reported(self) -> None:
        # "validate: a quant problem whose output is tiny beside its inputs is near zero"
        path = self.files.write("p.py", """
            import torch
            MKB_META = {"quant": True}
            def reference(x):
                return x * 1e-9
            def make_inputs(device="cpu"):
                return [torch.randn(64, device=device)]
        """)
        report = run(path)
        self.assertTrue(report["near_zero"])
        self.assertEqual(len(report["near_zero_outputs"]), 1, report["near_zero_outputs"])
        self.assertRegex(report["near_zero_outputs"][0], r"^output \(float32\) is near zero: max \|value\| ")

    def test_nondeterminism_of_reference_and_of_inputs(self) -> None:
        # "validate: a reference or make_inputs that differs for the same seed is not deterministic"
        noisy = run(self.files.write("a.py", """
            import random, torch
            def reference(x):
                return x + random.random()
            def make_inputs(device="cpu"):
                return [torch.randn(16, device=device)]
        """))
        self.assertFalse(noisy["deterministic"])
        self.assertIn("the reference is not deterministic", noisy["determinism_note"])
        self.assertIn("16 of 16 elements differ", noisy["determinism_note"])
        drifting = run(self.files.write("b.py", """
            import random, torch
            def reference(x):
                return x * 2
            def make_inputs(device="cpu"):
                return [torch.randn(16, device=device) + random.random()]
        """))
        self.assertFalse(drifting["deterministic"])
        self.assertIn("make_inputs is not deterministic for a seed: input 0 (x, float32[16])",
                      drifting["determinism_note"])

    def test_eager_target_flag(self) -> None:
        # "validate: an eager median below the target is reported; a zero target always passes"
        path = self.files.write("p.py", """
            import torch
            def reference(x):
                return x + 1
            def make_inputs(device="cpu"):
                return [torch.randn(8, device=device)]
        """)
        slow_target = run(path, target=1000.0)
        self.assertFalse(slow_target["eager_ok"])
        self.assertIn("below the 1000 ms target", slow_target["issues"][-1])
        self.assertTrue(run(path, target=0.0)["eager_ok"])

    def test_broken_problem_is_an_error_not_a_crash(self) -> None:
        # "validate: a reference that raises, or a problem that does not load, becomes an error line"
        raises = run(self.files.write("a.py", """
            import torch
            def reference(x):
                raise ValueError("boom")
            def make_inputs(device="cpu"):
                return [torch.randn(8, device=device)]
        """))
        self.assertFalse(raises["clean"])
        self.assertIn("reference failed (first draw): ValueError: boom", raises["error"])
        self.assertEqual(raises["stage"], "determinism")
        missing = run(os.path.join(self.files.folder.name, "nope.py"))
        self.assertIn("does not exist", missing["error"])


class ServerValidateTest(unittest.TestCase):
    def test_validate_request_gets_a_validation_reply(self) -> None:
        # "server: a validate request is answered with one validation object; bad requests get an error"
        files = ProblemFiles()
        path = files.write("p.py", """
            import torch
            def reference(x):
                return x * 3
            def make_inputs(device="cpu"):
                return [torch.randn(8, device=device)]
        """)
        replies = io.StringIO()
        server = Server(replies)
        request = {"type": "validate", "id": "v1", "problem": path, "device": "cpu", "eager_target_ms": 0,
                   "settings": {"warmup_draws": 0, "timing_draws": 2}}
        self.assertTrue(server.handle(json.dumps(request)))
        self.assertTrue(server.handle(json.dumps({"type": "validate", "id": "v2"})))
        self.assertTrue(server.handle(json.dumps({**request, "id": "v3", "settings": {"bogus": 1}})))
        lines = [json.loads(line) for line in replies.getvalue().splitlines()]
        final = [m for m in lines if m["type"] != "stage"]
        self.assertEqual(final[0]["type"], "validation", final[0])
        self.assertEqual(final[0]["id"], "v1")
        self.assertTrue(final[0]["validation"]["clean"], final[0]["validation"]["issues"])
        stages = [m["stage"] for m in lines if m["type"] == "stage" and m["id"] == "v1"]
        self.assertEqual(stages, ["load", "determinism", "sensitivity", "eager_timing", "done"])
        self.assertEqual(final[1], {"type": "error", "id": "v2", "message": "validate request lacks problem"})
        self.assertEqual(final[2]["type"], "error")
        self.assertIn("unknown settings key 'bogus'", final[2]["message"])
        files.folder.cleanup()


if __name__ == "__main__":
    unittest.main()
