#!/usr/bin/python3
"""Where a PoP pipeline places the displayed image's edges (docs/pop.md,
the side diagnosis of rounds 11 and 15). SYNTHETIC DATA only: it reads a
development or held-out set (frames + truth_vscreen.json, as
pop/traindata.py --dev-frames and make eval-popnet write them) and the
output of `bench/evalpop -v` on it, one file per pipeline.

  python3 -m pop.sides sides SET OUT1 [OUT2 ...] [--per-side]
      Each side of each true displayed-image quad, split by whether the
      image's edge can be seen there: the frame is rectified from the
      true quad with a margin, and a side is *invisible* when the mean
      grey just inside and just outside it differ by less than
      --contrast levels (a black image margin on a black viewport band).
      For every pipeline: the median outward offset of its found side
      (% of the image's extent; negative = it stops inside the image)
      and the shares more than 1 % outside and inside.

  python3 -m pop.sides layouts SET BASE CAND
      Paired frames found by both, per viewer layout: frames better and
      worse (by more than 0.01 points), median corner error, and the
      mean area of the found quad over the true one.
"""
import argparse
import collections
import json
import os
import re
import statistics

import numpy as np
from PIL import Image

from pop import composites as pc
from pop.traindata import VISIBLE_CONTRAST

# A side whose inside and outside differ by less than this many grey
# levels cannot be seen: the training data's own cut (--visible-truth).
CONTRAST = VISIBLE_CONTRAST
# Rectification of the true quad: its margin (share of the quad) and size.
MARGIN = 0.08
SIZE = 200
# Strip width (rectified pixels) and the gap left at the edge.
STRIP, GAP = 6, 2
SIDES = ("top", "bottom", "left", "right")
UNIT = [(0, 0), (1, 0), (1, 1), (0, 1)]

_LINE = re.compile(r"^(\S+\.jpg) (\S+) (\S+) .*?err=([0-9.]+)% .*?quad=([-0-9.,]+)")


def read_evalpop(path):
    """{file: (corner error %, 4x2 quad, family string)} for every found
    frame of an `evalpop -v` output (missed frames are left out)."""
    out = {}
    with open(path) as f:
        for line in f:
            m = _LINE.match(line)
            if m and "MISSED" not in line:
                q = np.array([float(x) for x in m.group(5).split(",") if x]).reshape(4, 2)
                out[m.group(1)] = (float(m.group(4)), q, m.group(3))
    return out


def read_truth(setdir):
    with open(os.path.join(setdir, "truth_vscreen.json")) as f:
        return {it["file"]: it for it in json.load(f)["items"]}


def offsets(truth, found):
    """Outward offset of each side of found against truth (quads TL, TR,
    BR, BL in frame pixels), in % of the true image's extent, measured in
    the true image's own coordinates: {side: %}."""
    u = pc.apply_h(pc.homography(truth, UNIT), found)  # frame -> the true image's unit square
    return {"top": -(u[0, 1] + u[1, 1]) / 2 * 100, "bottom": ((u[2, 1] + u[3, 1]) / 2 - 1) * 100,
            "left": -(u[0, 0] + u[3, 0]) / 2 * 100, "right": ((u[1, 0] + u[2, 0]) / 2 - 1) * 100}


def side_greys(img, truth):
    """{side: (mean grey inside, mean grey outside)} along the middle 96 %
    of each side of the true quad on the grey frame img; a side whose
    outside lies more than 30 % beyond the frame is left out."""
    u = np.linspace(-MARGIN, 1 + MARGIN, SIZE)
    U, V = np.meshgrid(u, u)
    x, y = pc.apply_h(pc.homography(UNIT, truth), np.c_[U.ravel(), V.ravel()]).T
    ok = (x >= 0) & (y >= 0) & (x < img.shape[1] - 1) & (y < img.shape[0] - 1)
    g = np.full(x.size, np.nan)
    g[ok] = img[y[ok].astype(int), x[ok].astype(int)]
    g = g.reshape(SIZE, SIZE)
    k = lambda v: int(round((v + MARGIN) / (1 + 2 * MARGIN) * (SIZE - 1)))
    a, b = k(0.02), k(0.98)
    s, w = GAP, STRIP
    strips = {
        "top": (g[k(0) + s:k(0) + s + w, a:b], g[k(0) - s - w:k(0) - s, a:b]),
        "bottom": (g[k(1) - s - w:k(1) - s, a:b], g[k(1) + s:k(1) + s + w, a:b]),
        "left": (g[a:b, k(0) + s:k(0) + s + w], g[a:b, k(0) - s - w:k(0) - s]),
        "right": (g[a:b, k(1) - s - w:k(1) - s], g[a:b, k(1) + s:k(1) + s + w]),
    }
    out = {}
    for side, (ins, outs) in strips.items():
        if np.isnan(outs).mean() > 0.3 or np.isnan(ins).all():
            continue
        out[side] = (float(np.nanmean(ins)), float(np.nanmean(outs)))
    return out


