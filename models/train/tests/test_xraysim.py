"""Tests for the physically based radiograph simulator (sim/xraysim.py)."""
import math
import os
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

from sim import xraysim


class ChordTest(unittest.TestCase):
    def test_ellipsoid_chord_is_analytic(self):
        # A sphere of radius 2 at the origin: chord 2*sqrt(4 - d^2) at distance d.
        scene = xraysim.Scene(0.0, 0.0, (0, 0, 0))
        scene.ellipsoid([0, 0, 0], [2, 2, 2], 1.0, name="ball")
        _, cv, M, _ = scene.ell[0]
        X = np.array([[0.0, 1.0, 1.9, 2.1]])
        Y = np.zeros_like(X)
        t0, t1 = xraysim._ell_interval(cv, M, X, Y)
        want = [4.0, 2 * math.sqrt(3), 2 * math.sqrt(4 - 1.9 ** 2), 0.0]
        np.testing.assert_allclose((t1 - t0)[0], want, atol=1e-9)

    def test_cylinder_chord_and_flat_ends(self):
        # A cylinder along x (radius 1, from x=0 to x=4): the lateral chord at
        # height d is 2*sqrt(1-d^2) inside the slab and 0 beyond the endplates.
        out = np.zeros((40, 60))
        s = 10.0  # px per unit; pixel centres at (j+0.5)/s + X0
        X0, Y0 = -1.0, -2.0
        xraysim._render_cylinders([(np.array([0.0, 0, 0]), np.array([4.0, 0, 0]), 1.0, 1.0)], X0, Y0, s, 40, 60, out)
        j = int((2.0 - X0) * s)  # x = 2.05
        for i in range(40):
            y = Y0 + (i + 0.5) / s
            want = 2 * math.sqrt(max(0.0, 1 - y * y))
            self.assertAlmostEqual(out[i, j], want, places=6)
        i = int((0.0 - Y0) * s)
        self.assertEqual(out[i, int((4.3 - X0) * s)], 0.0)
        self.assertEqual(out[i, int((-0.3 - X0) * s)], 0.0)

    def test_lungs_darker_than_heart_darker_than_bone(self):
        r = np.random.default_rng(5)
        pt = xraysim.Patient(r)
        mu = xraysim.attenuation_coefficients(r)
        mu["lung"] = mu["soft"] * 0.25
        scene, parts, carina, meta = xraysim.build(pt, r, mu)
        scene.mu_soft = mu["soft"]
        lm = xraysim.heart_landmarks(scene, parts, carina, meta["cvc_y"])
        self.assertIsNotNone(lm)
        top, bottom, right, left, _ = lm
        s, X0, Y0 = 20.0, -4.0, -6.0
        A = xraysim.project(scene, X0, Y0, s, 400, 500, mu["lung"])
        px = lambda p: A[int((p[1] - Y0) * s), int((p[0] - X0) * s)]
        heart_centre = 0.5 * (right + left)
        # a lung point: dorsocaudal of the heart, below the spine
        lung = np.array([pt.endplate_x[9], float(pt.spine_y(pt.endplate_x[9])) + 1.6])
        lung = scene.view(np.array([lung[0], lung[1], 0]))[:2]
        body = scene.view(pt.body_axis_point(pt.endplate_x[6] + 0.45, 0.5))[:2]
        self.assertLess(px(lung), px(heart_centre))
        self.assertLess(px(heart_centre), px(body) + 10)  # the vertebral body adds bone along the ray


