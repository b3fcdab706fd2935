"""The third family (sim/family3.py): deterministic, inside its frame, and
its landmarks follow the spec's convention from the drawn shapes."""
import json
import math
import os
import tempfile
import unittest

import numpy as np

from sim import family3


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
            self.assertTrue(7.5 < family3.vhs_of(t) < 13.5, family3.vhs_of(t))
            self.assertAlmostEqual(math.dist(t["Vertebra A"], t["Vertebra B"]) / 6, meta["v"], delta=0.03 * meta["v"])
            # the short axis is perpendicular to the long one (the widest perpendicular chord)
            lx = np.subtract(t["heart_bottom"], t["heart_top"])
            sx = np.subtract(t["heart_left"], t["heart_right"])
            cos = abs(lx @ sx) / (np.linalg.norm(lx) * np.linalg.norm(sx))
            self.assertLess(cos, 0.05, seed)
            # the apex is the silhouette's farthest point: longer than the short axis
            self.assertGreater(np.linalg.norm(lx), np.linalg.norm(sx) * 0.9)

    def test_write_set(self):
        with tempfile.TemporaryDirectory() as d:
            items = family3.write_set(d, 2, 5_000, workers=1)
            truth = json.load(open(os.path.join(d, "truth.json")))
            self.assertEqual(len(truth["items"]), 2)
            for it in items:
                self.assertTrue(os.path.exists(os.path.join(d, it["file"])))
                self.assertEqual(set(it["landmarks"]), set(family3.LANDMARKS))
                self.assertAlmostEqual(it["vhs"], family3.vhs_of(it["landmarks"]), places=9)


if __name__ == "__main__":
    unittest.main()
