#!/usr/bin/env python3
"""Write stand-ins for a clinic's corrected cases: a DogHeart/CCK folder.

SYNTHETIC DATA. The radiographs come from sim/phantom.py, the first, painted
generator: a style the shipped cardiac models (trained on sim/xraysim.py) were
never trained on, so it plays the part of a clinic's own X-ray system. Its
truth is exact and stands in for the clinician's points.

    python3 -m cardiac.clinic_cases --n N --seed S OUT

OUT/Images/<stem>.png, OUT/Labels/<stem>.mat (six_points 6x2 [x, y] in the
DogHeart order heart_top, heart_bottom, heart_right, heart_left, VertebraA,
VertebraB) and OUT/provenance.json in the `vetlens dataset export` format
(kind "edited", vlas_point, vhs, vlas, image_sha256), with a few fake
patient hashes so several cases share a patient. The same N and S always
give the same folder.
"""
import argparse
import datetime
import hashlib
import json
import os
import sys
from multiprocessing import Pool

import numpy as np

from cardiac import dataset
from sim import phantom

# Phantom seeds: SEED_BASE + seed * SEED_STRIDE + i, all below
# phantom.HELDOUT_SEED_BASE (the held-out phantom set's seeds).
SEED_BASE = 1_000_000
SEED_STRIDE = 10_000
MAX_SEED = (phantom.HELDOUT_SEED_BASE - SEED_BASE) // SEED_STRIDE - 1
BASE_VERSION = "v3.1.0-synthetic-xraysim.1"


def patient_hash(seed, j):
    """A fake salted patient hash (24 hex digits) for patient j of seed."""
    return hashlib.sha256(f"clinic-cases\0{seed}\0{j}".encode()).hexdigest()[:24]


def write_case(out, stem, im, truth):
    """Write Images/stem.png and Labels/stem.mat; return the PNG's SHA-256."""
    from scipy.io import savemat

    ip = os.path.join(out, "Images", stem + ".png")
    im.convert("L").save(ip)
    six = np.zeros((6, 2))
    for name, j in dataset.DOGHEART_ORDER.items():
        six[j] = truth[name]
    savemat(os.path.join(out, "Labels", stem + ".mat"), {"six_points": six}, format="5")
    with open(ip, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _generate(args):
    i, seed = args
    ps = SEED_BASE + seed * SEED_STRIDE + i
    r = np.random.default_rng(ps + 17)
    long_side = int(r.integers(480, 900))
    asp = r.uniform(*phantom.TRAIN["aspect"])
    w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
    im, truth, meta = phantom.generate(ps, w, h)
    return im, truth, meta


def build(n, seed, out, workers=2):
    """Write n cases for seed into out (which must not exist or be empty)."""
    if n < 1 or n > SEED_STRIDE:
        raise ValueError(f"--n must be 1..{SEED_STRIDE}, got {n}")
    if seed < 0 or seed > MAX_SEED:
        raise ValueError(f"--seed must be 0..{MAX_SEED}, got {seed}")
    if os.path.exists(out) and os.listdir(out):
        raise FileExistsError(f"{out} exists and is not empty")
    os.makedirs(os.path.join(out, "Images"), exist_ok=True)
    os.makedirs(os.path.join(out, "Labels"), exist_ok=True)
    patients = [patient_hash(seed, j) for j in range(max(1, n // 4))]
    pr = np.random.default_rng(seed)
    owner = pr.integers(0, len(patients), n)
    t0 = datetime.datetime(2026, 3, 1, 9, 0, 0, tzinfo=datetime.timezone.utc)
    cases = []
    with Pool(workers) as pool:
        for i, (im, truth, meta) in enumerate(pool.imap(_generate, [(i, seed) for i in range(n)], chunksize=4)):
            pat = patients[owner[i]]
            stem = f"vl-{pat[:12]}-{i + 1}"
            sha = write_case(out, stem, im, truth)
            cases.append({"case": stem, "patient": pat, "kind": "edited", "model_version": BASE_VERSION,
                          "date": (t0 + datetime.timedelta(hours=3 * i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "vlas_point": [float(v) for v in truth["VLAS"]],
                          "vhs": round(float(meta["vhs"]), 4), "vlas": round(float(meta["vlas"]), 4),
                          "image_sha256": sha})
    with open(os.path.join(out, "provenance.json"), "w") as f:
        json.dump({"format": "vetlens-dogheart-1", "cases": cases}, f, indent=1)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, required=True, help="number of cases")
    ap.add_argument("--seed", type=int, required=True, help=f"0..{MAX_SEED}: which cases")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("out")
    a = ap.parse_args()
    try:
        cases = build(a.n, a.seed, a.out, a.workers)
    except (ValueError, FileExistsError) as e:
        sys.exit(f"clinic_cases: {e}")
    print(f"clinic cases: {len(cases)} phantom.py radiographs, "
          f"{len({c['patient'] for c in cases})} patients, in {a.out}")


if __name__ == "__main__":
    main()
