"""pop_sides: a side's visibility comes from the frame, its offset from
the found quad, and the layout summary pairs the frames both found."""
import json
import os
import tempfile
import unittest

import numpy as np
from PIL import Image

from pop import sides as ps

TRUTH = [(100, 80), (300, 80), (300, 220), (100, 220)]  # 200 x 140


def _line(name, err, quad, missed=False):
    q = ",".join(f"{v:.1f}" for p in quad for v in p)
    tail = ' MISSED failure=""' if missed else ""
    return f"{name} viewer office/windowed/office conf=1.00 viewer=true err={err:.2f}% q={{}} quad={q}{tail} source=classical\n"


class TestSides(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        # A dark viewport band (grey 10) around the image; the image is
        # bright (200) with a 20 px band of air (grey 13) along its top,
        # so its top edge cannot be seen and its other edges can.
        a = np.full((300, 400), 10, np.uint8)
        a[80:220, 100:300] = 200
        a[80:100, 100:300] = 13
        for f in ("f0.jpg", "f1.jpg"):
            Image.fromarray(a).save(os.path.join(self.dir, f), format="PNG")  # lossless, under the .jpg name evalpop prints
        with open(os.path.join(self.dir, "truth_vscreen.json"), "w") as f:
            json.dump({"items": [{"file": n, "layout": "windowed", "corners": TRUTH} for n in ("f0.jpg", "f1.jpg")]}, f)
        # Pipeline A: exact. Pipeline B: top 14 px inside (10 % of the
        # height), right 4 px outside (2 % of the width).
        self.b_quad = [(100, 94), (304, 94), (304, 220), (100, 220)]
        self.a = os.path.join(self.dir, "a.txt")
        self.b = os.path.join(self.dir, "b.txt")
        with open(self.a, "w") as f:
            f.write("pipeline: test\n" + _line("f0.jpg", 0.0, TRUTH) + _line("f1.jpg", 0.0, TRUTH))
        with open(self.b, "w") as f:
            f.write(_line("f0.jpg", 2.5, self.b_quad) + _line("f1.jpg", 9.0, self.b_quad, missed=True))

    def test_offsets(self):
        o = ps.offsets(np.array(TRUTH, float), self.b_quad)
        self.assertAlmostEqual(o["top"], -10.0, places=6)
        self.assertAlmostEqual(o["right"], 2.0, places=6)
        self.assertAlmostEqual(o["left"], 0.0, places=6)
        self.assertAlmostEqual(o["bottom"], 0.0, places=6)

    def test_read_leaves_missed_out(self):
        r = ps.read_evalpop(self.b)
        self.assertEqual(sorted(r), ["f0.jpg"])
        self.assertEqual(r["f0.jpg"][0], 2.5)
        np.testing.assert_allclose(r["f0.jpg"][1], self.b_quad)

    def test_visibility_and_rows(self):
        rows = ps.side_rows(self.dir, [self.a, self.b])
        # f1 is missed by B, so only f0's four sides count.
        self.assertEqual(sorted(r[2] for r in rows), sorted(ps.SIDES))
        by = {r[2]: r for r in rows}
        self.assertLess(by["top"][3], ps.CONTRAST)
        for side in ("bottom", "left", "right"):
            self.assertGreater(by[side][3], 150, side)
        self.assertAlmostEqual(by["top"][5][1], -10.0, places=6)
        self.assertAlmostEqual(by["right"][5][0], 0.0, places=6)
        lines = ps.summary(rows, ["a", "b"], per_side=True)
        inv = [l for l in lines if l.startswith("invisible, top") and " b " in l]
        self.assertEqual(len(inv), 1)
        self.assertIn("median -10.00 %", inv[0])
        self.assertIn("< -1 %: 1.00", inv[0])
        self.assertFalse(any(l.startswith("visible, bright") for l in lines))  # outside is dark
        right = [l for l in lines if l.startswith("visible, dark outside, right") and " b " in l]
        self.assertEqual(len(right), 1)
        self.assertIn("median +2.00 %", right[0])
        self.assertFalse(any(l.startswith("invisible, right") for l in lines))

    def test_layouts_pair_found_frames(self):
        lines = ps.layouts(self.dir, self.a, self.b)
        self.assertEqual(len(lines), 2)  # ALL and windowed, one frame each
        for l in lines:
            self.assertIn("n=   1 better    0 worse    1", l)
            # B's area: 204 x 126 over 200 x 140.
            self.assertIn(f"area ratio 1.0000 -> {204 * 126 / (200 * 140):.4f}", l)


if __name__ == "__main__":
    unittest.main()
