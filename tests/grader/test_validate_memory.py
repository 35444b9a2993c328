"""Memory-aware validation: a step that does not fit in the memory the grader may use is reported as
"cannot check X because it needs N and M are free", and the other steps still run (MKB_GRADER_MEMORY_BYTES)."""

from __future__ import annotations

import os
import re
import unittest
from unittest import mock

import gradertest  # noqa: F401  (puts core/grader on sys.path)
from mkbgrader.child import memory
from mkbgrader.parent.settings import Settings
from mkbgrader.parent.validate import validate

FAST = Settings(warmup_draws=1, timing_draws=2, timeout_s=120.0)
LARGE = os.path.join(gradertest.FIXTURES, "problems", "_validation", "41_paged_kv_decode_large_cache.py")
MIB = 1 << 20


def run_with_budget(budget: int | None) -> dict:
    environment = {} if budget is None else {memory.BUDGET_VARIABLE: str(budget)}
    with mock.patch.dict(os.environ, environment):
        if budget is None:
            os.environ.pop(memory.BUDGET_VARIABLE, None)
        return validate({"problem": LARGE, "device": "cpu", "eager_target_ms": 0.0}, FAST)


class MemoryBudgetTest(unittest.TestCase):
    def test_a_large_cache_validates_cleanly_when_its_steps_fit(self) -> None:
        report = run_with_budget(64 * MIB)
        self.assertTrue(report["clean"], report["issues"])
        self.assertEqual(report["notes"], [])
        self.assertEqual([e["changed"] for e in report["inputs"] if e["tensor"] and not e["exempt"]],
                         [True, True, True, True])

    def test_an_anchor_that_does_not_fit_is_named_per_input_and_the_rest_still_runs(self) -> None:
        report = run_with_budget(5 * MIB)
        self.assertEqual(report["error"], "")
        self.assertTrue(report["deterministic"])
        self.assertIsNone(report["near_zero"])
        self.assertIsNone(report["sensitive"], "unchecked inputs leave sensitivity open, not false")
        self.assertFalse(report["clean"])
        self.assertEqual(report["eager_samples"], 2, "eager timing still ran")
        cache = next(e for e in report["inputs"] if e["name"] == "k_cache")
        self.assertIsNone(cache["changed"])
        pattern = (r"^cannot check sensitivity of input 1 \(k_cache, bfloat16\[256,16,2,64\]\) because its float64 "
                   r"anchor needs 8\.\d MiB and \d\.\d MiB are free under MKB_GRADER_MEMORY_BYTES=5242880$")
        self.assertTrue(any(re.match(pattern, issue) for issue in report["issues"]), report["issues"])
        self.assertTrue(any(issue.startswith("cannot check for near-zero outputs because its float64 anchor needs")
                            for issue in report["issues"]), report["issues"])
        starts = next(e for e in report["inputs"] if e["name"] == "page_starts")
        self.assertEqual(starts["changed"], False, "a fixed input needs no anchor, so it is still checked")

    def test_two_draws_that_do_not_fit_are_compared_by_digest(self) -> None:
        report = run_with_budget(3 * MIB)
        self.assertEqual(report["error"], "")
        self.assertTrue(report["deterministic"])
        self.assertEqual(len(report["notes"]), 1, report["notes"])
        self.assertRegex(report["notes"][0], r"^determinism: the two draws were compared by SHA-256 because a second "
                                             r"draw needs 2\.0 MiB and [0-9.]+ [KM]iB are free under "
                                             r"MKB_GRADER_MEMORY_BYTES=3145728$")
        cache = next(e for e in report["inputs"] if e["name"] == "v_cache")
        self.assertRegex(cache["note"], r"^not checked: redrawing it \(one more make_inputs draw\) needs 2\.0 MiB")
        self.assertEqual(report["eager_samples"], 2)

    def test_a_digest_comparison_still_catches_a_nondeterministic_draw(self) -> None:
        import tempfile
        import textwrap

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "p.py")
            with open(path, "w") as handle:
                handle.write(textwrap.dedent("""
                    import itertools, torch
                    _calls = itertools.count()
                    def reference(x):
                        return x * 2
                    def make_inputs(device="cpu"):
                        return [torch.full((512, 1024), float(next(_calls)), device=device)]
                """))
            with mock.patch.dict(os.environ, {memory.BUDGET_VARIABLE: str(3 * MIB)}):
                report = validate({"problem": path, "device": "cpu", "eager_target_ms": 0.0}, FAST)
        self.assertFalse(report["deterministic"])
        self.assertIn("input 0 (x, float32[512,1024]) differs between two draws with the same seed (by SHA-256)",
                      report["determinism_note"])

    def test_inputs_the_reference_modifies_in_place_are_drawn_again_not_copied_up_front(self) -> None:
        # The reference runs on the drawn inputs themselves (no second set); one it modifies in place, as a KV-cache
        # update does, is drawn again from its seed, so the anchor and the next redraw see the values as drawn.
        import tempfile
        import textwrap

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "p.py")
            with open(path, "w") as handle:
                handle.write(textwrap.dedent("""
                    import torch
                    def reference(x, counts):
                        counts += 1000  # in place and not idempotent: a second call on the same tensor differs
                        return x * counts.to(x.dtype), counts
                    def make_inputs(device="cpu"):
                        return [torch.randn(256, device=device), torch.randint(0, 5, (256,), device=device)]
                """))
            report = validate({"problem": path, "device": "cpu", "eager_target_ms": 0.0}, FAST)
        self.assertTrue(report["clean"], report["issues"])
        self.assertEqual([e["changed"] for e in report["inputs"]], [True, True])


class MemoryWordsTest(unittest.TestCase):
    def test_sizes_read_as_people_write_them(self) -> None:
        self.assertEqual(memory.format_bytes(58.1 * (1 << 30)), "58.1 GiB")
        self.assertEqual(memory.format_bytes(812 * MIB), "812 MiB")
        self.assertEqual(memory.format_bytes(17), "17 bytes")

    def test_a_torch_allocation_failure_is_worded_with_its_size(self) -> None:
        error = RuntimeError("CUDA out of memory. Tried to allocate 57.00 GiB (GPU 0; 139.7 GiB total capacity)")
        self.assertTrue(memory.is_out_of_memory(error))
        self.assertEqual(memory.out_of_memory_words(error),
                         "the device ran out of memory (tried to allocate 57.00 GiB)")

    def test_a_device_assert_is_known_to_break_the_context(self) -> None:
        self.assertTrue(memory.breaks_context(RuntimeError("CUDA error: device-side assert triggered")))
        self.assertFalse(memory.breaks_context(RuntimeError("shape mismatch")))


if __name__ == "__main__":
    unittest.main()
