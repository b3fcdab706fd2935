"""pop_plain: presence negatives in every presentation, training seeds only."""
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from pop import plain as pop_plain  # noqa: E402
from pop import variety as pv  # noqa: E402
from sim import xraysim  # noqa: E402


def _fake_render(job):
    """A stand-in for pop_plain._render: a tiny image that records the job."""
    gen, seed = job
    return np.full((8, 8), seed % 251, np.uint8), {"gen": gen, "seed": seed}


def _no_render(job):
    raise AssertionError(f"rendered {job}; the cache should have answered")


class TestCache(unittest.TestCase):
    def test_world2_renders_and_a_cache_that_remembers_its_spec(self):
        with tempfile.TemporaryDirectory() as d:
            cache = os.path.join(d, "c.npz")
            s0 = pop_plain.XRAYSIM_SEED0
            with mock.patch.object(pop_plain, "_render", _fake_render):
                items = pop_plain.load_anatomy(cache, 2, 1, None, s0, 1)
                self.assertEqual([t["gen"] for _, t in items], ["xraysim", "xraysim", "phantom"])
                # Asked for world-2 renders too: rendered again, not the old cache.
                items = pop_plain.load_anatomy(cache, 2, 1, None, s0, 1, world2=2)
                self.assertEqual([t["gen"] for _, t in items][-2:], ["xraysim2", "xraysim2"])
                self.assertEqual(items[-1][1]["seed"], s0 + pop_plain.WORLD2_OFFSET + 1)
            with mock.patch.object(pop_plain, "_render", _no_render):
                self.assertEqual(len(pop_plain.load_anatomy(cache, 2, 1, None, s0, 1, world2=2)), 5)

    def test_world2_render(self):
        a1, _ = pop_plain._render(("xraysim", pop_plain.XRAYSIM_SEED0 + 1))
        a2, t2 = pop_plain._render(("xraysim2", pop_plain.XRAYSIM_SEED0 + 1))
        self.assertEqual(a2.ndim, 2)
        self.assertFalse(a1.shape == a2.shape and np.array_equal(a1, a2))
        self.assertIn("heart_top", t2)

    def test_refuses_heldout_world2_seeds(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(sys, "argv", ["pop_plain.py", os.path.join(d, "o.npz"), "--seed0",
                                                str(xraysim.HELDOUT_SEED_BASE - pop_plain.WORLD2_OFFSET - 5),
                                                "--renders", "1", "--world2", "10"]):
            with self.assertRaises(SystemExit) as e:
                pop_plain.main()
            self.assertIn("held out", str(e.exception))


class TestPlain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # One small render of each generator (training seeds).
        cls.items = [pop_plain._render(("xraysim", pop_plain.XRAYSIM_SEED0)),
                     pop_plain._render(("phantom", pop_plain.PHANTOM_SEED0))]

    def test_samples(self):
        pop_plain._init(self.items)
        kinds = set()
        for i in range(24):
            x, kind = pop_plain.sample(pop_plain.XRAYSIM_SEED0 + 600_000 + i)
            self.assertEqual(x.shape, (3, pop_plain.SIDE, pop_plain.SIDE))
            self.assertEqual(x.dtype, np.uint8)
            self.assertGreater(float(x.std()), 5)  # an image, not a blank
            kinds.add(kind)
        self.assertEqual(kinds, {"simulator", "export", "screenshot"})

    def test_truth_kept_with_render(self):
        for a, t in self.items:
            self.assertEqual(a.ndim, 2)
            h, w = a.shape
            self.assertLessEqual(max(w, h), 1400)
            for k in ("heart_top", "heart_bottom", "heart_right", "heart_left"):
                self.assertTrue(-0.2 * w < t[k][0] < 1.2 * w and -0.2 * h < t[k][1] < 1.2 * h, (k, t[k], w, h))

    def test_screenshots_leave_the_light_viewer_out(self):
        # The light viewer is the left-out layout of the screen photos.
        self.assertNotIn("viewer_light", pop_plain.SCREENSHOT_LAYOUTS)
        self.assertTrue(set(pop_plain.SCREENSHOT_LAYOUTS) < set(pv.AXES["layout"]))

    def test_to_x160_stretches(self):
        im = Image.new("RGB", (1000, 250), (10, 200, 30))
        x = pop_plain.to_x160(im)
        self.assertEqual(x.shape, (3, 160, 160))
        self.assertEqual(tuple(x[:, 80, 80]), (10, 200, 30))

    def test_refuses_heldout_seeds(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(sys, "argv", ["pop_plain.py", os.path.join(d, "o.npz"), "--seed0",
                                                str(xraysim.HELDOUT_SEED_BASE - 10), "--renders", "20"]):
            with self.assertRaises(SystemExit) as e:
                pop_plain.main()
            self.assertIn("held out", str(e.exception))


if __name__ == "__main__":
    unittest.main()
