"""cardiac/dataset.py: DogHeart/CCK folders letterboxed into training .npz files."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

from cardiac import dataset
from sim import phantom
from tests.fixtures import write_dogheart

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIX = [[100, 80], [160, 200], [90, 150], [200, 130], [60, 40], [260, 60]]


class DogHeartSetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "pool")
        write_dogheart(self.root, (320, 240), SIX, name="a")
        write_dogheart(self.root, (200, 400), SIX, name="b")
        # An image without a label is not a case.
        from PIL import Image
        Image.new("L", (50, 50)).save(os.path.join(self.root, "Images", "unlabelled.png"))
        with open(os.path.join(self.root, "provenance.json"), "w") as f:
            json.dump({"format": "vetlens-dogheart-1", "cases": [{"case": "b", "vlas_point": [150.0, 90.0]}]}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def test_build_letterboxes_labels_and_vlas(self):
        out = os.path.join(self.tmp.name, "pool.npz")
        self.assertEqual(dataset.build_dogheart_set(self.root, 64, out), 2)
        d = np.load(out)
        self.assertEqual(d["images"].shape, (2, 64, 64))
        self.assertEqual(d["images"].dtype, np.uint8)
        self.assertEqual(d["landmarks"].shape, (2, len(phantom.LANDMARKS), 2))
        vk = phantom.LANDMARKS.index("VLAS")
        # Case a has no VLAS point, case b has one in its provenance.
        self.assertEqual(d["mask"][0, vk], 0)
        self.assertEqual(d["mask"][1, vk], 1)
        self.assertEqual(d["mask"][:, [k for k in range(len(phantom.LANDMARKS)) if k != vk]].min(), 1)
        top = phantom.LANDMARKS.index("heart_top")
        want = dataset.to_letterbox_coords(np.array([SIX[0]]), 200, 400, 64)[0]
        np.testing.assert_allclose(d["landmarks"][1, top], want, atol=1e-6)
        np.testing.assert_allclose(d["landmarks"][1, vk], dataset.to_letterbox_coords(np.array([[150.0, 90.0]]), 200, 400, 64)[0], atol=1e-6)

    def test_every_reader_takes_vlas_from_provenance(self):
        # load_dogheart (cardiac/train_landmarks.py --dogheart), the refinement crops
        # and build_dogheart_set read the VLAS point alike.
        vk = phantom.LANDMARKS.index("VLAS")
        _, lms, mask = dataset.load_dogheart(self.root, 64)
        self.assertEqual(list(mask[:, vk]), [0, 1])
        np.testing.assert_allclose(lms[1, vk], dataset.to_letterbox_coords(np.array([[150.0, 90.0]]), 200, 400, 64)[0], atol=1e-6)
        from cardiac import refine
        _, _, cmask = refine.load_dogheart_crops(self.root, 32, crops=1)
        self.assertEqual(list(cmask[:, vk]), [0, 1])

    def test_unreadable_provenance_is_an_error(self):
        with open(os.path.join(self.root, "provenance.json"), "w") as f:
            f.write("{not json")
        with self.assertRaises(ValueError):
            dataset.load_dogheart(self.root, 64)

    def test_cli_and_empty_folder(self):
        out = os.path.join(self.tmp.name, "cli.npz")
        env = dict(os.environ, PYTHONPATH=HERE)
        r = subprocess.run([sys.executable, "-m", "cardiac.dataset", "--dogheart", self.root, "--size", "32", out],
                           cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 images", r.stdout)
        self.assertEqual(np.load(out)["images"].shape, (2, 32, 32))
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(os.path.join(empty, "Images"))
        with self.assertRaises(FileNotFoundError):
            dataset.build_dogheart_set(empty, 32, os.path.join(self.tmp.name, "e.npz"))
        r = subprocess.run([sys.executable, "-m", "cardiac.dataset", "--size", "32", out], cwd=HERE, env=env,
                           capture_output=True, text=True, timeout=120)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--n and --seed", r.stderr)


if __name__ == "__main__":
    unittest.main()
