#!/usr/bin/python3
"""Rectified screen photos with exact landmarks, as a DogHeart/CCK pool.

SYNTHETIC DATA. A radiograph photographed off a monitor and rectified by
the PoP pipeline reaches the cardiac models with what a file never has:
the display's gamma and moire, the camera's blur, noise and JPEG, glare,
perspective resampling and a slightly wrong quad. This renders variety
composites (pop/variety.py, split "train", xraysim radiographs on the
screen), rectifies each frame's displayed radiograph at the quad's size
and the radiograph's own aspect (rectified_size, the engine's
SizeForAspect rule: models/reference/rectified_size.json holds the cases
both are tested on) from corners moved by a finder-sized error, and maps
the truth landmarks through the same homography, so the labels are exact
for the rectified image. Frames whose screen is cut off, or whose
rectification the engine would refuse as too small, are skipped.

The output is a pool that cardiac/learn.py (and `vetlens learn`) read:
Images/STEM.png (grey), Labels/STEM.mat (six_points, VHS),
provenance.json (the VLAS point and the frame's families) and cases.json
(the stems).

    python3 -m pop.rectified OUT --n 600 --seed0 46000000 \
        --exclude display=tv --exclude layout=viewer_light --exclude room=dark

Seeds 46,000,000+ are used nowhere else; the families left out of PoP
training are left out here too, so the leave-one-family-out sets of
`make eval-popnet` stay unseen.
"""
import argparse
import json
import math
import os
from multiprocessing import Pool

import numpy as np
from PIL import Image
from scipy.io import savemat

from sim import phantom
from pop import composites as pc
from pop import variety as pv

SIX = ["heart_top", "heart_bottom", "heart_right", "heart_left", "Vertebra A", "Vertebra B"]
MAX_SIDE = 2048  # engine/pop MaxRectifiedSide
MIN_SIDE = 64  # engine/pop MinRectifiedSide


def rectified_size(quad, aspect):
    """(w, h) of the rectified image, as engine/pop SizeForAspect: the
    height is the longer of the quad's left and right sides, the width the
    height times the aspect (w/h), the long side capped at MAX_SIDE; None
    when a side comes out under MIN_SIDE (the engine refuses the quad)."""
    q = np.asarray(quad, float)
    h = max(np.linalg.norm(q[3] - q[0]), np.linalg.norm(q[2] - q[1]))
    w = h * aspect
    m = max(w, h)
    if m > MAX_SIDE:
        w, h = w * MAX_SIDE / m, h * MAX_SIDE / m
    rw, rh = math.floor(w + 0.5), math.floor(h + 0.5)  # Go's math.Round
    if rw < MIN_SIDE or rh < MIN_SIDE:
        return None
    return rw, rh


def rectify(arr, quad, aspect):
    """Warp the quad (TL, TR, BR, BL in frame pixels) of an RGB frame to a
    grey upright image; returns (image, H frame->rectified), or None when
    the quad is too small to rectify."""
    size = rectified_size(quad, aspect)
    if size is None:
        return None
    w, h = size
    rect = [(0, 0), (w, 0), (w, h), (0, h)]
    inv = pc.homography(rect, quad)  # rectified -> frame, what PIL wants
    coeffs = (inv / inv[2, 2]).ravel()[:8]
    im = Image.fromarray(arr).convert("L").transform((w, h), Image.PERSPECTIVE, tuple(coeffs), Image.BILINEAR)
    return im, pc.homography(quad, rect)


def case(args):
    """Render, rectify and label one frame; None when its screen is cut off
    or too small to rectify."""
    seed, out, exclude, corner_err = args
    s, _ = pc.variety_scene(seed, "train", exclude=exclude)
    W, H = s["W"], s["H"]
    arr, t = pv.frame(s)
    if t["cut_off"] or "landmarks" not in t:
        return None
    quad = np.asarray(t["corners"], float)
    quad += np.random.default_rng(seed + 2).normal(0, corner_err * math.hypot(W, H), quad.shape)
    dw, dh = t["displayed_size"]
    r = rectify(arr, quad, dw / dh)
    if r is None:
        return None
    im, Hm = r
    lm = {k: pc.apply_h(Hm, [v])[0] for k, v in t["landmarks"].items()}
    stem = f"pv_{seed}"
    im.save(os.path.join(out, "Images", stem + ".png"))
    six = np.array([lm[k] for k in SIX], float)
    m = phantom.measure(lm)
    savemat(os.path.join(out, "Labels", stem + ".mat"), {"six_points": six, "VHS": m[0]})
    return {"case": stem, "vlas_point": [float(x) for x in lm["VLAS"]], "vhs": float(m[0]),
            "vhs_displayed": float(t["vhs"]),
            "display": t["display"], "layout": t["layout"], "room": t["room"], "seed": seed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=600, help="frames rendered (cut-off ones are skipped)")
    ap.add_argument("--seed0", type=int, default=46_000_000)
    ap.add_argument("--exclude", action="append", default=[], metavar="AXIS=F1[,F2]")
    ap.add_argument("--corner-error", type=float, default=0.004,
                    help="SD of the corner error as a share of the frame diagonal (the finder's median is about 0.5-1 %%)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    exclude = pc.parse_families(a.exclude)
    for d in ("Images", "Labels"):
        os.makedirs(os.path.join(a.out, d), exist_ok=True)
    with Pool(a.workers) as p:
        rows = [r for r in p.imap(case, [(a.seed0 + i, a.out, exclude, a.corner_error) for i in range(a.n)], chunksize=4) if r]
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump({"source": "pop_rectified.py (synthetic)", "seed0": a.seed0, "n": a.n,
                   "exclude": {k: list(v) for k, v in exclude.items()}, "cases": rows}, f, indent=1)
    with open(os.path.join(a.out, "cases.json"), "w") as f:
        json.dump([r["case"] for r in rows], f)
    print(f"{len(rows)} of {a.n} frames written to {a.out}")


if __name__ == "__main__":
    main()
