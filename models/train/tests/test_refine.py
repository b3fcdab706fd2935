"""Tests for the refinement stage's crop box and training crops."""
import math
import os
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

from sim import phantom
from cardiac import refine

from tests import fixtures


def square(x0, y0, x1, y1):
    return [(x0, y0), (x1, y1), (x0, y1), (x1, y0), (x0, y0), (x1, y1), (x0, y0)]


class RefineBoxTest(unittest.TestCase):
    # The same cases as TestRefineBox in engine/cardiac/refine_test.go: the
    # engine must crop exactly where the trainer cropped.
    CASES = [
        (square(100, 200, 300, 300), 1000, 800, 0.2, (60, 160, 340, 340)),
        (square(100.5, 200.25, 300.5, 300.75), 1000, 800, 0.2, (60, 160, 341, 341)),
        (square(10, 20, 390, 290), 400, 300, 0.2, (0, 0, 400, 300)),
        (square(100, 200, 300, 300), 1000, 800, 0.0, (100, 200, 300, 300)),
    ]

    def test_cases_match_engine(self):
        for pts, w, h, m, want in self.CASES:
            self.assertEqual(refine.refine_box(pts, w, h, m), want)

    def test_crop_sample_maps_landmarks(self):
        im, truth, _ = phantom.generate(5, 700, 500)
        pts = np.array([truth[k] for k in phantom.LANDMARKS])
        box = refine.refine_box(pts, 700, 500)
        x, lm = refine.crop_sample(im, pts, box, 224)
        self.assertEqual(x.shape, (224, 224))
        self.assertTrue(np.all(lm > 0) and np.all(lm < 1))
        # Map back: crop-letterbox units -> crop pixels -> image pixels.
        cw, ch = box[2] - box[0], box[3] - box[1]
        s = 224 / max(cw, ch)
        nw, nh = max(1, round(cw * s)), max(1, round(ch * s))
        ox, oy = (224 - nw) // 2, (224 - nh) // 2
        back = np.stack([(lm[:, 0] * 224 - ox) * cw / nw + box[0], (lm[:, 1] * 224 - oy) * ch / nh + box[1]], 1)
        np.testing.assert_allclose(back, pts, atol=1e-3)

    def test_training_crops_contain_every_landmark(self):
        for seed, gen in [(s, g) for s in range(3) for g in ("phantom", "xraysim")]:
            for x, lm in refine._sample((seed, 224, 2, gen)):
                self.assertEqual(x.dtype, np.uint8)
                self.assertTrue(np.all(lm >= 0) and np.all(lm <= 1), lm)

    def test_dogheart_crops_mask_vlas(self):
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            fixtures.write_dogheart(d, (800, 600), [[300, 250], [420, 450], [280, 420], [460, 300], [200, 150], [600, 170]])
            imgs, lms, mask = refine.load_dogheart_crops(d, 224, crops=3)
        self.assertEqual(imgs.shape, (3, 224, 224))
        vlas = phantom.LANDMARKS.index("VLAS")
        self.assertTrue(np.all(mask[:, vlas] == 0) and mask.sum() == 18)
        known = np.delete(lms, vlas, axis=1)
        self.assertTrue(np.all(known > 0) and np.all(known < 1))
        # The crop is about the points' extent plus margins: the points span
        # most of the crop's long side.
        span = known[:, :, 0].max(1) - known[:, :, 0].min(1)
        self.assertTrue(np.all(span > 0.55) and np.all(span < 0.85), span)


if __name__ == "__main__":
    unittest.main()
