"""stats: the percentile bootstrap of medians and of a ratio of medians (golden values, determinism, edge cases)."""

import random
import time
import unittest

import gradertest
from mkbgrader.parent import roofline, stats, verdict
from mkbgrader.parent.sandbox import ChildOutcome
from mkbgrader.parent.settings import parse_settings


class StatsTest(unittest.TestCase):
    def test_the_median_interval_of_fixed_samples_matches_its_golden_values(self) -> None:
        self.assertEqual(stats.median_ci([0.5, 0.7, 0.9, 1.1, 1.3, 1.5]), (1.0, 0.6, 1.4))
        rng = random.Random(42)
        samples = [1 + 0.1 * rng.random() for _ in range(101)]
        point, low, high = stats.median_ci(samples)
        self.assertAlmostEqual(point, 1.0458851852587399, places=15)
        self.assertAlmostEqual(low, 1.0364832178970085, places=15)
        self.assertAlmostEqual(high, 1.0577352145256762, places=15)

    def test_the_resampled_medians_are_distributed_as_if_every_resample_were_built_and_sorted(self) -> None:
        rng = random.Random(5)
        for n in (5, 6, 101, 400):
            data = sorted(rng.lognormvariate(0, 0.1) for _ in range(n))
            built = random.Random(1)
            naive = sorted(stats.percentile(sorted(built.choices(data, k=n)), 0.5) for _ in range(20000))
            exact = sorted(stats._median_at(data, p) for p in stats.resample_median_positions(random.Random(2), n,
                                                                                                 20000))
            spread = data[-1] - data[0]
            for q in (0.025, 0.25, 0.5, 0.75, 0.975):
                self.assertAlmostEqual(stats.percentile(naive, q), stats.percentile(exact, q), delta=0.02 * spread,
                                       msg=(n, q))

    def test_the_speedup_interval_of_fixed_paired_draws_matches_its_golden_values(self) -> None:
        rng = random.Random(42)
        [rng.random() for _ in range(101)]
        eager = [1e-3 * (1 + 0.05 * rng.random()) for _ in range(50)]
        kernel = [4e-4 * (1 + 0.05 * rng.random()) for _ in range(50)]
        point, low, high = stats.ratio_of_medians_ci(eager, kernel)
        self.assertAlmostEqual(point, 2.5113801107416847, places=12)
        self.assertAlmostEqual(low, 2.488963579723484, places=12)
        self.assertAlmostEqual(high, 2.530603859355689, places=12)

    def test_the_same_samples_give_the_same_interval_and_other_samples_another(self) -> None:
        rng = random.Random(1)
        samples = [rng.gauss(1, 0.1) for _ in range(200)]
        self.assertEqual(stats.median_ci(samples), stats.median_ci(list(samples)))
        self.assertNotEqual(stats.median_ci(samples), stats.median_ci(samples[:-1] + [samples[-1] + 1e-9]))

    def test_identical_kernels_give_a_ratio_interval_that_contains_one(self) -> None:
        rng = random.Random(7)
        a = [rng.lognormvariate(0, 0.05) for _ in range(300)]
        b = [rng.lognormvariate(0, 0.05) for _ in range(300)]
        ratio, low, high = stats.median_ci([x / y for x, y in zip(a, b)])
        self.assertLess(low, 1.0)
        self.assertGreater(high, 1.0)
        self.assertTrue(0.98 < ratio < 1.02, ratio)

    def test_a_ten_percent_slowdown_gives_an_interval_below_one(self) -> None:
        rng = random.Random(8)
        a = [rng.lognormvariate(0, 0.05) for _ in range(300)]
        slowed = [1.1 * rng.lognormvariate(0, 0.05) for _ in range(300)]
        ratio, low, high = stats.median_ci([x / y for x, y in zip(a, slowed)])
        self.assertLess(high, 1.0)
        self.assertTrue(0.88 < ratio < 0.94, ratio)

    def test_constant_and_single_samples_give_the_point_as_interval(self) -> None:
        self.assertEqual(stats.median_ci([2.0] * 50), (2.0, 2.0, 2.0))
        self.assertEqual(stats.median_ci([3.0]), (3.0, 3.0, 3.0))
        self.assertEqual(stats.ratio_of_medians_ci([1.0], [0.5]), (2.0, 2.0, 2.0))
        with self.assertRaises(ValueError):
            stats.median_ci([])
        with self.assertRaises(ValueError):
            stats.ratio_of_medians_ci([1.0, 2.0], [1.0])

    def test_within_accepts_an_interval_exactly_at_the_band_and_rejects_one_beyond(self) -> None:
        self.assertTrue(stats.within(1.0, 0.99, 1.01, 0.01))
        self.assertFalse(stats.within(1.0, 0.989, 1.005, 0.01))
        self.assertFalse(stats.within(1.0, 0.995, 1.0101, 0.01))

    def test_percentile_interpolates_between_order_statistics(self) -> None:
        self.assertEqual(stats.percentile([0.0, 10.0], 0.25), 2.5)
        self.assertEqual(stats.percentile([1.0, 2.0, 3.0], 1.0), 3.0)

    def test_six_pairs_of_two_thousand_rounds_take_under_ten_seconds(self) -> None:
        rng = random.Random(3)
        series = [[rng.random() for _ in range(2000)] for _ in range(6)]
        started = time.perf_counter()
        for values in series:
            stats.median_ci(values)
        self.assertLess(time.perf_counter() - started, 10.0)  # 2.3 s measured on a busy 2-core machine



