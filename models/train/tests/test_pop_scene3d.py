"""pop_scene3d: the ray-traced screen photos carry exact truth."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from pop import composites as pc  # noqa: E402
from pop import scene3d as s3  # noqa: E402
from tests.fixtures import assert_truth_gives_vhs  # noqa: E402

SEED = 48_900_000  # test seeds, apart from the held-out set's 48,000,000+


class TestScene3D(unittest.TestCase):
    def test_projection_inverts_the_rays(self):
        # A point along a pixel's ray projects back onto that pixel, through
        # the lens distortion, for barrel and pincushion lenses.
        for k, k1 in enumerate((-0.1, 0.0, 0.03)):
            s = s3.Scene(SEED + k, size=(160, 120))
            s.k1 = k1
            d = s.rays(1).reshape(120, 160, 3)
            for (y, x) in ((0, 0), (60, 80), (119, 159), (10, 150)):
                p = s.cam + d[y, x] * 123.0
                q = s.project([p])[0]
                np.testing.assert_allclose(q, (x + 0.5, y + 0.5), atol=1e-6)

    def test_truth_gives_back_the_vhs(self):
        # Without lens distortion the screen maps to the frame by a plane
        # homography: undoing it with the truth corners gives the displayed
        # radiograph's VHS, in every layout.
        for k, layout in enumerate(s3.LAYOUTS):
            s = s3.Scene(SEED + 10 + k, size=(320, 240), only={"layout": layout})
            s.k1 = 0.0
            t = s3.truth(s)
            self.assertEqual(t["layout"], layout)
            assert_truth_gives_vhs(self, t)

    def test_render_shows_the_radiograph_where_the_truth_says(self):
        # The photo, sampled inside the truth quad, follows the displayed
        # file warped by the same corners; shifted by a tenth of the quad it
        # follows it much less.
        s = s3.Scene(SEED + 20, size=(320, 240), only={"room": "office", "layout": "fullscreen"})
        im = np.asarray(s3.render(s).convert("L"), float)
        self.assertEqual(im.shape, (240, 320))
        t = s3.truth(s)
        f = np.asarray(s.file_image.convert("L"), float)
        fh, fw = f.shape
        c = np.array(t["corners"])
        Hf = pc.homography([(0, 0), (fw, 0), (fw, fh), (0, fh)], c)
        uu, vv = np.meshgrid(np.linspace(0.1, 0.9, 25) * fw, np.linspace(0.1, 0.9, 25) * fh)
        src = np.stack([uu.ravel(), vv.ravel()], 1)
        want = f[vv.astype(int).ravel(), uu.astype(int).ravel()]

        def corr(dx):
            p = pc.apply_h(Hf, src) + [dx, 0]
            x = np.clip(p[:, 0].astype(int), 0, 319)
            y = np.clip(p[:, 1].astype(int), 0, 239)
            return np.corrcoef(im[y, x], want)[0, 1]
        shift = 0.1 * np.linalg.norm(c[1] - c[0])
        self.assertGreater(corr(0), 0.6)
        self.assertGreater(corr(0) - corr(shift), 0.2)

    def test_cut_off_marks_the_frame_unusable(self):
        found = 0
        for k in range(10):
            s = s3.Scene(SEED + 100 + k, size=(320, 240))
            t = s3.truth(s)
            scr = np.array(t["screen"])
            out = (scr[:, 0] < 0) | (scr[:, 0] > 320) | (scr[:, 1] < 0) | (scr[:, 1] > 240)
            self.assertEqual(bool(out.any()), t["cut_off"])
            self.assertEqual(t["usable"], not t["cut_off"])
            found += t["cut_off"]
        self.assertLess(found, 6)

    def test_hidden_share_sees_what_stands_in_front(self):
        # A box put between the camera and the middle of the displayed
        # radiograph hides part of it, and the frame is no longer usable.
        s = s3.Scene(SEED + 30, size=(320, 240), only={"layout": "pacs_dark"})
        s.items = []
        s.second = False
        clear = s.hidden_share()
        self.assertLess(clear, s3.MAX_HIDDEN)
        x0, y0, x1, y1 = s.rect
        mid = s.screen_point((x0 + x1) / 2, (y0 + y1) / 2)
        c = mid + (s.cam - mid) * 0.5
        s.items = [s3.Box("books", c, np.eye(3), [6, 6, 6], "books", albedo=[0.3, 0.3, 0.3])]
        hidden = s.hidden_share()
        self.assertGreater(hidden, max(clear + 0.05, s3.MAX_HIDDEN))
        t = s3.truth(s)
        self.assertEqual(t["hidden"], round(hidden, 3))
        self.assertFalse(t["usable"])
        self.assertEqual(t["mode"], "viewer")

    def test_shaken_moves_the_camera_a_little(self):
        # A hand-held frame a moment later: the truth corners move by a
        # little, not by nothing, and stay consistent.
        s = s3.Scene(SEED + 40, size=(320, 240))
        a = np.array(s3.truth(s)["corners"])
        t = s.shaken(np.random.default_rng(1), 1.0)
        self.assertEqual(t.frame_no, 1)
        b = np.array(s3.truth(t)["corners"])
        move = np.linalg.norm(a - b, axis=1).max() / 400.0
        self.assertGreater(move, 1e-4)
        self.assertLess(move, 0.05)
        t.k1 = 0.0
        assert_truth_gives_vhs(self, s3.truth(t))


if __name__ == "__main__":
    unittest.main()
