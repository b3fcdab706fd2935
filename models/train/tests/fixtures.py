"""Shared test fixtures for the trainer tests."""
import os

import numpy as np
from PIL import Image


def write_dogheart(root, size, six, name="dog1"):
    """Write a one-image DogHeart/CCK folder (Images/NAME.png, Labels/NAME.mat)."""
    from scipy.io import savemat

    os.makedirs(os.path.join(root, "Images"), exist_ok=True)
    os.makedirs(os.path.join(root, "Labels"), exist_ok=True)
    Image.new("L", size, 80).save(os.path.join(root, "Images", name + ".png"))
    savemat(os.path.join(root, "Labels", name + ".mat"), {"six_points": np.asarray(six, float), "VHS": 10.1})


def assert_truth_gives_vhs(tc, t):
    """A screen photo's truth is consistent: undoing the perspective with
    the truth corners gives the displayed radiograph's VHS, and the
    displayed image lies inside the screen (unittest.TestCase tc)."""
    from sim import phantom
    from pop import composites as pc

    c = np.array(t["corners"])
    w, h = t["displayed_size"]
    Hb = pc.homography(c, [(0, 0), (w, 0), (w, h), (0, h)])
    lm = {n: pc.apply_h(Hb, [p])[0] for n, p in t["landmarks"].items()}
    vhs, _ = phantom.measure(lm)
    tc.assertAlmostEqual(vhs, t["vhs"], places=3)
    scr = np.array(t["screen"])
    Hs = pc.homography(scr, [(0, 0), (1, 0), (1, 1), (0, 1)])
    u = pc.apply_h(Hs, c)
    tc.assertTrue(((u > -1e-6) & (u < 1 + 1e-6)).all(), u)
