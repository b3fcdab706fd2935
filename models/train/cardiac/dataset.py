"""Datasets for the cardiac models: synthetic phantoms and the DogHeart/CCK format.

The letterbox here is the one in docs/model-contract.md and must stay equal
to engine/imageproc in Go: scale the long side to S with exact area
averaging (PIL BOX), paste centred on black.
"""
import glob
import json
import os
from multiprocessing import Pool

import numpy as np
from PIL import Image

from sim import phantom
from sim import xraysim

N_LANDMARKS = len(phantom.LANDMARKS)


def letterbox_geometry(w, h, S):
    s = S / max(w, h)
    nw, nh = max(1, int(round(w * s))), max(1, int(round(h * s)))
    return nw, nh, (S - nw) // 2, (S - nh) // 2


def letterbox(im, S):
    """PIL image -> (letterboxed PIL image of the same mode, (nw, nh, ox, oy))."""
    w, h = im.size
    nw, nh, ox, oy = letterbox_geometry(w, h, S)
    small = im.resize((nw, nh), Image.BOX)
    canvas = Image.new(im.mode, (S, S), 0)
    canvas.paste(small, (ox, oy))
    return canvas, (nw, nh, ox, oy)


def to_letterbox_coords(pts_px, w, h, S):
    """Pixel coordinates [K,2] of a w x h image -> letterbox units / S."""
    nw, nh, ox, oy = letterbox_geometry(w, h, S)
    p = np.asarray(pts_px, dtype=np.float64)
    return np.stack([(p[:, 0] * nw / w + ox) / S, (p[:, 1] * nh / h + oy) / S], 1)


def _phantom_sample(args):
    seed, S, heldout, gen, masks = args
    rng = np.random.default_rng(seed + 7)
    heart = None
    if gen in xraysim.WORLDS:
        # The simulator picks a size and aspect that fit its field of view.
        im, truth, meta = xraysim.generate(seed, heldout=heldout, long_side=int(rng.integers(240, 420)), world=gen,
                                           with_mask=masks)
        w, h = im.size
        if masks and meta["heart_mask"] is not None:
            heart = np.asarray(letterbox(Image.fromarray(meta["heart_mask"], "L"), S)[0], np.uint8)
    else:
        long_side = int(rng.integers(256, 600))
        asp = rng.uniform(*(phantom.HELDOUT if heldout else phantom.TRAIN)["aspect"])
        w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
        im, truth, meta = phantom.generate(seed, w, h, heldout=heldout)
    lb, _ = letterbox(im.convert("L"), S)
    pts = np.array([truth[k] for k in phantom.LANDMARKS])
    return np.asarray(lb, np.uint8), to_letterbox_coords(pts, w, h, S).astype(np.float32), heart


def build_phantom_set(n, seed0, S, out, heldout=False, workers=2, generator="phantom", compress=True, masks=False):
    """Generate n letterboxed radiographs into an .npz with images, landmarks
    and mask; generator is one of xraysim.WORLDS (the physically based
    simulator, "xraysim2" its second world) or "phantom" (the first, painted
    generator). compress=False writes faster
    (for a set used once, on a machine with many cores). masks (simulator
    worlds only) adds "heart", the letterboxed heart silhouette (uint8
    0-255), and "heart_ok", false where the image has none (a lightbox
    photo)."""
    if masks and generator not in xraysim.WORLDS:
        raise ValueError(f"heart masks come from the simulator only, not {generator!r}")
    with Pool(workers) as pool:
        res = pool.map(_phantom_sample, [(seed0 + i, S, heldout, generator, masks) for i in range(n)], chunksize=16)
    imgs = np.stack([r[0] for r in res])
    lms = np.stack([r[1] for r in res])
    mask = np.ones(lms.shape[:2], np.float32)
    extra = {}
    if masks:
        extra["heart"] = np.stack([r[2] if r[2] is not None else np.zeros((S, S), np.uint8) for r in res])
        extra["heart_ok"] = np.array([r[2] is not None for r in res])
    (np.savez_compressed if compress else np.savez)(out, images=imgs, landmarks=lms, mask=mask, **extra)
    return out


# DogHeart / CCK: Images/*.png + Labels/*.mat with six_points (A-F) and VHS.
# A,B long axis (heart_top, heart_bottom); C,D short axis (heart_right,
# heart_left); E,F the T4-T9 span (Vertebra A, Vertebra B). No VLAS point:
# its mask is 0 so the loss ignores it.
DOGHEART_ORDER = {"heart_top": 0, "heart_bottom": 1, "heart_right": 2, "heart_left": 3,
                  "Vertebra A": 4, "Vertebra B": 5}


def dogheart_stems(root):
    """The stems of a DogHeart/CCK folder's labelled images, sorted."""
    stems = []
    for ip in sorted(glob.glob(os.path.join(root, "Images", "*.png"))):
        stem = os.path.splitext(os.path.basename(ip))[0]
        if os.path.exists(os.path.join(root, "Labels", stem + ".mat")):
            stems.append(stem)
    return stems


