"""Tests for the phantom generator, the datasets and the trainer pipeline."""
import os
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

from cardiac import dataset
from sim import phantom

from tests import fixtures


class PhantomTest(unittest.TestCase):
    def test_truth_matches_sampled_ranges(self):
        for seed in range(20):
            im, truth, meta = phantom.generate(seed, 400, 300)
            self.assertEqual(im.size, (400, 300))
            self.assertEqual(set(truth), set(phantom.LANDMARKS))
            self.assertGreater(meta["vhs"], 7.0)
            self.assertLess(meta["vhs"], 15.0)
            self.assertGreater(meta["vlas"], 1.0)
            self.assertLess(meta["vlas"], 4.2)
            for p in truth.values():
                self.assertTrue(0 < p[0] < 400 and 0 < p[1] < 300)

    def test_short_axis_perpendicular_to_long_axis(self):
        for seed in range(10):
            _, t, _ = phantom.generate(seed, 500, 500)
            long = np.subtract(t["heart_bottom"], t["heart_top"])
            short = np.subtract(t["heart_left"], t["heart_right"])
            cos = abs(np.dot(long, short)) / np.linalg.norm(long) / np.linalg.norm(short)
            self.assertLess(cos, 1e-6)

    def test_measure_is_scale_free_but_not_aspect_free(self):
        _, t, meta = phantom.generate(3, 600, 400)
        vhs, vlas = phantom.measure({k: np.asarray(v) * 2.5 for k, v in t.items()})
        self.assertAlmostEqual(vhs, meta["vhs"], places=6)
        self.assertAlmostEqual(vlas, meta["vlas"], places=6)
        squashed = {k: np.asarray(v) * [1.0, 0.5] for k, v in t.items()}
        self.assertNotAlmostEqual(phantom.measure(squashed)[0], meta["vhs"], places=2)

    def test_seeds_are_reproducible(self):
        a = np.asarray(phantom.generate(5, 300, 300)[0])
        b = np.asarray(phantom.generate(5, 300, 300)[0])
        self.assertTrue((a == b).all())

    def test_letterbox_coordinates_round_trip(self):
        for w, h in [(640, 480), (300, 900), (1000, 1000), (37, 500)]:
            S = 224
            nw, nh, ox, oy = dataset.letterbox_geometry(w, h, S)
            self.assertEqual(max(nw, nh), S)
            pts = np.array([[0.0, 0.0], [w, h], [w / 3, h / 7]])
            lb = dataset.to_letterbox_coords(pts, w, h, S) * S
            back = np.stack([(lb[:, 0] - ox) * w / nw, (lb[:, 1] - oy) * h / nh], 1)
            np.testing.assert_allclose(back, pts, atol=1e-9)


class DogHeartTest(unittest.TestCase):
    def test_reads_six_points_and_masks_vlas(self):
        with tempfile.TemporaryDirectory() as d:
            fixtures.write_dogheart(d, (400, 200), [[100, 50], [150, 150], [90, 120], [180, 90], [60, 20], [300, 30]])
            imgs, lms, mask = dataset.load_dogheart(d, 100)
            self.assertEqual(imgs.shape, (1, 100, 100))
            self.assertEqual(mask[0, phantom.LANDMARKS.index("VLAS")], 0)
            self.assertEqual(mask.sum(), 6)
            top = lms[0, phantom.LANDMARKS.index("heart_top")]
            # 400x200 -> 100x50 (scale 0.25) placed at y offset 25
            np.testing.assert_allclose(top, [100 / 400, (50 * 0.25 + 25) / 100], atol=1e-6)


if __name__ == "__main__":
    unittest.main()
