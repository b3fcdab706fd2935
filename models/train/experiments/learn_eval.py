#!/usr/bin/env python3
"""Compare cardiac model directories on held-out cases, from their ONNX files.

    python3 -m experiments.learn_eval --models BASE --models NEW [--pool POOL --cases HELD.json] [--heldout DIR] [--limit N]

Each directory's five landmark models are loaded into PyTorch from the ONNX
files (train_landmarks.init_from_onnx: the same function, exactly), run on
each image letterboxed as the engine does, and averaged in image pixels
(the engine's ensemble mean). Cases: the listed stems of a DogHeart/CCK
pool (truth: the labels and provenance's vlas_point and vhs) and/or a
sim/heldout.py folder (truth.json). Prints one JSON line per directory and set:
per-landmark error in pixels and in % of the image diagonal, VHS MAE, the
share within 0.5 v, and the per-case VHS errors (for paired statistics).

A trainer's check; the product's figures come from the Go engine
(`vetlens learn` reports them).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
from PIL import Image

from cardiac import dataset
from experiments import evalpt
from cardiac import learn
from sim import phantom
from cardiac import train_landmarks as T

LM = phantom.LANDMARKS


def load_members(models_dir):
    """The landmark members of a models directory as PyTorch nets (eval mode)."""
    nets = []
    for k in range(1, learn.MEMBERS + 1):
        p = os.path.join(models_dir, f"cardiac_landmark_{k}.onnx")
        net = T.LandmarkNet(learn.onnx_width(p))
        T.init_from_onnx(net, p)
        nets.append(net.eval())
    return nets


def predict(nets, im, S=224):
    """Ensemble mean landmarks [K,2] in image pixels."""
    return evalpt.predict(nets, S, im)[0].mean(0)


def pool_cases(pool, stems):
    """(image, truth [K,2] px, mask [K], truth VHS) for listed pool cases."""
    prov = learn.read_provenance(pool)
    for s in stems:
        c = prov.get(s, {})
        im, pts, mask = dataset.read_dogheart_case(pool, s, c)
        vhs = c.get("vhs")
        if vhs is None:
            vhs = phantom.measure({k: pts[i] for i, k in enumerate(LM)})[0]
        yield im, pts, mask, float(vhs)


def heldout_cases(folder, limit=0):
    with open(os.path.join(folder, "truth.json")) as f:
        items = [it for it in json.load(f)["items"] if it.get("radiograph")]
    for it in items[: limit or None]:
        im = Image.open(os.path.join(folder, it["file"]))
        yield im, np.array([it["landmarks"][k] for k in LM]), np.ones(len(LM)), float(it["vhs"])


def evaluate(nets, cases):
    """Figures for one ensemble over (image, truth, mask, vhs) cases."""
    px, pct, msk, verr = [], [], [], []
    for im, truth, mask, vhs in cases:
        p = predict(nets, im)
        d = np.linalg.norm(p - truth, axis=1)
        px.append(d)
        pct.append(d / np.hypot(*im.size) * 100)
        msk.append(mask)
        verr.append(phantom.measure({k: p[i] for i, k in enumerate(LM)})[0] - vhs)
    px, pct, msk, verr = map(np.array, (px, pct, msk, verr))
    per = lambda a: {k: round(float((a[:, i] * msk[:, i]).sum() / max(1, msk[:, i].sum())), 3) for i, k in enumerate(LM)}
    ae = np.abs(verr)
    return {"n": int(len(verr)), "vhs_mae": round(float(ae.mean()), 4), "vhs_median_ae": round(float(np.median(ae)), 4),
            "within_0_5": round(float((ae <= 0.5).mean()), 4), "landmark_px": per(px), "landmark_pct_diag": per(pct),
            "mean_px": round(float((px * msk).sum() / msk.sum()), 3), "vhs_err": [round(float(v), 4) for v in verr]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", action="append", required=True, help="a cardiac models directory (repeat)")
    ap.add_argument("--pool")
    ap.add_argument("--cases", help="JSON list of pool stems to evaluate")
    ap.add_argument("--heldout", help="a sim/heldout.py folder (truth.json)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if not (a.pool and a.cases) and not a.heldout:
        sys.exit("learn_eval: give --pool with --cases, and/or --heldout")
    stems = learn.read_cases_list(a.cases)[: a.limit or None] if a.cases else []
    for d in a.models:
        nets = load_members(d)
        if stems:
            r = evaluate(nets, pool_cases(a.pool, stems))
            print(json.dumps(dict(models=d, set="clinic", **r)), flush=True)
        if a.heldout:
            r = evaluate(nets, heldout_cases(a.heldout, a.limit))
            print(json.dumps(dict(models=d, set="heldout", **r)), flush=True)


if __name__ == "__main__":
    main()