class WorldTest(unittest.TestCase):
    """World 2 draws the same patient with its own anatomy and processing."""

    def test_same_patient_and_pose(self):
        for seed in range(6):
            _, t1, m1 = xraysim.generate(seed, 320, 240)
            im2, t2, m2 = xraysim.generate(seed, 320, 240, world="xraysim2")
            self.assertEqual(m2["generator"], "xraysim2")
            self.assertEqual(m1["generator"], "xraysim")
            self.assertEqual((m1["kind"], m1["pattern"], m1["presentation"]), (m2["kind"], m2["pattern"], m2["presentation"]))
            # The same heart over the same spine, with world 2's bulges on
            # its border: they add to the silhouette, so VHS grows a little
            # or stays (the deeper or shallower chest moves only the frame).
            self.assertGreater(m2["vhs"], 0.97 * m1["vhs"], seed)
            self.assertLess(m2["vhs"], 1.15 * m1["vhs"], seed)
            vhs, _ = xraysim.measure(t2)
            self.assertAlmostEqual(vhs, m2["vhs"], delta=0.05 * m2["vhs"])

    def test_world2_image_differs_and_world1_unchanged_by_it(self):
        a, _, _ = xraysim.generate(3, 200, 160)
        b, _, _ = xraysim.generate(3, 200, 160, world="xraysim2")
        c, _, _ = xraysim.generate(3, 200, 160)
        self.assertFalse(np.array_equal(np.asarray(a), np.asarray(b)))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))

    def test_flatter_vertebral_bodies(self):
        r1 = [xraysim.Patient(np.random.default_rng(s)).body_h for s in range(30)]
        r2 = [xraysim.Patient(np.random.default_rng(s), r2=np.random.default_rng([s, 2])).body_h for s in range(30)]
        self.assertLessEqual(max(r2), 0.62)
        self.assertLess(np.mean(r2), np.mean(r1) - 0.1)

    def test_heart_reaches_the_sternum(self):
        for s in range(30):
            pt = xraysim.Patient(np.random.default_rng(s), r2=np.random.default_rng([s, 2]))
            gap = pt.depth - (1.5 + pt.L * math.cos(pt.tilt))
            self.assertTrue(-0.2 <= gap <= 1.4 or pt.depth == 6.0, (s, pt.kind, gap))

    def test_world3_reads_the_carina_where_world2_would_not_put_it(self):
        """World 3 is world 2's patient with the carina drawn over a wider
        range (1.0-3.0 v below the column, -0.4-1.8 v caudal of T4), a
        plainer trachea and the heart moved from it; world 2's images are
        unchanged by it."""
        deep, caudal = 0, 0
        for s in range(40):
            r = np.random.default_rng(s)
            pt3 = xraysim.Patient(r, r2=np.random.default_rng([s, 2]), r3=np.random.default_rng([s, 3]))
            self.assertTrue(1.0 <= pt3.carina_dy <= 3.0 and -0.4 <= pt3.carina_dx <= 1.8)
            self.assertTrue(-0.15 <= pt3.heart_da <= 0.1 and -0.3 <= pt3.heart_db <= 0.3)
            # the heart still rests in the chest below the carina
            gap = pt3.depth - (pt3.carina_dy + pt3.L * math.cos(pt3.tilt))
            self.assertTrue(-0.2 <= gap <= 1.4 or pt3.depth == 6.0, (s, gap))
            deep += pt3.carina_dy > 1.9
            caudal += pt3.carina_dx > 0.8
        self.assertGreater(deep, 10)    # beyond worlds 1 and 2's 1.1-1.9 v
        self.assertGreater(caudal, 10)  # beyond their -0.1-0.8 v
        a, _, _ = xraysim.generate(3, 200, 160, world="xraysim2")
        b, t3, m3 = xraysim.generate(3, 200, 160, world="xraysim3")
        c, _, _ = xraysim.generate(3, 200, 160, world="xraysim2")
        self.assertEqual(m3["generator"], "xraysim3")
        self.assertFalse(np.array_equal(np.asarray(a), np.asarray(b)))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(c))
        vhs, _ = xraysim.measure(t3)
        self.assertAlmostEqual(vhs, m3["vhs"], delta=0.05 * m3["vhs"])

    def test_unknown_world(self):
        with self.assertRaises(ValueError):
            xraysim.generate(1, 64, 64, world="xraysim9")


