#!/usr/bin/python3
"""Writes the Pillow reference letterboxes that letterbox_test.go compares with.

Each case: CASE.png (the input) and CASE.golden.json ({"s": S, "channels": C,
"data": [C*S*S floats]}), made the way docs/model-contract.md says the
trainer letterboxes: Pillow resize with Image.BOX, paste on black, /255.
Run: /usr/bin/python3 engine/imageproc/testdata/pil_golden.py
"""
import json
import os

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def letterbox(im, S):
    W, H = im.size
    s = S / max(W, H)
    nw, nh = max(1, round(W * s)), max(1, round(H * s))
    r = im.resize((nw, nh), Image.BOX)
    canvas = Image.new(im.mode, (S, S), 0)
    canvas.paste(r, ((S - nw) // 2, (S - nh) // 2))
    a = np.asarray(canvas, dtype=np.float32) / 255.0
    if a.ndim == 3:
        a = a.transpose(2, 0, 1)
    else:
        a = a[None]
    return a


def main():
    rng = np.random.default_rng(7)
    cases = [
        ("gray_300x200_s64", "L", 300, 200, 64),
        ("gray_50x70_s64", "L", 50, 70, 64),
        ("gray_97x301_s48", "L", 97, 301, 48),
        ("rgb_301x157_s48", "RGB", 301, 157, 48),
        ("rgb_40x40_s32", "RGB", 40, 40, 32),
        # 191/26 rows: the footprint edge of output row 12 falls exactly on
        # the centre of input row 95, a tie decided by float rounding.
        ("gray_233x191_s32", "L", 233, 191, 32),
    ]
    for name, mode, w, h, S in cases:
        shape = (h, w) if mode == "L" else (h, w, 3)
        # Smooth gradient plus noise plus hard edges: exercises every tap.
        yy, xx = np.mgrid[0:h, 0:w]
        base = (xx * 255 / w + yy * 128 / h) % 256
        if mode == "RGB":
            base = np.stack([base, 255 - base, (base * 3) % 256], axis=2)
        arr = np.clip(base + rng.integers(-40, 40, size=shape), 0, 255).astype(np.uint8)
        arr[h // 3 : h // 2, w // 4 : w // 2] = 255
        im = Image.fromarray(arr, mode)
        im.save(os.path.join(HERE, name + ".png"))
        out = letterbox(im, S)
        with open(os.path.join(HERE, name + ".golden.json"), "w") as f:
            json.dump({"s": S, "channels": out.shape[0], "data": [round(float(v), 6) for v in out.ravel()]}, f)


if __name__ == "__main__":
    main()
