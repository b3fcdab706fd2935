"""pop_variety: exact truth, disjoint train/held-out settings, families left out."""
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from pop import composites as pc  # noqa: E402
from pop import variety as pv  # noqa: E402
from sim import xraysim  # noqa: E402
from tests.fixtures import assert_truth_gives_vhs  # noqa: E402


def _radiograph(seed):
    calls = [0]

    def f(D, w, h):
        calls[0] += 1
        im, truth, meta = xraysim.generate(seed + calls[0], w, h, present_opts={"lightbox": False, "tint": "grey"})
        return im, (truth if calls[0] == 1 else None), meta
    return f


class TestVariety(unittest.TestCase):
    def test_truth_consistent(self):
        # Undo the perspective with the truth corners: VHS must match the
        # displayed radiograph's, in every layout (letterboxed, viewer,
        # hanging protocol, windowed).
        for k, layout in enumerate(pv.AXES["layout"]):
            seed = pc.POP_TRAIN_SEED_BASE + 910_000 + k
            s = pv.scene(seed, 480, 360, _radiograph(seed), only={"layout": layout}, scale=0.35, cut=False)
            arr, t = pv.frame(s)
            self.assertEqual(arr.shape, (360, 480, 3))
            self.assertEqual(t["layout"], layout)
            self.assertFalse(t["cut_off"])
            assert_truth_gives_vhs(self, t)

    def test_splits_disjoint(self):
        a = pv.Draw(np.random.default_rng(1), "train").u(0, 8, 2000)
        b = pv.Draw(np.random.default_rng(1), "heldout").u(0, 8, 2000)
        self.assertTrue((np.floor(a) % 2 == 0).all())
        self.assertTrue((np.floor(b) % 2 == 1).all())
        with self.assertRaises(ValueError):
            pv.Draw(np.random.default_rng(1), "test")

    def test_families(self):
        rng = np.random.default_rng(3)
        seen = {pv.pick_family(rng, "display", exclude=("tv",)) for _ in range(200)}
        self.assertEqual(seen, {"medical", "office", "laptop"})
        self.assertEqual(pv.pick_family(rng, "room", only="dark"), "dark")
        with self.assertRaises(ValueError):
            pv.pick_family(rng, "room", only="garden")
        with self.assertRaises(SystemExit):
            pc.parse_families(["display=fridge"])
        self.assertEqual(pc.parse_families(["room=dark,busy"]), {"room": ("dark", "busy")})

    def test_cut_off(self):
        seed = pc.POP_TRAIN_SEED_BASE + 910_100
        s = pv.scene(seed, 480, 360, _radiograph(seed), scale=0.35, cut=True)
        _, t = pv.frame(s)
        scr = np.array(t["screen"])
        out = (scr[:, 0] < 0) | (scr[:, 0] > 480) | (scr[:, 1] < 0) | (scr[:, 1] > 360)
        self.assertEqual(bool(out.any()), t["cut_off"])


if __name__ == "__main__":
    unittest.main()
