#!/usr/bin/env python3
"""Write a tilted copy of a held-out set: a family of conditions for testing.

Real lateral radiographs often reach VHS tilted: the patient lies obliquely
on the detector, or the viewer's crop follows the thorax rather than the
plate, so the spine runs 15-30 degrees off the horizontal (two of the three
images in ../shared/realref do). The simulator draws in-plane rotations of
at most 15 degrees and training augmentation adds at most 14, so a tilt of
15-30 degrees lies outside everything the models have seen. This tool turns
any set written by sim/heldout.py (truth.json with landmarks in pixels) into
such a family, for evaluation only:

  * every radiograph is turned by 15-30 degrees (either way, seeded by
    its file name), the canvas grown to hold it;
  * half of them keep the grown canvas with corners filled (a rotated
    scan), half are cropped back towards the original framing, never
    closer than a margin around the seven landmarks (a tight viewer
    crop of an oblique patient);
  * landmarks follow the same transform; VHS and VLAS do not change.

Negatives are copied as they are (tilting them tests nothing new).

    python3 -m sim.tilt IN_DIR OUT_DIR [--min 15 --max 30]
"""
import argparse
import json
import math
import os
import shutil
import zlib

import numpy as np
from PIL import Image


def tilt_item(im, landmarks, angle_deg, crop, fill):
    """Rotate im by angle_deg (counter-clockwise on screen) with the canvas
    grown; landmarks follow. With crop, cut the grown canvas back to the
    original size about its centre, widened where a landmark would fall
    within 4 % of the longer side of an edge. Returns image, landmarks."""
    w, h = im.size
    out = im.rotate(angle_deg, resample=Image.BILINEAR, expand=True, fillcolor=fill)
    W, H = out.size
    th = math.radians(angle_deg)
    c, s = math.cos(th), math.sin(th)
    moved = {}
    for k, (x, y) in landmarks.items():
        dx, dy = x - w / 2, y - h / 2
        # PIL turns content counter-clockwise on screen: y grows downwards.
        moved[k] = [W / 2 + c * dx + s * dy, H / 2 - s * dx + c * dy]
    if crop:
        margin = 0.04 * max(w, h)
        xs = [p[0] for p in moved.values()]
        ys = [p[1] for p in moved.values()]
        x0 = min((W - w) / 2, min(xs) - margin)
        y0 = min((H - h) / 2, min(ys) - margin)
        x1 = max((W + w) / 2, max(xs) + margin)
        y1 = max((H + h) / 2, max(ys) + margin)
        box = [int(max(0, math.floor(x0))), int(max(0, math.floor(y0))),
               int(min(W, math.ceil(x1))), int(min(H, math.ceil(y1)))]
        out = out.crop(box)
        moved = {k: [p[0] - box[0], p[1] - box[1]] for k, p in moved.items()}
    return out, moved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--min", type=float, default=15.0, help="smallest tilt, degrees")
    ap.add_argument("--max", type=float, default=30.0, help="largest tilt, degrees")
    a = ap.parse_args()
    with open(os.path.join(a.inp, "truth.json")) as f:
        truth = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    items = []
    for it in truth["items"]:
        src = os.path.join(a.inp, it["file"])
        if not it.get("radiograph"):
            shutil.copyfile(src, os.path.join(a.out, it["file"]))
            items.append(it)
            continue
        r = np.random.default_rng(zlib.crc32(it["file"].encode()))
        ang = float(r.uniform(a.min, a.max)) * (1 if r.random() < 0.5 else -1)
        crop = bool(r.random() < 0.5)
        im = Image.open(src)
        im = im.convert("RGB") if im.mode not in ("L", "RGB") else im
        g = np.asarray(im.convert("L"))
        border = np.concatenate([g[0], g[-1], g[:, 0], g[:, -1]])
        v = int(np.median(border)) if r.random() < 0.3 else 0
        fill = v if im.mode == "L" else (v, v, v)
        out, lm = tilt_item(im, it["landmarks"], ang, crop, fill)
        if it["file"].endswith(".jpg"):
            out.save(os.path.join(a.out, it["file"]), quality=92)
        else:
            out.save(os.path.join(a.out, it["file"]))
        n = dict(it, width=out.size[0], height=out.size[1], landmarks=lm, tilt_deg=round(ang, 2), tilt_crop=crop)
        items.append(n)
    desc = truth.get("generator", "") + "; tilted %g-%g degrees by tilt.py" % (a.min, a.max)
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump({"generator": desc, "items": items}, f, indent=1)
    print(f"tilted set: {sum(1 for i in items if i.get('radiograph'))} radiographs in {a.out}")


if __name__ == "__main__":
    main()
