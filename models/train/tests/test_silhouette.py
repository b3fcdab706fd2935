"""The silhouette route's geometry and joint augmentation."""
import unittest

import numpy as np
import torch

from cardiac import train_silhouette as S
from sim import xraysim


class AxesFromMaskTest(unittest.TestCase):
    def test_exact_silhouette_gives_the_simulators_axes(self):
        for seed in (2, 7, 11):
            im, truth, meta = xraysim.generate(seed, long_side=420, with_mask=True)
            m = meta["heart_mask"] / 255.0
            bottom, right, left = S.axes_from_mask(m, truth["heart_top"])
            want = S.heart_sum(truth["heart_top"], truth["heart_bottom"], truth["heart_right"], truth["heart_left"])
            got = S.heart_sum(truth["heart_top"], bottom, right, left)
            self.assertLess(abs(got - want) / want, 0.01, seed)
            self.assertLess(np.linalg.norm(bottom - truth["heart_bottom"]), 3.0, seed)

    def test_empty_or_tiny_mask_gives_none(self):
        self.assertIsNone(S.axes_from_mask(np.zeros((64, 64)), (10, 10)))
        m = np.zeros((64, 64))
        m[30:33, 30:33] = 1
        self.assertIsNone(S.axes_from_mask(m, (31, 31)))

    def test_ellipse_short_axis_is_its_minor_diameter(self):
        yy, xx = np.mgrid[0:200, 0:200] + 0.5
        m = (((xx - 100) / 40) ** 2 + ((yy - 100) / 70) ** 2 <= 1).astype(float)
        bottom, right, left = S.axes_from_mask(m, (100, 30))
        self.assertAlmostEqual(bottom[1], 170, delta=1.0)
        self.assertAlmostEqual(np.linalg.norm(right - left), 80, delta=1.5)


class CarinaErrorsTest(unittest.TestCase):
    def test_distance_in_true_vertebral_units(self):
        truth = np.zeros((2, len(S.L), 2))
        truth[:, S.L["Vertebra B"]] = [60.0, 0.0]  # v = 10 px
        pred = truth.copy()
        pred[0, S.L["heart_top"]] += [6.0, 8.0]      # 10 px off: 1 v
        pred[1, S.L["heart_bottom"]] += [30.0, 0.0]  # another point moved: the carina is exact
        np.testing.assert_allclose(S.carina_errors(pred, truth), [1.0, 0.0])


class SoftShareTest(unittest.TestCase):
    def test_crisp_soft_and_empty_maps(self):
        crisp = np.zeros((32, 32))
        crisp[8:24, 8:24] = 1.0
        self.assertEqual(S.soft_share(crisp), 0.0)
        soft = crisp * 0.5
        self.assertEqual(S.soft_share(soft), 1.0)
        half = crisp.copy()
        half[8:16, 8:24] = 0.6  # half of the silhouette soft
        self.assertAlmostEqual(S.soft_share(half), 0.5)
        self.assertEqual(S.soft_share(np.zeros((8, 8))), 1.0)

    def test_print_doubt_gates_at_the_named_sets_median(self):
        import io
        from contextlib import redirect_stdout
        u = np.array([0.1, 0.2, 0.3, 0.4])
        e = np.array([0.1, 0.2, 0.9, 2.0])
        buf = io.StringIO()
        with redirect_stdout(buf):
            S.print_doubt({"a.npz": (u, e), "b.npz": (u * 2, e)}, "a.npz")
        out = buf.getvalue()
        self.assertIn("gate at U <= 0.2500, half of a.npz", out)
        self.assertIn("kept    2 of    4 MAE 0.150 worst 0.200 over1.5 0", out)
        self.assertIn("Spearman(U, error) +1.000", out)


class JointAffineTest(unittest.TestCase):
    def test_mask_moves_with_the_image(self):
        g = torch.Generator().manual_seed(5)
        x = torch.zeros(8, 1, 64, 64)
        x[:, :, 20:40, 10:30] = 1
        xa, ma = S.joint_affine(x, x.clone(), g, 30.0, 0.0)
        # zoom-out off: the border fill is the only difference (black, white or grey outside the picture)
        inside = ma > 0.5
        self.assertTrue(torch.all(xa[inside] > 0.5))
        self.assertGreater(int(inside.sum()), 8 * 200)


if __name__ == "__main__":
    unittest.main()
