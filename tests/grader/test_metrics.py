"""quant, outliers, settings and timing statistics: the pure pieces of §5.1 and §5.3."""

import math
import unittest

import torch

import gradertest  # noqa: F401
from mkbgrader.child import outliers
from mkbgrader.child.compare import quant_metrics
from mkbgrader.parent import quant, timing
from mkbgrader.parent.settings import QUANT_THRESHOLDS, Settings, parse_settings


class QuantTest(unittest.TestCase):
    def test_metrics_by_hand(self) -> None:
        ref = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=torch.float64)
        cand = torch.tensor([1.0, 0.5, -1.0, 2.0], dtype=torch.float64)
        m = quant_metrics(cand, ref)
        self.assertAlmostEqual(m["relative_l1"], 0.5 / 4.0)
        self.assertAlmostEqual(m["rmse"], math.sqrt(0.25 / 4))
        self.assertAlmostEqual(m["cosine"], 6.0 / math.sqrt(6.25 * 6.0))

    def test_thresholds_from_meta_and_defaults(self) -> None:
        self.assertIsNone(quant.thresholds_from_meta({}))
        self.assertEqual(quant.thresholds_from_meta({"quant": True}), QUANT_THRESHOLDS)
        t = quant.thresholds_from_meta({"quant": {"min_cosine": 0.99}})
        self.assertEqual(t["min_cosine"], 0.99)
        self.assertEqual(t["max_rmse"], 0.1)

    def test_passes_and_failure_words(self) -> None:
        good = {"cosine": 0.99, "relative_l1": 0.01, "rmse": 0.01, "finite": True}
        self.assertTrue(quant.passes(good, {}))
        bad = {"cosine": 0.9, "relative_l1": 0.2, "rmse": 0.01, "finite": True}
        self.assertFalse(quant.passes(bad, {}))
        words = quant.failure_words(bad, {})
        self.assertIn("cosine 0.9 < 0.95", words)
        self.assertIn("relative L1 0.2 > 0.05", words)
        self.assertFalse(quant.passes({**good, "finite": False}, {}))

    def test_relative_l1_of_zero_reference_uses_floor(self) -> None:
        m = quant_metrics(torch.full((2,), 1e-13, dtype=torch.float64), torch.zeros(2, dtype=torch.float64))
        self.assertAlmostEqual(m["relative_l1"], 2e-13 / 1e-12)


class OutlierTest(unittest.TestCase):
    def test_fraction_and_scale(self) -> None:
        x = torch.zeros(200_000)
        replaced = outliers.inject_outliers([x], [0], 0.001, 50.0, seed=7)
        changed = int((x != 0).sum())
        self.assertEqual(changed, replaced)
        self.assertTrue(120 < changed < 290, changed)
        self.assertGreater(float(x.abs().max()), 50.0)

    def test_at_least_one_element_and_integers_untouched(self) -> None:
        x, n = torch.zeros(10), torch.zeros(10, dtype=torch.int64)
        outliers.inject_outliers([x, n], [0, 1], 1e-9, 50.0, seed=1)
        self.assertEqual(int((x != 0).sum()), 1)
        self.assertEqual(int(n.abs().sum()), 0)

    def test_meta_selects_inputs(self) -> None:
        self.assertIsNone(outliers.outlier_inputs_allowed({"outliers": False}, 3))
        self.assertEqual(outliers.outlier_inputs_allowed({"outliers": [1, 5]}, 3), [1])
        self.assertEqual(outliers.outlier_inputs_allowed({}, 2), [0, 1])
        self.assertIsNone(outliers.outlier_inputs_allowed({"outliers": "off"}, 3))
        self.assertEqual(outliers.outlier_inputs_allowed({"outliers": {"inputs": [0, 2]}}, 3), [0, 2])
        self.assertEqual(outliers.outlier_inputs_allowed({"outliers": {"p": 0.01}}, 2), [0, 1])

    def test_meta_overrides_rates_the_catalog_accepts(self) -> None:
        meta = {"outliers": {"inputs": [0], "p": 0.02, "scale": 8}}
        self.assertEqual(outliers.outlier_rates(meta, 0.001, 50.0), (0.02, 8.0))
        self.assertEqual(outliers.outlier_rates({"outliers": True}, 0.001, 50.0), (0.001, 50.0))
        self.assertEqual(outliers.outlier_rates({"outliers": {"p": 3, "scale": -1}}, 0.001, 50.0), (0.001, 50.0))

    def test_same_seed_same_outliers(self) -> None:
        a, b = torch.zeros(5000), torch.zeros(5000)
        outliers.inject_outliers([a], [0], 0.01, 50.0, seed=3)
        outliers.inject_outliers([b], [0], 0.01, 50.0, seed=3)
        self.assertTrue(torch.equal(a, b))


class SettingsAndTimingTest(unittest.TestCase):
    def test_defaults_follow_design(self) -> None:
        s = Settings()
        self.assertEqual((s.correctness_draws, s.warmup_draws, s.timing_draws, s.recheck_draws), (5, 10, 50, 3))
        self.assertEqual((s.timeout_s, s.max_kernel_bytes, s.outlier_p, s.outlier_scale), (600.0, 300_000, 0.001, 50.0))

    def test_unknown_and_bad_keys_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown settings key 'draws'"):
            parse_settings({"draws": 3})
        with self.assertRaisesRegex(ValueError, "timing_draws must be a non-negative integer"):
            parse_settings({"timing_draws": "many"})
        self.assertEqual(parse_settings({"timeout_s": 5}).timeout_s, 5.0)

    def test_median_iqr_speedup(self) -> None:
        self.assertEqual(timing.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(timing.iqr([1.0, 2.0, 3.0, 4.0, 5.0]), 2.0)
        self.assertIsNone(timing.iqr([1.0]))
        self.assertEqual(timing.speedup(2.0, 0.5), 4.0)
        self.assertEqual(timing.speedup(None, 0.5), 0.0)


if __name__ == "__main__":
    unittest.main()
