"""The third family (sim/family3.py): deterministic, inside its frame, and
its landmarks follow the spec's convention from the drawn shapes; sim/heldout.py
writes its judging sets."""
import json
import math
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np

from sim import family3, heldout, phantom
from tests.test_heldout import _SerialPool


class TestFamily3(unittest.TestCase):
    def test_deterministic(self):
        a, ta, _ = family3.generate(7, long_side=320)
        b, tb, _ = family3.generate(7, long_side=320)
        self.assertTrue(np.array_equal(np.asarray(a), np.asarray(b)))
        self.assertEqual(ta, tb)
        c, _, _ = family3.generate(8, long_side=320)
        self.assertFalse(np.array_equal(np.asarray(a), np.asarray(c)))

    def test_landmarks_follow_the_convention(self):
        for seed in range(6):
            im, t, meta = family3.generate(100 + seed, long_side=360)
            w, h = im.size
            for k, p in t.items():
                self.assertTrue(0 <= p[0] < w and 0 <= p[1] < h, (seed, k, p))
            # VHS from the truth lies in the drawn range, and |A-B| is six drawn vertebrae
            self.assertTrue(7.5 < meta["vhs"] < 13.5, meta["vhs"])
            self.assertEqual((meta["vhs"], meta["vlas"]), phantom.measure(t))
            self.assertAlmostEqual(math.dist(t["Vertebra A"], t["Vertebra B"]) / 6, meta["v"], delta=0.03 * meta["v"])
            # the short axis is perpendicular to the long one (the widest perpendicular chord)
            lx = np.subtract(t["heart_bottom"], t["heart_top"])
            sx = np.subtract(t["heart_left"], t["heart_right"])
            cos = abs(lx @ sx) / (np.linalg.norm(lx) * np.linalg.norm(sx))
            self.assertLess(cos, 0.05, seed)
            # the apex is the silhouette's farthest point: longer than the short axis
            self.assertGreater(np.linalg.norm(lx), np.linalg.norm(sx) * 0.9)

    def test_heldout_writes_a_set(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(heldout, "Pool", _SerialPool), \
                mock.patch.object(sys, "argv", ["heldout", "--out", d, "--n", "2", "--negatives", "0",
                                                "--generator", "family3", "--offset", "5000"]):
            heldout.main()
            truth = json.load(open(os.path.join(d, "truth.json")))
            self.assertEqual(len(truth["items"]), 2)
            self.assertIn(str(family3.HELDOUT_SEED_BASE + 5000), truth["generator"])
            for it in truth["items"]:
                self.assertTrue(os.path.exists(os.path.join(d, it["file"])))
                self.assertEqual(set(it["landmarks"]), set(phantom.LANDMARKS))
                self.assertAlmostEqual(it["vhs"], phantom.measure(it["landmarks"])[0], places=9)


if __name__ == "__main__":
    unittest.main()