def side_rows(setdir, outs):
    """One row per side seen by every pipeline: (file, layout, side,
    contrast, outside grey, [offset per pipeline])."""
    truth = read_truth(setdir)
    found = [read_evalpop(o) for o in outs]
    rows = []
    for f, it in truth.items():
        if any(f not in r for r in found):
            continue
        q = np.asarray(it["corners"], float)
        img = np.asarray(Image.open(os.path.join(setdir, f)).convert("L"), float)
        offs = [offsets(q, r[f][1]) for r in found]
        for side, (gin, gout) in side_greys(img, q).items():
            rows.append((f, it.get("layout", ""), side, abs(gin - gout), gout, [o[side] for o in offs]))
    return rows


def classes(contrast):
    return (("visible, dark outside", lambda r: r[3] >= contrast and r[4] < 25),
            ("visible, bright outside", lambda r: r[3] >= contrast and r[4] >= 25),
            ("invisible", lambda r: r[3] < contrast))


def summary(rows, names, contrast=CONTRAST, per_side=False):
    """Lines: per class (and side), per pipeline, the median offset and
    the shares beyond +-1 %."""
    lines = []
    for name, cond in classes(contrast):
        for side in (SIDES if per_side else (None,)):
            grp = [r for r in rows if cond(r) and (side is None or r[2] == side)]
            if not grp:
                continue
            label = name + (f", {side}" if side else "")
            for j, n in enumerate(names):
                v = np.array([r[5][j] for r in grp])
                lines.append(f"{label:32s} n={len(grp):4d} {n:14s} median {np.median(v):+.2f} % "
                             f"p10 {np.percentile(v, 10):+.2f} p90 {np.percentile(v, 90):+.2f} "
                             f"> +1 %: {np.mean(v > 1):.2f} < -1 %: {np.mean(v < -1):.2f}")
    return lines


def _area(q):
    x, y = np.asarray(q, float).T
    return abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2


def layouts(setdir, base, cand):
    """Lines per layout (and ALL) over the frames both found."""
    truth = read_truth(setdir)
    A, B = read_evalpop(base), read_evalpop(cand)
    acc = collections.defaultdict(lambda: {"ea": [], "eb": [], "ra": [], "rb": [], "better": 0, "worse": 0})
    for f in sorted(set(A) & set(B) & set(truth)):
        ta = _area(truth[f]["corners"])
        fam = A[f][2].split("/")
        for key in (fam[1] if len(fam) > 1 else fam[0], "ALL"):
            d = acc[key]
            d["ea"].append(A[f][0])
            d["eb"].append(B[f][0])
            d["ra"].append(_area(A[f][1]) / ta)
            d["rb"].append(_area(B[f][1]) / ta)
            d["better"] += B[f][0] < A[f][0] - 0.01
            d["worse"] += B[f][0] > A[f][0] + 0.01
    return [f"{k:12s} n={len(d['ea']):4d} better {d['better']:4d} worse {d['worse']:4d}; "
            f"median {statistics.median(d['ea']):.2f} -> {statistics.median(d['eb']):.2f} %; "
            f"area ratio {statistics.mean(d['ra']):.4f} -> {statistics.mean(d['rb']):.4f}"
            for k, d in sorted(acc.items())]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sides")
    s.add_argument("set")
    s.add_argument("outs", nargs="+")
    s.add_argument("--contrast", type=float, default=CONTRAST)
    s.add_argument("--per-side", action="store_true")
    l = sub.add_parser("layouts")
    l.add_argument("set")
    l.add_argument("base")
    l.add_argument("cand")
    a = ap.parse_args()
    if a.cmd == "sides":
        names = [os.path.basename(os.path.dirname(os.path.abspath(o))) or o for o in a.outs]
        print("\n".join(summary(side_rows(a.set, a.outs), names, a.contrast, a.per_side)))
    else:
        print("\n".join(layouts(a.set, a.base, a.cand)))


if __name__ == "__main__":
    main()
