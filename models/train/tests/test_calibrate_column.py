"""Tests for the column route's bound calibration (cardiac/calibrate_column.py)."""
import unittest

import numpy as np

from cardiac import calibrate_column


def row(err, sd, score, guard=""):
    return {"vhs": 10.0, "column_vhs": 10.0 + err, "heart_vhs_sd": sd, "spread": 0.01, "guard": guard,
            "column": {"Score": score, "V": 40.0}}


class CalibrateColumnTest(unittest.TestCase):
    rows = [row(0.2, 0.04, 0.9), row(-0.4, 0.06, 0.8, "heart_points_disagree"),
            row(1.8, 0.08, 0.9, "heart_points_disagree"), row(3.0, 0.04, 0.3, "column_weak"),
            row(5.0, 0.01, 0.9, "axes_out_of_scale"),  # decided by another guard: not counted
            {"vhs": 9.0, "guard": "column_not_found", "spread": 0.004},
            {"negative": True, "code": 6, "file": "neg_0001.jpg"}]

    def test_counts_only_what_the_two_bounds_decide(self):
        m = calibrate_column.measurable(self.rows)
        self.assertEqual(len(m), 4)
        self.assertAlmostEqual(m[:, 0].max(), 3.0)

    def test_the_score_bound_withholds_weak_columns(self):
        m = calibrate_column.measurable(self.rows)
        self.assertEqual(len(calibrate_column.returned(m, 0.2, 0.5)), 3)
        self.assertEqual(len(calibrate_column.returned(m, 0.2, 0.0)), 4)

    def test_chooses_the_largest_cut_before_the_first_large_error(self):
        m = calibrate_column.measurable(self.rows)
        cuts = np.array([0.04, 0.05, 0.06, 0.07, 0.08, 0.09])
        self.assertAlmostEqual(calibrate_column.choose(m, 0.5, 1.5, cuts), 0.07)
        # A looser error limit lets the 1.8 v one through.
        self.assertAlmostEqual(calibrate_column.choose(m, 0.5, 2.0, cuts), 0.09)
        # Every cut returns the 3 v weak column when the score bound is off.
        self.assertIsNone(calibrate_column.choose(m, 0.0, 1.5, cuts))

    def test_score_rule_takes_the_smallest_step_without_a_wrong_column(self):
        truth = {"a.jpg": {"landmarks": {"Vertebra A": [0, 0], "Vertebra B": [240, 0]}}}  # exact v 40 px
        rows = [{"file": "a.jpg", "column": {"Score": sc, "V": v}} for sc, v in
                [(0.9, 40.0), (0.8, 41.0), (0.62, 80.0), (0.5, 20.0), (0.3, 39.0)]]
        rows.append({"file": "a.jpg", "guard": "column_not_found"})
        cols = calibrate_column.column_errors(rows, truth)
        self.assertEqual(len(cols), 5)
        self.assertAlmostEqual(calibrate_column.choose_score(cols), 0.65)
        self.assertAlmostEqual(calibrate_column.choose_score(cols, max_rel=1.5), 0.30)


if __name__ == "__main__":
    unittest.main()
