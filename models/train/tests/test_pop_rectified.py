"""pop_rectified: rectification keeps labels on the anatomy, and the pool reads back."""
import json
import os
import tempfile
import unittest

import numpy as np
from PIL import Image, ImageDraw

from cardiac import dataset
from sim import phantom
from pop import composites as pc
from pop import rectified as pr


class TestRectify(unittest.TestCase):
    def test_point_lands_where_the_homography_says(self):
        # A bright dot on a plane, photographed under a known perspective:
        # after rectification from the true quad it must sit at the mapped point.
        W, H = 640, 480
        plane_w, plane_h = 300, 200
        dot = (210.0, 70.0)
        quad = np.array([(120, 90), (520, 60), (560, 400), (90, 420)], float)
        to_frame = pc.homography([(0, 0), (plane_w, 0), (plane_w, plane_h), (0, plane_h)], quad)
        frame = np.zeros((H, W, 3), np.uint8)
        fx, fy = pc.apply_h(to_frame, [dot])[0]
        d = ImageDraw.Draw(im := Image.fromarray(frame))
        d.ellipse([fx - 3, fy - 3, fx + 3, fy + 3], fill=(255, 255, 255))
        rect, Hm = pr.rectify(np.asarray(im), quad, plane_w / plane_h)
        w, h = rect.size
        self.assertAlmostEqual(w / h, plane_w / plane_h, delta=0.02)
        mx, my = pc.apply_h(Hm, [(fx, fy)])[0]
        a = np.asarray(rect, float)
        ys, xs = np.nonzero(a > 128)
        self.assertGreater(len(xs), 0)
        self.assertLess(np.hypot(xs.mean() + 0.5 - mx, ys.mean() + 0.5 - my), 1.5)
        # and the mapped point is the dot's place on the plane, rescaled
        self.assertAlmostEqual(mx / w, dot[0] / plane_w, delta=0.005)
        self.assertAlmostEqual(my / h, dot[1] / plane_h, delta=0.005)

    def test_size_is_the_engines(self):
        # The same table engine/pop's SizeForAspect is tested on.
        ref = os.path.join(os.path.dirname(__file__), "..", "..", "reference", "rectified_size.json")
        with open(ref) as f:
            cases = json.load(f)["cases"]
        self.assertGreater(len(cases), 4)
        for c in cases:
            want = tuple(c["size"]) if c["size"] else None
            self.assertEqual(pr.rectified_size(c["quad"], c["aspect"]), want, c)

    def test_too_small_is_not_rectified(self):
        frame = np.zeros((120, 160, 3), np.uint8)
        self.assertIsNone(pr.rectify(frame, np.array([(0, 0), (100, 0), (100, 40), (0, 40)], float), 2.5))


class TestPool(unittest.TestCase):
    def test_case_writes_a_readable_labelled_pool_entry(self):
        with tempfile.TemporaryDirectory() as out:
            for d in ("Images", "Labels"):
                os.makedirs(os.path.join(out, d))
            row = None
            for seed in range(46_900_000, 46_900_010):  # skip cut-off frames
                row = pr.case((seed, out, {}, 0.0))
                if row:
                    break
            self.assertIsNotNone(row)
            im, pts, mask = dataset.read_dogheart_case(out, row["case"])
            w, h = im.size
            six = pts[mask > 0]
            self.assertEqual(len(six), 6)
            self.assertTrue(((six[:, 0] > 0) & (six[:, 0] < w) & (six[:, 1] > 0) & (six[:, 1] < h)).all())
            lm = {k: pts[i] for i, k in enumerate(phantom.LANDMARKS)}
            lm["VLAS"] = np.array(row["vlas_point"])
            self.assertAlmostEqual(phantom.measure(lm)[0], row["vhs"], places=6)
            # Exact corners: the rectified labels give the displayed
            # radiograph's own VHS (up to the rounding of the rectified size).
            self.assertAlmostEqual(row["vhs"], row["vhs_displayed"], delta=0.03)
            json.dumps(row)


if __name__ == "__main__":
    unittest.main()
