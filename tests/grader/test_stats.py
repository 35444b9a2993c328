"""stats: the percentile bootstrap of medians and of a ratio of medians (golden values, determinism, edge cases)."""

import random
import time
import unittest

import gradertest  # noqa: F401  (puts core/grader on sys.path)
from mkbgrader import stats


class StatsTest(unittest.TestCase):
    def test_the_median_interval_of_fixed_samples_matches_its_golden_values(self) -> None:
        self.assertEqual(stats.median_ci([0.5, 0.7, 0.9, 1.1, 1.3, 1.5]), (1.0, 0.6, 1.4))
        rng = random.Random(42)
        samples = [1 + 0.1 * rng.random() for _ in range(101)]
        point, low, high = stats.median_ci(samples)
        self.assertAlmostEqual(point, 1.0458851852587399, places=15)
        self.assertAlmostEqual(low, 1.0340250516517993, places=15)
        self.assertAlmostEqual(high, 1.058458599022354, places=15)

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


if __name__ == "__main__":
    unittest.main()
