"""A draw whose outputs are all compared exactly (integers, booleans) runs the reference once: the float64 anchor
would be a second run that nothing reads. A problem with a floating output still gets its anchor run. Counted in a
process of its own (the evaluation installs its runtime guard in the process it runs in)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import gradertest

_PROBLEM = '''
import torch

CALLS = []


def reference(x):
    CALLS.append(x.dtype)
    values, indices = x.max(dim=-1)
    return {returned}


def make_inputs(device="cpu"):
    return [torch.randn(8, 32, device=device)]
'''

# The fixture's solution, returning what the problem's variant returns.
with open(gradertest.solution("03_argmax_rows.cpusim.py"), encoding="utf-8") as _handle:
    _SOLUTION = _handle.read()

_RUN = r'''
import json, sys
sys.path.insert(0, {grader!r})
from mkbgrader.child.evaluate import evaluate
from mkbgrader.parent.settings import parse_settings
messages = []
evaluate({request!r}, parse_settings({settings!r}), messages.append)
problem = sys.modules["mkb_problem"]
errors = [m for m in messages if m.get("t") == "error"]
draws = [m for m in messages if m.get("t") == "draw" and m.get("phase") == "correctness"]
print(json.dumps({{"float64_calls": sum(1 for d in problem.CALLS if str(d) == "torch.float64"),
                  "errors": errors, "draws": len(draws)}}))
'''

SETTINGS = {"correctness_draws": 4, "warmup_draws": 0, "timing_draws": 2, "recheck_draws": 1, "outliers": False}


class ExactAnchorTest(unittest.TestCase):
    def run_problem(self, returned: str) -> dict:
        with tempfile.TemporaryDirectory() as folder:
            problem = os.path.join(folder, "01_row_argmax.py")
            kernel = os.path.join(folder, "kernel.py")
            with open(problem, "w", encoding="utf-8") as handle:
                handle.write(_PROBLEM.format(returned=returned))
            with open(kernel, "w", encoding="utf-8") as handle:
                handle.write(_SOLUTION.replace("return (values, indices)", "return " + returned))
            request = {"problem": problem, "kernel": kernel, "dsl": "cpusim",
                       "dsl_descriptor": gradertest.descriptor("cpusim"), "device": "cpu"}
            environment = {**os.environ, "PYTHONPATH": gradertest.GRADER, "PYTHONDONTWRITEBYTECODE": "1"}
            done = subprocess.run([sys.executable, "-c", _RUN.format(grader=gradertest.GRADER, request=request,
                                                                     settings=SETTINGS)],
                                  capture_output=True, text=True, timeout=240, env=environment)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        self.assertEqual(result["errors"], [])
        self.assertEqual(result["draws"], 4)
        return result

    def test_integer_outputs_get_no_float64_anchor(self) -> None:
        self.assertEqual(self.run_problem("indices")["float64_calls"], 0)
        self.assertEqual(self.run_problem("(indices, indices > 3)")["float64_calls"], 0)

    def test_a_floating_output_still_gets_its_anchor_on_every_checked_draw(self) -> None:
        # 4 correctness draws and 1 re-check, each with its float64 anchor
        self.assertEqual(self.run_problem("(values, indices)")["float64_calls"], 5)


if __name__ == "__main__":
    unittest.main()
