#!/usr/bin/env python3
"""Write the held-out evaluation set the models never saw.

Phantoms use seeds >= phantom.HELDOUT_SEED_BASE and the wider HELDOUT ranges
(VHS 7.6-14, VLAS 1.1-3.9, more rotation, wider aspect and zoom); negatives
use seeds far from the training ones. Files are full-size JPEG or PNG as a
clinic would send them; truth.json holds landmarks in pixels and VHS/VLAS.
"""
import argparse
import json
import os
from multiprocessing import Pool

import numpy as np

import negatives
import phantom

NEG_SEED_BASE = 90_000_000


def _pos(args):
    i, out, base = args
    seed = base + i
    r = np.random.default_rng(seed + 11)
    if i % 4 == 0:
        w = h = 1024
    else:
        long_side = int(r.integers(512, 2048))
        asp = r.uniform(*phantom.HELDOUT["aspect"])
        w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
    im, truth, meta = phantom.generate(seed, w, h, heldout=True)
    name = f"pos_{i:04d}." + ("jpg" if i % 3 else "png")
    path = os.path.join(out, name)
    if name.endswith("jpg"):
        im.save(path, quality=int(r.integers(80, 96)))
    else:
        im.save(path)
    return {"file": name, "radiograph": True, "width": w, "height": h, "vhs": meta["vhs"], "vlas": meta["vlas"],
            "landmarks": {k: [float(v[0]), float(v[1])] for k, v in truth.items()}}


def _neg(args):
    i, out, base = args
    im = negatives.generate(base + i)
    name = f"neg_{i:04d}.jpg"
    im.save(os.path.join(out, name), quality=90)
    return {"file": name, "radiograph": False, "width": im.size[0], "height": im.size[1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--negatives", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--validation", action="store_true",
                    help="a separate validation set (other seeds) for choosing thresholds, never for reporting")
    a = ap.parse_args()
    pos_base = phantom.HELDOUT_SEED_BASE + (5_000_000 if a.validation else 0)
    neg_base = NEG_SEED_BASE + (5_000_000 if a.validation else 0)
    os.makedirs(a.out, exist_ok=True)
    with Pool(a.workers) as p:
        items = p.map(_pos, [(i, a.out, pos_base) for i in range(a.n)], chunksize=4)
        items += p.map(_neg, [(i, a.out, neg_base) for i in range(a.negatives)], chunksize=8)
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump({"generator": "phantom.py HELDOUT ranges, seeds from %d" % pos_base,
                   "ranges": phantom.HELDOUT, "items": items}, f, indent=1)
    print(f"held-out set: {a.n} radiograph phantoms, {a.negatives} negatives in {a.out}")


if __name__ == "__main__":
    main()
