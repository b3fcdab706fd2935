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
