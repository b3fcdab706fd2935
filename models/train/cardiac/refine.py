#!/usr/bin/env python3
"""The cardiac refinement stage: crop box and its training set.

Stage 1 (the five landmark models) sees the whole radiograph letterboxed to
224 px, where the heart and the T4-T9 span cover only part of the input.
Stage 2 re-measures on a crop around stage 1's landmarks, letterboxed to the
same 224 px, so the same landmarks are seen about twice as large. The crop
box is defined here and in engine/cardiac (refineBox); the two must agree:

    bw, bh = extent of the 7 landmarks (pixels); pad = margin * max(bw, bh)
    x0 = max(0, floor(min x - pad)), x1 = min(W, ceil(max x + pad)), same for y

Training crops take the true landmarks with a jitter like stage 1's error
(and a heavier tail) and a random margin around the inference margin, so the
refinement models learn to correct stage 1, not to trust it.
"""
import math
from multiprocessing import Pool

import numpy as np

from cardiac import dataset
from sim import phantom
from sim import xraysim

# MARGIN is the inference margin (docs/cardiac.md, "Refinement stage");
# training draws margins from TRAIN_MARGIN around it.
MARGIN = 0.2
TRAIN_MARGIN = (0.12, 0.28)
# Smallest crop side (pixels) worth refining; smaller boxes keep stage 1.
MIN_SIDE = 16


def refine_box(pts_px, w, h, margin=MARGIN):
    """Crop box (x0, y0, x1, y1), integer pixels, around landmarks [K,2]."""
    p = np.asarray(pts_px, dtype=np.float64)
    lo, hi = p.min(0), p.max(0)
    pad = margin * float(max(hi[0] - lo[0], hi[1] - lo[1]))
    x0 = max(0, math.floor(lo[0] - pad))
    y0 = max(0, math.floor(lo[1] - pad))
    x1 = min(w, math.ceil(hi[0] + pad))
    y1 = min(h, math.ceil(hi[1] + pad))
    return x0, y0, x1, y1


def crop_sample(im, pts_px, box, S):
    """Letterboxed crop (uint8 [S,S]) and landmarks in crop-letterbox units [K,2]."""
    x0, y0, x1, y1 = box
    crop = im.crop((x0, y0, x1, y1))
    lb, _ = dataset.letterbox(crop, S)
    local = np.asarray(pts_px, dtype=np.float64) - [x0, y0]
    return np.asarray(lb, np.uint8), dataset.to_letterbox_coords(local, x1 - x0, y1 - y0, S).astype(np.float32)


# Stage-1 error the crops are jittered with, as a fraction of the image
# diagonal, per generator: sim/phantom.py's models erred about 0.4 %; on the
# simulator's wider world (and on real radiographs) stage 1 errs more, so the
# crops are jittered more and the stage learns to correct larger offsets.
JITTER = {"phantom": (0.004, 0.15), "xraysim": (0.008, 0.2)}


def _sample(args):
    seed, S, crops, gen = args
    rng = np.random.default_rng(seed + 13)
    long_side = int(rng.integers(450, 1100))
    if gen == "xraysim":
        im, truth, _ = xraysim.generate(seed, long_side=min(long_side, 900))
        im = im.convert("L")
        w, h = im.size
    else:
        asp = rng.uniform(*phantom.TRAIN["aspect"])
        w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
        im, truth, _ = phantom.generate(seed, w, h)
    pts = np.array([truth[k] for k in phantom.LANDMARKS])
    diag = math.hypot(w, h)
    base, heavy = JITTER[gen]
    out = []
    for _ in range(crops):
        sigma = base * diag * (3.0 if rng.random() < heavy else 1.0)
        guess = pts + rng.normal(0, sigma, pts.shape)
        box = refine_box(guess, w, h, rng.uniform(*TRAIN_MARGIN))
        out.append(crop_sample(im, pts, box, S))
    return out


def load_dogheart_crops(root, S, crops=2, seed=0):
    """DogHeart/CCK folder -> jittered refinement crops (images, landmarks, mask).

    The box is taken around the labelled points (the six of the format, and
    VLAS where provenance.json has it; it lies inside the heart's extent),
    so the box is the one the engine would crop.
    """
    rng = np.random.default_rng(seed)
    imgs, lms, masks = [], [], []
    for im, pts, mask in dataset.read_dogheart(root):
        w, h = im.size
        known = pts[mask > 0]
        diag = math.hypot(w, h)
        for _ in range(crops):
            guess = known + rng.normal(0, 0.004 * diag, known.shape)
            x, lm = crop_sample(im, pts, refine_box(guess, w, h, rng.uniform(*TRAIN_MARGIN)), S)
            imgs.append(x)
            lms.append(lm)
            masks.append(mask)
    if not imgs:
        raise FileNotFoundError(f"no DogHeart images with labels under {root}")
    return np.stack(imgs), np.stack(lms), np.stack(masks)


def build_refine_set(n, seed0, S, out, crops=2, workers=2, dogheart=None, generator="xraysim"):
    """Generate n radiographs, `crops` jittered crops each, into an .npz like cardiac/dataset.py's."""
    with Pool(workers) as pool:
        res = pool.map(_sample, [(seed0 + i, S, crops, generator) for i in range(n)], chunksize=8)
    flat = [c for r in res for c in r]
    imgs = np.stack([c[0] for c in flat])
    lms = np.stack([c[1] for c in flat])
    mask = np.ones(lms.shape[:2], np.float32)
    if dogheart:
        i, l, m = load_dogheart_crops(dogheart, S, crops, seed0)
        imgs, lms, mask = np.concatenate([imgs, i]), np.concatenate([lms, l]), np.concatenate([mask, m])
    np.savez_compressed(out, images=imgs, landmarks=lms, mask=mask)
    return out


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="build a refinement-crop training set")
    ap.add_argument("--n", type=int, required=True, help="phantoms")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--crops", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dogheart", help="also crop a DogHeart/CCK folder (Images/, Labels/)")
    ap.add_argument("--generator", choices=["xraysim", "phantom"], default="xraysim")
    ap.add_argument("out")
    a = ap.parse_args()
    build_refine_set(a.n, a.seed, a.size, a.out, a.crops, a.workers, a.dogheart, a.generator)
    print("wrote", a.out)
