"""Tests for the spread-cut calibration (cardiac/calibrate_spread.py)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

from cardiac import calibrate_spread


class CalibrateSpreadTest(unittest.TestCase):
    rows = [{"vhs": 10.0, "pred_vhs": 10.0 + e, "spread": s, "code": 1}
            for e, s in [(0.1, 0.002), (0.2, 0.004), (0.3, 0.006), (2.0, 0.02), (0.2, 0.003)]] + \
           [{"vhs": 9.0, "pred_vhs": None, "spread": 0.09, "code": 5}]

    def test_table_counts_and_errors(self):
        t = calibrate_spread.table(self.rows, [0.005, 0.01, 0.05])
        self.assertEqual([r[1] for r in t], [3, 4, 5])
        self.assertAlmostEqual(t[1][4], 0.3)       # max error under 0.01
        self.assertAlmostEqual(t[2][4], 2.0)       # the wrong one is returned above 0.02
        self.assertAlmostEqual(t[0][2], 0.4)       # 2 of 5 measured withheld at 0.005

    def test_chooses_largest_safe_cut(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "dump.jsonl")
            with open(p, "w") as f:
                for r in self.rows:
                    f.write(json.dumps(r) + "\n")
            out = subprocess.run([sys.executable, "-m", "cardiac.calibrate_spread",
                                  "--max-err", "1.5", "--max-withheld", "0.5", p],
                                 cwd=os.path.dirname(HERE), capture_output=True, text=True, check=True).stdout
        chosen = float(out.strip().splitlines()[-1].split(":")[1])
        self.assertLess(chosen, 0.02)
        self.assertGreaterEqual(chosen, 0.006)


if __name__ == "__main__":
    unittest.main()