def exact_leaf(mismatches: int) -> dict:
    return {"path": "output", "kind": "exact", "dtype": "int64", "count": 4, "mismatches": mismatches,
            "first_index": [0] if mismatches else [], "cand_value": 1 if mismatches else None,
            "ref_value": 0 if mismatches else None}


def outcome(eager_ms: list, kernel_ms: list, gpu_ms: list, source: str = "torch.profiler") -> ChildOutcome:
    """A finished evaluation child's messages: two correct draws, timings, GPU times, roofline raw figures."""
    leaf = exact_leaf(0)
    messages = [{"t": "stage", "stage": "load"}, {"t": "imported"}]
    messages += [{"t": "draw", "phase": "correctness", "index": i, "leaves": [leaf], "mutation": ""} for i in (0, 1)]
    messages += [{"t": "timings", "kernel_ms": kernel_ms, "eager_ms": eager_ms, "clock_mhz": [], "throttled": []},
                 {"t": "gpu_times", "gpu_ms": gpu_ms, "source": source},
                 {"t": "roofline", "bytes": 4e9, "flops": None, "dtype": "float32"},
                 {"t": "stage", "stage": "done"}, {"t": "final"}]
    return ChildOutcome(messages=messages, exit_code=0, last_stage="done")


class VerdictFieldsTest(unittest.TestCase):
    settings = parse_settings({"correctness_draws": 2, "recheck_draws": 0, "timing_draws": 5})

    def test_a_passed_verdict_carries_its_speedups_interval_from_the_paired_draws(self) -> None:
        eager, kernel = [2.0, 2.2, 2.1, 1.9, 2.0], [1.0, 1.1, 0.9, 1.0, 1.05]
        result = verdict.build(outcome(eager, kernel, []), self.settings, None, {})
        self.assertTrue(result["passed"], result["error"])
        self.assertEqual(result["speedup_vs_eager"], 2.0)
        expected = stats.ratio_of_medians_ci(eager, kernel)
        self.assertEqual((result["speedup_ci_low"], result["speedup_ci_high"]), expected[1:])
        self.assertLessEqual(result["speedup_ci_low"], 2.0)
        self.assertGreaterEqual(result["speedup_ci_high"], 2.0)

    def test_a_failed_verdict_has_no_interval(self) -> None:
        failing = outcome([2.0, 2.0], [1.0, 1.0], [])
        failing.messages[3]["leaves"] = [exact_leaf(2)]
        result = verdict.build(failing, self.settings, None, {})
        self.assertFalse(result["passed"])
        self.assertIsNone(result["speedup_ci_low"])
        self.assertIsNone(result["speedup_ci_high"])

    def test_gpu_time_is_recorded_and_the_roofline_uses_it_and_says_so(self) -> None:
        peaks = {"copy_gbps": 4000.0, "tflops": {"float32": 60.0}}
        result = verdict.build(outcome([2.0] * 5, [1.25] * 5, [1.0, 1.1, 0.9]), self.settings, peaks, {})
        self.assertEqual((result["gpu_median_ms"], result["gpu_time_source"], result["gpu_samples"]),
                         (1.0, "torch.profiler", 3))
        self.assertEqual(result["roofline"]["time_basis"], "gpu")
        self.assertAlmostEqual(result["roofline"]["iou"], 1.0)  # 4 GB in 1 ms of GPU time against 4000 GB/s
        no_gpu = verdict.build(outcome([2.0] * 5, [1.25] * 5, [], "none"), self.settings, peaks, {})
        self.assertEqual((no_gpu["gpu_median_ms"], no_gpu["gpu_time_source"]), (None, "none"))
        self.assertEqual(no_gpu["roofline"]["time_basis"], "end_to_end")
        self.assertAlmostEqual(no_gpu["roofline"]["iou"], 0.8)

    def test_roofline_without_any_time_is_absent(self) -> None:
        self.assertIsNone(roofline.roofline({"bytes": 1.0}, None, None, None))
        self.assertEqual(roofline.roofline({"bytes": 1e6}, 2.0, None, 0.0)["time_basis"], "end_to_end")

    def test_a_real_cpu_grading_has_an_interval_and_null_gpu_time(self) -> None:
        result = gradertest.grade(gradertest.problem("01_vector_add.py"),
                                  gradertest.solution("01_vector_add.cpusim.py"), timing_draws=8)
        self.assertTrue(result["passed"], result["error"])
        self.assertLessEqual(result["speedup_ci_low"], result["speedup_vs_eager"])
        self.assertGreaterEqual(result["speedup_ci_high"], result["speedup_vs_eager"])
        self.assertEqual((result["gpu_median_ms"], result["gpu_time_source"], result["gpu_samples"]),
                         (None, "none", 0))
        self.assertEqual(result["roofline"]["time_basis"], "end_to_end")


if __name__ == "__main__":
    unittest.main()
