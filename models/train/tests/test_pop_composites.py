"""Truth checks for pop_composites: corners and landmarks agree with the homography."""
import os
import unittest

import numpy as np

from sim import phantom
from pop import composites as pc


class TestComposites(unittest.TestCase):
    def test_truth_consistent(self):
        for seed in (pc.POP_TRAIN_SEED_BASE + 900_001, pc.POP_TRAIN_SEED_BASE + 900_002):
            s = pc.scene(seed, (640, 480))
            arr, t = pc.screen_frame(s)
            self.assertEqual(arr.shape, (480, 640, 3))
            c = np.array(t["corners"])
            self.assertTrue(((c[:, 0] >= 0) & (c[:, 0] <= 640) & (c[:, 1] >= 0) & (c[:, 1] <= 480)).all())
            # Undo the perspective with the truth corners: VHS must match the phantom's.
            w, h = t["displayed_size"]
            Hb = pc.homography(c, [(0, 0), (w, 0), (w, h), (0, h)])
            lm = {k: pc.apply_h(Hb, [p])[0] for k, p in t["landmarks"].items()}
            vhs, _ = phantom.measure(lm)
            self.assertAlmostEqual(vhs, t["vhs"], places=3)

    def test_content_generators(self):
        """--content: the same scene shows a radiograph of the chosen
        generator, with that generator's truth."""
        seed = pc.POP_TRAIN_SEED_BASE + 900_004
        seen = {}
        for content in pc.CONTENTS:
            s, rad = pc.variety_scene(seed, "train", size=(320, 240), content=content)
            w, h = rad.displayed.size
            if content == "phantom":
                want = phantom.generate(seed, w, h)[2]["vhs"]
            else:
                want = pc.xraysim.generate(seed, w, h, present_opts={"lightbox": False}, world=content)[2]["vhs"]
            _, t = pc.pop_variety.frame(s)
            self.assertAlmostEqual(t["vhs"], want, places=6, msg=content)
            seen[content] = (t["display"], t["layout"], t["room"], np.asarray(rad.displayed.convert("L"), float))
        # One scene, three pictures on its screen.
        self.assertEqual(len({v[:3] for v in seen.values()}), 1)
        a, b, c = (seen[k][3] for k in pc.CONTENTS)
        if a.shape == b.shape == c.shape:
            self.assertGreater(np.abs(a - b).mean(), 1)
            self.assertGreater(np.abs(a - c).mean(), 1)

    def test_content_folder(self):
        """--content-dir: the scene of a seed shows image seed mod n of the
        folder on its screen, with no landmarks; an empty folder is
        refused."""
        import tempfile
        from PIL import Image
        with tempfile.TemporaryDirectory() as d:
            colours = [(200, 40, 40), (40, 200, 40), (40, 40, 200)]
            for k, c in enumerate(colours):
                Image.new("RGB", (90, 60), c).save(os.path.join(d, f"img{k}.png"))
            with open(os.path.join(d, "notes.txt"), "w") as f:  # not an image
                f.write("x")
            self.assertEqual(len(pc.folder_images(d)), 3)
            seed = pc.POP_TRAIN_SEED_BASE + 900_005
            s, rad = pc.variety_scene(seed, "train", size=(320, 240), content=pc.FOLDER + d)
            _, t = pc.pop_variety.frame(s)
            self.assertNotIn("landmarks", t)
            shown = np.asarray(rad.displayed.convert("RGB"), float).reshape(-1, 3).mean(0)
            np.testing.assert_allclose(shown, colours[seed % 3], atol=1)
            # The same scene as the generators' content shows.
            s2, _ = pc.variety_scene(seed, "train", size=(320, 240), content="xraysim")
            _, t2 = pc.pop_variety.frame(s2)
            self.assertEqual((t["display"], t["layout"], t["room"]), (t2["display"], t2["layout"], t2["room"]))
            np.testing.assert_allclose(t["corners"], t2["corners"])
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(SystemExit):
                pc.folder_images(d)

    def test_unusable_black(self):
        arr, t = pc.unusable(pc.POP_TRAIN_SEED_BASE + 900_003, "black", (320, 240))
        self.assertFalse(t["usable"])
        self.assertLess(arr.mean(), 12)

    def test_radiograph_export(self):
        tinted = 0
        for k in range(6):
            im, t, fmt, q = pc.radiograph_export(pc.POP_TRAIN_SEED_BASE + 900_010 + k)
            self.assertEqual(im.mode, "RGB")
            self.assertEqual(im.size, (t["width"], t["height"]))
            self.assertEqual(t["kind"], "radiograph_export")
            self.assertIn(fmt, ("png", "jpg"))
            a = np.asarray(im, np.int16)
            if "tint" in t["variant"]:
                tinted += 1
                self.assertGreater(np.abs(a[..., 2] - a[..., 1]).mean() + np.abs(a[..., 1] - a[..., 0]).mean(), 1.5)
            if t["variant"].get("border", "").startswith("dark"):
                self.assertLessEqual(int(a[0, 0].max()), 45)
        self.assertGreater(tinted, 0)


if __name__ == "__main__":
    unittest.main()
