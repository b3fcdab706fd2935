#!/usr/bin/python3
"""Writes cmyk.jpg (a 64x48 Adobe CMYK JPEG; Pillow writes the APP14 marker)
and progressive444.jpg (a 64x48 progressive JPEG without chroma subsampling)."""
import os

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
yy, xx = np.mgrid[0:48, 0:64]
arr = np.stack([xx * 4, yy * 5, (xx + yy) * 2, np.full_like(xx, 30)], axis=2).astype(np.uint8)
Image.fromarray(arr, "CMYK").save(os.path.join(HERE, "cmyk.jpg"), quality=90)
rgb = np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=2).astype(np.uint8)
Image.fromarray(rgb).save(os.path.join(HERE, "progressive444.jpg"), quality=80, progressive=True, subsampling=0)
