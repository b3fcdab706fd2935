"""tilt: a held-out folder turned 15-30 degrees, landmarks moved with the pixels."""
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from sim import tilt  # noqa: E402

NAMES = ["heart_top", "heart_bottom", "Vertebra A", "Vertebra B"]


class TestTilt(unittest.TestCase):
    def test_landmarks_follow_the_pixels(self):
        with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as out:
            items = []
            for i, (w, h) in enumerate([(320, 240), (200, 300), (260, 260), (300, 200)]):
                # Each landmark is a bright 3x3 dot on black: after the turn
                # the truth must sit on the dot.
                a = np.zeros((h, w), np.uint8)
                lm = {}
                for j, name in enumerate(NAMES):
                    x, y = int(w * (0.25 + 0.15 * j)), int(h * (0.3 + 0.12 * j))
                    a[y - 1:y + 2, x - 1:x + 2] = 255
                    lm[name] = [x + 0.5, y + 0.5]
                name = f"pos_{i}.png"
                Image.fromarray(a).save(os.path.join(src, name))
                items.append({"file": name, "radiograph": True, "width": w, "height": h,
                              "vhs": 10.0, "vlas": 2.0, "landmarks": lm})
            Image.new("RGB", (50, 40), (10, 200, 30)).save(os.path.join(src, "neg_0.png"))
            items.append({"file": "neg_0.png", "radiograph": False})
            with open(os.path.join(src, "truth.json"), "w") as f:
                json.dump({"generator": "test", "items": items}, f)
            with mock.patch.object(sys, "argv", ["tilt.py", src, out]):
                tilt.main()
            with open(os.path.join(out, "truth.json")) as f:
                got = json.load(f)
            self.assertIn("tilted 15-30 degrees", got["generator"])
            self.assertEqual(len(got["items"]), len(items))
            self.assertFalse(got["items"][-1]["radiograph"])
            for it in got["items"][:-1]:
                self.assertTrue(15 <= abs(it["tilt_deg"]) <= 30, it["tilt_deg"])
                g = np.asarray(Image.open(os.path.join(out, it["file"])).convert("L"), float)
                self.assertEqual((it["width"], it["height"]), (g.shape[1], g.shape[0]))
                for name in NAMES:
                    x, y = it["landmarks"][name]
                    self.assertTrue(0 <= x < g.shape[1] and 0 <= y < g.shape[0], (name, x, y))
                    patch = g[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2]
                    self.assertGreater(patch.max(), 100, f"{it['file']} {name}: no dot at the truth")
                self.assertEqual(it["vhs"], 10.0)

    def test_turn_direction_matches_pillow(self):
        # A point right of the centre moves up under a positive angle.
        im = Image.new("L", (101, 101))
        out, lm = tilt.tilt_item(im, {"p": [80.5, 50.5]}, 30, crop=False, fill=0)
        self.assertLess(lm["p"][1], out.size[1] / 2)


if __name__ == "__main__":
    unittest.main()
