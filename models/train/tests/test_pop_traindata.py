"""pop_traindata's radiograph pool: --pool-content mixes generators, a
cached pool is never reused for other contents, and --looks shows pool
radiographs as a viewer may."""
import os
import tempfile
import types
import unittest

import numpy as np
from PIL import Image, ImageDraw

from pop import traindata as td
from sim import xraysim


class TestPool(unittest.TestCase):
    def setUp(self):
        td._pool = None

    def tearDown(self):
        td._pool = None

    def test_contents_cycle_and_cache_is_checked(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pool.npz")
            pool = td.load_pool(3, path, contents=("xraysim", "phantom", "xraysim2"))
            self.assertEqual(len(pool), 3)
            for a in pool:
                self.assertEqual(a.dtype, np.uint8)
                self.assertEqual(a.ndim, 2)
                self.assertTrue(260 <= max(a.shape) <= 520, a.shape)
            # Image 0 is the first world's render, as the default pool's.
            self.assertTrue(np.array_equal(pool[0], td._pool_render((0, ("xraysim",)))))
            # Image 2 is the second world's: another picture of the same seed.
            first = np.asarray(xraysim.generate(td.POOL_SEED + 2, long_side=max(pool[2].shape),
                                                present_opts={"lightbox": False, "tint": "grey"})[0].convert("L"))
            self.assertFalse(first.shape == pool[2].shape and np.array_equal(first, pool[2]))
            # The cache answers for its own contents (and for a worker that
            # does not say), and refuses others.
            td._pool = None
            self.assertEqual(len(td.load_pool(0, path, contents=("xraysim", "phantom", "xraysim2"))), 3)
            td._pool = None
            self.assertEqual(len(td.load_pool(0, path)), 3)
            td._pool = None
            with self.assertRaises(SystemExit):
                td.load_pool(0, path, contents=("xraysim",))


class TestLooks(unittest.TestCase):
    def setUp(self):
        # A radiograph-like test card: dark air left, bright body right.
        self.card = np.tile(np.linspace(10, 240, 90), (60, 1)).astype(np.uint8)
        td._pool = [self.card]

    def tearDown(self):
        td._pool = None
        td._looks = 0.0
        td._invert = True
        td._white = True
        td._air = 0.0

    def test_each_look_is_drawn(self):
        rng = np.random.default_rng(7)
        inverted = surround = cropped = windowed = 0
        for _ in range(300):
            a = td.other_look(rng, self.card)
            self.assertEqual(a.dtype, np.uint8)
            self.assertEqual(a.ndim, 2)
            h, w = a.shape
            if h > 60 or w > 90:
                surround += 1
                continue
            if h < 60 or w < 90:
                cropped += 1
            left, right = a[:, : w // 8].mean(), a[:, -w // 8:].mean()
            inverted += left > right
            windowed += a.max() - a.min() > 235
        for name, n in [("inverted", inverted), ("surround", surround), ("cropped", cropped), ("windowed", windowed)]:
            self.assertGreater(n, 10, name)
        # A surround's fill is near black or near white (shutters,
        # collimation, air).
        rng = np.random.default_rng(3)
        for _ in range(50):
            a = td.other_look(rng, self.card)
            if a.shape[0] > 60:
                edge = np.concatenate([a[0], a[-1]])
                self.assertTrue(edge.max() <= 12 or edge.min() >= 225, (edge.min(), edge.max()))
                break
        else:
            self.fail("no surround in 50 draws")

    def test_dark_looks_draw_the_same_and_stay_dark(self):
        # --dark-looks: no inverted view and no white surround, with the
        # same draws, so the rest of the scene's random stream is kept.
        for seed in range(40):
            td._invert = td._white = True
            r1 = np.random.default_rng(seed)
            bright = td.other_look(r1, self.card)
            td._invert = td._white = False
            r2 = np.random.default_rng(seed)
            dark = td.other_look(r2, self.card)
            self.assertEqual(r1.random(), r2.random(), seed)
            self.assertEqual(dark.shape, bright.shape, seed)
            h, w = dark.shape
            if h > 60:
                self.assertLessEqual(np.concatenate([dark[0], dark[-1]]).max(), 12, seed)
            else:
                # The card's dark air stays on the left.
                self.assertLess(dark[:, : w // 8].mean(), dark[:, -w // 8:].mean(), seed)

    def test_no_invert_draws_the_same_and_keeps_white_surrounds(self):
        # --no-invert: the inverted view alone is left out, with the same
        # draws; a white surround is still drawn where one was.
        white = 0
        for seed in range(60):
            r1 = np.random.default_rng(seed)
            full = td.other_look(r1, self.card)
            td._invert = False
            r2 = np.random.default_rng(seed)
            plain = td.other_look(r2, self.card)
            td._invert = True
            self.assertEqual(r1.random(), r2.random(), seed)
            self.assertEqual(plain.shape, full.shape, seed)
            h, w = plain.shape
            if h > 60:
                edge = np.concatenate([plain[0], plain[-1]])
                white += edge.min() >= 225
                # The surround's shade is the one the full looks drew.
                np.testing.assert_array_equal(edge, np.concatenate([full[0], full[-1]]), str(seed))
                inner = plain[h // 2, w // 4: 3 * w // 4].astype(int)
            else:
                inner = plain[h // 2].astype(int)
            # The card's dark air stays on the left (not inverted).
            self.assertLess(inner[: len(inner) // 4].mean(), inner[-len(inner) // 4:].mean(), seed)
        self.assertGreater(white, 0, "no white surround in 60 draws")

    def test_looks_off_keeps_the_frames(self):
        # With --looks 0 the scene's random stream is used as before (one
        # pick, one flip), so every frame stays byte for byte the same.
        D = types.SimpleNamespace(rng=np.random.default_rng(5))
        im, _, _ = td.pool_radiograph(D, 45, 30)
        ref = np.random.default_rng(5)
        ref.integers(1)
        ref.random()
        self.assertEqual(D.rng.random(), ref.random())
        self.assertEqual(im.size, (45, 30))
        # With --looks 1 every displayed radiograph gets another look.
        differ = 0
        for seed in range(8):
            td._looks = 0.0
            a = np.asarray(td.pool_radiograph(types.SimpleNamespace(rng=np.random.default_rng(seed)), 45, 30)[0])
            td._looks = 1.0
            b = np.asarray(td.pool_radiograph(types.SimpleNamespace(rng=np.random.default_rng(seed)), 45, 30)[0])
            self.assertEqual(b.shape, (30, 45))
            differ += not np.array_equal(a, b)
        self.assertGreaterEqual(differ, 6)

    def test_surround_box_is_the_drawn_surround(self):
        # other_look_box draws as other_look does and says where the
        # surround it drew lies; pool_radiograph carries it, mirrored with
        # the image.
        boxes = 0
        for seed in range(60):
            a = td.other_look(np.random.default_rng(seed), self.card)
            b, box = td.other_look_box(np.random.default_rng(seed), self.card)
            np.testing.assert_array_equal(a, b, str(seed))
            if not any(box):
                continue
            boxes += 1
            l, t, r, bo = box
            h, w = b.shape
            fill = b[0, 0]
            for part in (b[:t], b[h - bo:], b[:, :l], b[:, w - r:]):
                self.assertTrue((part == fill).all(), seed)
            # Inside the box is the radiograph, not the fill.
            self.assertFalse((b[t:h - bo, l:w - r] == fill).all(), seed)
        self.assertGreater(boxes, 5)
        td._looks = 1.0
        flipped = 0
        for seed in range(40):
            _, _, meta = td.pool_radiograph(types.SimpleNamespace(rng=np.random.default_rng(seed)), 90, 60)
            # The same draws by hand: the pick, the look, the box, the flip.
            ref = np.random.default_rng(seed)
            ref.integers(1)
            ref.random()
            a, (l, t, r, b) = td.other_look_box(ref, self.card)
            flip = ref.random() < 0.5
            if not any((l, t, r, b)):
                self.assertIsNone(meta, seed)
                continue
            h, w = a.shape
            want = (r / w, t / h, l / w, b / h) if flip else (l / w, t / h, r / w, b / h)
            np.testing.assert_allclose(meta["surround"], want, err_msg=str(seed))
            flipped += flip and l != r
        self.assertGreater(flipped, 0)

    def test_air_looks(self):
        """--air-looks: with a share of 0 every draw is as before; with 1
        every surround is air_field's: the body inside, fading, and dark
        air around it that the box reports."""
        body = np.full((80, 120), 180, np.uint8)
        airs = 0
        for seed in range(80):
            td._air = 0.0
            before, box0 = td.other_look_box(np.random.default_rng(seed), body)
            td._air = 1.0
            rng = np.random.default_rng(seed)
            a, box = td.other_look_box(rng, body)
            if not any(box0):
                # No surround: the air share is never drawn, so not even
                # the generator's state moves.
                np.testing.assert_array_equal(a, before, str(seed))
                self.assertEqual(rng.random(), self._after(seed, body), seed)
                continue
            if not any(box):
                continue  # air_field may give no side air (0.2 ** 4)
            airs += 1
            l, t, r, b = box
            h, w = a.shape
            bh, bw = h - t - b, w - l - r
            # The body is inside the box, whole and unchanged at its centre
            # (a windowed look may have changed its level: compare with
            # the surround-free draw's value there).
            self.assertEqual((bh, bw), before[box0[1]:before.shape[0] - box0[3], box0[0]:before.shape[1] - box0[2]].shape, seed)
            centre = a[t + bh // 2 - 2:t + bh // 2 + 2, l + bw // 2 - 2:l + bw // 2 + 2].astype(float)
            ref = float(before[box0[1] + bh // 2, box0[0] + bw // 2])
            self.assertLess(abs(centre.mean() - ref), 4, seed)
            # Air: near black outside the body, apart from a marker.
            for part in (a[:t], a[h - b:], a[:, :l], a[:, w - r:]):
                if part.size:
                    self.assertLess(np.median(part), 16, seed)
            # A soft edge: on a side with air, the body's first column or
            # row is darker than its centre.
            if l > 0 and ref > 60:
                self.assertLess(float(a[t + bh // 2, l]), ref - 20, seed)
        self.assertGreater(airs, 10)

    @staticmethod
    def _after(seed, body):
        rng = np.random.default_rng(seed)
        td._air = 0.0
        td.other_look_box(rng, body)
        return rng.random()


class TestVisibleTruth(unittest.TestCase):
    """--visible-truth: a surround that cannot be told from the screen
    beside it is not part of the viewport model's target."""

    def scene(self, fill, beside=(5, 5, 5), left=None):
        plane = Image.new("RGBA", (300, 200), beside + (255,))
        d = ImageDraw.Draw(plane)
        if left is not None:  # light chrome beside the left side only
            d.rectangle([0, 0, 49, 199], fill=left + (255,))
        d.rectangle([50, 40, 249, 159], fill=(fill, fill, fill, 255))
        d.rectangle([70, 52, 229, 147], fill=(128, 128, 128, 255))
        return {"rect": (50, 40, 250, 160), "plane": plane, "off": (0, 0),
                "meta": {"surround": (0.1, 0.1, 0.1, 0.1)}}

    def test_sides(self):
        cases = [
            ("black surround on a black band: every side in", self.scene(6), (70, 52, 230, 148)),
            ("white surround on a black band: seen", self.scene(240), (50, 40, 250, 160)),
            ("black surround, light chrome left", self.scene(6, left=(220, 220, 220)), (50, 52, 230, 148)),
            ("white surround on light chrome", self.scene(235, beside=(228, 228, 228)), (70, 52, 230, 148)),
        ]
        for name, s, want in cases:
            with self.subTest(name):
                np.testing.assert_allclose(td.visible_rect(s), want)
        s = self.scene(6)
        s["meta"] = None
        self.assertEqual(td.visible_rect(s), (50, 40, 250, 160))
        # Where the room shows through beside the image (no bezel), the
        # truth is kept.
        s = self.scene(6)
        a = np.array(s["plane"])
        a[:, :50, 3] = 0
        s["plane"] = Image.fromarray(a)
        self.assertEqual(td.visible_rect(s)[0], 50)

    def test_positive_target_shrinks_only(self):
        # The same scenes with and without --visible-truth: the frames are
        # the same, and the viewport target only moves inwards.
        card = np.tile(np.linspace(10, 240, 90), (60, 1)).astype(np.uint8)
        td._pool = [card]
        td._looks, moved = 1.0, 0
        try:
            for seed in range(12):
                td._visible = False
                a = td.positive(seed, {})
                td._visible = True
                b = td.positive(seed, {})
                np.testing.assert_array_equal(a[0], b[0])
                np.testing.assert_array_equal(a[3], b[3])
                va, vb = a[4].reshape(4, 2), b[4].reshape(4, 2)
                if np.allclose(va, vb):
                    continue
                moved += 1
                # Inwards: every corner of b within a's quad's bounding box
                # (the rectified screen is close to axis-aligned).
                lo, hi = va.min(0) - 1e-6, va.max(0) + 1e-6
                self.assertTrue(((vb >= lo) & (vb <= hi)).all(), seed)
                self.assertLess(np.abs(vb - va).max(), 0.2, seed)
        finally:
            td._visible, td._looks, td._pool = False, 0.0, None
        self.assertGreater(moved, 0)


if __name__ == "__main__":
    unittest.main()
