"""screenshots: viewer windows around a held-out folder's radiographs, truth moved with them."""
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from sim import screenshots  # noqa: E402


class TestScreenshots(unittest.TestCase):
    def test_landmarks_follow_the_image(self):
        r = np.random.default_rng(3)
        with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as out:
            items = []
            for i, (w, h) in enumerate([(320, 240), (200, 300)]):
                a = r.integers(0, 256, (h, w), dtype=np.uint8)
                Image.fromarray(a).save(os.path.join(src, f"pos_{i}.png"))
                lm = {"heart_top": [w * 0.4, h * 0.5], "Vertebra A": [w * 0.3, h * 0.2]}
                items.append({"file": f"pos_{i}.png", "radiograph": True, "width": w, "height": h,
                              "vhs": 10.0, "vlas": 2.0, "landmarks": lm})
            Image.new("RGB", (50, 40), (10, 200, 30)).save(os.path.join(src, "neg_0.png"))
            items.append({"file": "neg_0.png", "radiograph": False})
            with open(os.path.join(src, "truth.json"), "w") as f:
                json.dump({"generator": "test", "items": items}, f)
            with mock.patch.object(sys, "argv", ["screenshots.py", src, out, "--seed", "5"]):
                screenshots.main()
            with open(os.path.join(out, "truth.json")) as f:
                got = json.load(f)
            self.assertEqual(len(got["items"]), 3)
            self.assertIn("viewer screenshots", got["generator"])
            for it, orig in zip(got["items"], items):
                shot = Image.open(os.path.join(out, it["file"]))
                if not orig["radiograph"]:
                    self.assertFalse(it["radiograph"])
                    self.assertEqual(shot.size, (50, 40))
                    continue
                self.assertEqual(shot.size, (it["width"], it["height"]))
                self.assertGreater(it["width"], orig["width"])
                self.assertEqual(it["vhs"], orig["vhs"])
                src_img = np.asarray(Image.open(os.path.join(src, orig["file"])).convert("L"), dtype=int)
                g = np.asarray(shot.convert("L"), dtype=int)
                for k, (x, y) in orig["landmarks"].items():
                    sx, sy = it["landmarks"][k]
                    # The pixel under each moved landmark is the source's
                    # (JPEG: within its error, on noise).
                    want = src_img[int(y), int(x)]
                    tol = 0 if it["file"].endswith(".png") else 90
                    self.assertLessEqual(abs(g[int(sy), int(sx)] - want), tol, (it["file"], k))
                    self.assertEqual(sx - x, it["landmarks"]["heart_top"][0] - orig["landmarks"]["heart_top"][0])


if __name__ == "__main__":
    unittest.main()
