#!/usr/bin/env python3
"""Write a held-out evaluation set the models never saw.

Two generators, so generalisation is measured the honest way:
  --generator xraysim  the physically based simulator the models train on,
                       held-out seeds (>= xraysim.HELDOUT_SEED_BASE) and
                       presentation families never used in training (green
                       viewer tint, phone photos of a lightbox); negatives
                       include other radiographic views (VD thorax, abdomen,
                       limbs) besides documents, screenshots and scenes.
  --generator phantom  the first, independently written 2D generator
                       (sim/phantom.py, HELDOUT ranges): never in training, an
                       outside world for the models.
  --generator family3  a third way of drawing a thorax (sim/family3.py),
                       700-1,100 pixels: never in training, for judging.
Files are full-size JPEG or PNG as a clinic would send them; truth.json holds
landmarks in pixels and VHS/VLAS.
"""
import argparse
import json
import os
from multiprocessing import Pool

import numpy as np

from sim import family3
from sim import negatives
from sim import phantom
from sim import xraysim

NEG_SEED_BASE = 90_000_000


def _pos(args):
    i, out, base, gen = args
    seed = base + i
    r = np.random.default_rng(seed + 11)
    if gen in xraysim.WORLDS:
        if i % 4 == 0:
            im, truth, meta = xraysim.generate(seed, 1024, 1024, heldout=True, world=gen)
        else:
            im, truth, meta = xraysim.generate(seed, heldout=True, long_side=int(r.integers(300, 1400)), world=gen)
        w, h = im.size
    elif gen == "family3":
        im, truth, meta = family3.generate(seed, long_side=int(r.integers(700, 1100)))
        w, h = im.size
    else:
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


def _save_negative(im, out, name, kind):
    """Write a negative as JPEG into out; its truth.json item."""
    im.convert("RGB").save(os.path.join(out, name), quality=90)
    return {"file": name, "radiograph": False, "width": im.size[0], "height": im.size[1], "kind": kind}


def _neg(args):
    i, out, base, gen = args
    kind = "other"
    if gen in xraysim.WORLDS and i % 4 == 0:
        im, kind = xraysim.other_view(base + i)
    else:
        im = negatives.generate(base + i)
    return _save_negative(im, out, f"neg_{i:04d}.jpg", kind)


def _ood(args):
    i, out, base, kind = args
    return _save_negative(negatives.generate_heldout(base + i, kind), out, f"ood_{kind}_{i:04d}.jpg", kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--negatives", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--generator", choices=list(xraysim.WORLDS) + ["phantom", "family3"], default="xraysim")
    ap.add_argument("--ood", type=int, default=0,
                    help="also this many negatives of each kind the validity classifier never saw in training "
                         "(negatives.HELDOUT_KINDS: spreadsheets, ultrasound, colour photos of rooms)")
    ap.add_argument("--validation", action="store_true",
                    help="a separate validation set (other seeds) for choosing thresholds, never for reporting")
    ap.add_argument("--offset", type=int, default=0,
                    help="add this to every seed: a fresh set for one trial's judgement, never generated before "
                         "(experiments/ names the offsets used)")
    a = ap.parse_args()
    base = (xraysim.HELDOUT_SEED_BASE if a.generator in xraysim.WORLDS else
            family3.HELDOUT_SEED_BASE if a.generator == "family3" else phantom.HELDOUT_SEED_BASE)
    shift = (5_000_000 if a.validation else 0) + a.offset
    pos_base, neg_base = base + shift, NEG_SEED_BASE + shift
    os.makedirs(a.out, exist_ok=True)
    with Pool(a.workers) as p:
        items = p.map(_pos, [(i, a.out, pos_base, a.generator) for i in range(a.n)], chunksize=4)
        items += p.map(_neg, [(i, a.out, neg_base, a.generator) for i in range(a.negatives)], chunksize=8)
        for kind in negatives.HELDOUT_KINDS if a.ood else ():
            items += p.map(_ood, [(i, a.out, neg_base + 7_000_000, kind) for i in range(a.ood)], chunksize=8)
    desc = {"xraysim": "xraysim.py (physically based simulator), held-out seeds from %d and presentations never "
                       "used in training" % pos_base,
            "xraysim2": "xraysim.py world 2 (xraysim2: the simulator's second anatomy and DR processing), "
                        "held-out seeds from %d" % pos_base,
            "phantom": "phantom.py (the first 2D generator, never used in training), HELDOUT ranges, seeds from %d"
                       % pos_base,
            "family3": "sim/family3.py (a third way of drawing; judging only), seeds from %d" % pos_base}[a.generator]
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump({"generator": desc, "items": items}, f, indent=1)
    print(f"held-out set: {a.n} {a.generator} radiographs, {a.negatives} negatives in {a.out}")


if __name__ == "__main__":
    main()