class GenerateTest(unittest.TestCase):
    def test_truth_inside_and_plausible(self):
        for seed in range(12):
            im, truth, meta = xraysim.generate(seed, long_side=300)
            w, h = im.size
            self.assertEqual(set(truth), set(xraysim.LANDMARKS))
            for k, p in truth.items():
                self.assertTrue(-1 <= p[0] <= w + 1 and -1 <= p[1] <= h + 1, (seed, k, p, im.size))
            vhs, vlas = xraysim.measure(truth)
            self.assertAlmostEqual(vhs, meta["vhs"], delta=0.05 * meta["vhs"])
            self.assertTrue(6.0 < meta["vhs"] < 15.0)
            self.assertTrue(0.8 < meta["vlas"] < 4.5)

    def test_axes_perpendicular_and_vertebrae_dorsal(self):
        for seed in range(12):
            _, t, _ = xraysim.generate(seed, long_side=300)
            long = np.subtract(t["heart_bottom"], t["heart_top"])
            short = np.subtract(t["heart_left"], t["heart_right"])
            cos = abs(np.dot(long, short)) / np.linalg.norm(long) / np.linalg.norm(short)
            self.assertLess(cos, 0.03, seed)
            # The carina lies nearer the T4-T9 line (dorsal) than the apex does.
            a, b = np.asarray(t["Vertebra A"]), np.asarray(t["Vertebra B"])
            n = np.array([-(b - a)[1], (b - a)[0]]) / np.linalg.norm(b - a)
            self.assertLess(abs(np.dot(t["heart_top"] - a, n)), abs(np.dot(t["heart_bottom"] - a, n)), seed)

    def test_seeded_and_sized(self):
        a, ta, _ = xraysim.generate(7, 320, 240)
        b, tb, _ = xraysim.generate(7, 320, 240)
        self.assertEqual(a.size, (320, 240))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        for k in ta:
            np.testing.assert_allclose(ta[k], tb[k])

    def test_heldout_only_presentations_stay_out_of_training(self):
        for seed in range(40):
            _, _, meta = xraysim.generate(seed, long_side=224)
            self.assertNotIn(meta["presentation"]["tint"], xraysim.HELDOUT_ONLY_TINTS)
            self.assertFalse(meta["presentation"]["lightbox"])

    def test_lightbox_truth_follows_perspective(self):
        quad = (10, 5, 3, 190, 195, 196, 190, 8)
        pts = {"a": np.array([50.0, 60.0]), "b": np.array([150.0, 120.0])}
        out = xraysim._quad_inverse(quad, 200, 200, pts)
        ul, ll, lr, ur = (np.array(quad[i:i + 2], float) for i in range(0, 8, 2))
        for k, p in pts.items():
            u, v = out[k] / 200
            fwd = ul * (1 - u) * (1 - v) + ll * (1 - u) * v + lr * u * v + ur * u * (1 - v)
            np.testing.assert_allclose(fwd, p, atol=1e-6)

    def test_geometric_moves_truth_with_pixels(self):
        r = np.random.default_rng(1)
        for _ in range(4):
            g = np.zeros((200, 300))
            g[50, 80] = g[150, 220] = 1
            truth = {"a": np.array([80.5, 50.5]), "b": np.array([220.5, 150.5])}
            g2, t2, m2 = xraysim._geometric(g, truth, r, None, g.copy())
            np.testing.assert_array_equal(g2, m2)
            for p in t2.values():
                i, j = int(p[1]), int(p[0])
                self.assertGreater(g2[max(0, i - 2):i + 3, max(0, j - 2):j + 3].max(), 0.3)

    def test_heart_mask_is_the_silhouette_the_landmarks_measure(self):
        for seed in (1, 7, 11):
            im, truth, meta = xraysim.generate(seed, long_side=400, with_mask=True)
            plain, _, _ = xraysim.generate(seed, long_side=400)
            np.testing.assert_array_equal(np.asarray(im), np.asarray(plain))
            m = meta["heart_mask"]
            self.assertEqual(m.shape, (im.size[1], im.size[0]))
            # the short axis' ends and the apex lie on the silhouette's edge:
            # both inside and outside within 3 px of each
            for k in ("heart_bottom", "heart_right", "heart_left"):
                x, y = np.round(truth[k]).astype(int)
                win = m[max(0, y - 3):y + 4, max(0, x - 3):x + 4]
                self.assertGreater(win.max(), 200, (seed, k))
                self.assertLess(win.min(), 55, (seed, k))

    def test_other_views(self):
        for kind in ("vd_thorax", "abdomen", "limb"):
            im, k = xraysim.other_view(3, kind)
            self.assertEqual(k, kind)
            a = np.asarray(im.convert("L"), float)
            self.assertGreater(a.std(), 10, kind)


if __name__ == "__main__":
    unittest.main()