def read_provenance(root):
    """Case stem -> entry of a DogHeart/CCK folder's provenance.json (empty
    when the folder has none; ValueError when it cannot be read)."""
    p = os.path.join(root, "provenance.json")
    if not os.path.exists(p):
        return {}
    try:
        with open(p) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"reading {p}: {e}") from e
    return {c["case"]: c for c in doc.get("cases", []) if isinstance(c, dict) and "case" in c}


def read_dogheart_case(root, stem, provenance=None):
    """(PIL L image, landmarks [K,2] in pixels, mask [K]) of one case of a
    DogHeart/CCK folder: Images/stem.png with Labels/stem.mat. The format
    has no VLAS point: it comes from the case's provenance entry
    (read_provenance) when that has a vlas_point, else its mask is 0."""
    from scipy.io import loadmat

    ip = os.path.join(root, "Images", stem + ".png")
    lp = os.path.join(root, "Labels", stem + ".mat")
    six = np.asarray(loadmat(lp)["six_points"], dtype=np.float64).reshape(6, 2)
    pts = np.zeros((N_LANDMARKS, 2))
    mask = np.zeros(N_LANDMARKS, np.float32)
    for name, j in DOGHEART_ORDER.items():
        k = phantom.LANDMARKS.index(name)
        pts[k] = six[j]
        mask[k] = 1
    vp = (provenance or {}).get("vlas_point")
    if isinstance(vp, list) and len(vp) == 2 and all(isinstance(v, (int, float)) for v in vp):
        k = phantom.LANDMARKS.index("VLAS")
        pts[k] = vp
        mask[k] = 1
    return Image.open(ip).convert("L"), pts, mask


def read_dogheart(root):
    """Yield (PIL L image, landmarks [K,2] in pixels, mask [K]) for each
    labelled image of a DogHeart/CCK folder, VLAS from provenance.json
    where it has one (read_dogheart_case)."""
    prov = read_provenance(root)
    for stem in dogheart_stems(root):
        yield read_dogheart_case(root, stem, prov.get(stem))


def letterbox_cases(cases, S):
    """Letterbox (PIL image, landmarks [K,2] in pixels, mask [K]) cases to
    S: (images uint8 [N,S,S], landmarks [N,K,2] in letterbox units, mask
    [N,K] float32). ValueError when there are none."""
    imgs, lms, masks = [], [], []
    for im, pts, mask in cases:
        w, h = im.size
        lb, _ = letterbox(im, S)
        imgs.append(np.asarray(lb, np.uint8))
        lms.append(to_letterbox_coords(pts, w, h, S).astype(np.float32))
        masks.append(mask)
    if not imgs:
        raise ValueError("no cases to letterbox")
    return np.stack(imgs), np.stack(lms), np.stack(masks).astype(np.float32)


def load_dogheart(root, S):
    """Read a DogHeart/CCK folder into (images uint8 [N,S,S], landmarks [N,7,2], mask [N,7])."""
    if not dogheart_stems(root):
        raise FileNotFoundError(f"no DogHeart images with labels under {root}")
    return letterbox_cases(read_dogheart(root), S)


def build_dogheart_set(root, S, out, compress=True):
    """Letterbox every labelled image of a DogHeart/CCK folder into an .npz
    like build_phantom_set's (images, landmarks, mask), so that a training
    run can mix it with simulator sets (cardiac/train_gpu.py member --data A.npz
    B.npz): a clinic's labelled radiographs, or pop/rectified.py's
    rectified screen photos. VLAS comes from provenance.json's vlas_point
    where the folder has one (read_dogheart_case), else its mask is 0.
    Returns the number of images."""
    imgs, lms, mask = load_dogheart(root, S)
    (np.savez_compressed if compress else np.savez)(out, images=imgs, landmarks=lms, mask=mask)
    return len(imgs)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="build a letterboxed phantom set, or letterbox a DogHeart/CCK folder (--dogheart)")
    ap.add_argument("--dogheart", help="a DogHeart/CCK folder (Images/*.png, Labels/*.mat) to letterbox instead of generating")
    ap.add_argument("--n", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--heldout", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--generator", choices=list(xraysim.WORLDS) + ["phantom"], default="xraysim")
    ap.add_argument("--no-compress", action="store_true", help="write an uncompressed .npz (faster)")
    ap.add_argument("--heart-masks", action="store_true", help="also store the heart silhouette (simulator only)")
    ap.add_argument("out")
    a = ap.parse_args()
    if a.dogheart:
        n = build_dogheart_set(a.dogheart, a.size, a.out, not a.no_compress)
        print(f"wrote {a.out} ({n} images from {a.dogheart})")
    else:
        if a.n is None or a.seed is None:
            ap.error("--n and --seed are required without --dogheart")
        build_phantom_set(a.n, a.seed, a.size, a.out, a.heldout, a.workers, a.generator, not a.no_compress,
                          a.heart_masks)
        print("wrote", a.out)
