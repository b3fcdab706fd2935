#!/usr/bin/env python3
"""Evaluate landmark checkpoints (.pt) straight from PyTorch on a folder.

For a folder with truth (truth.json as sim/heldout.py writes it: items with
file, radiograph, landmarks, vhs), prints each checkpoint's landmark error
(% of the image diagonal, per landmark) and VHS MAE, then the same for the
ensemble mean, with the spread (RMS distance of members from the mean, in
letterbox units) split into quartiles against VHS error. For a folder of
plain images (no truth.json: e.g. a clinic's own radiographs) it prints
each image's VHS, VLAS and spread, and with --draw DIR writes the images
annotated with every member's points.

This is a quick trainer's check; the product figures come from
`make eval-cardiac` through the Go engine.
"""
import argparse
import json
import os

import numpy as np
import torch
from PIL import Image, ImageDraw

from cardiac import dataset
from sim import phantom
from cardiac import train_landmarks as T

LM = phantom.LANDMARKS


def load(path):
    ck = torch.load(path, map_location="cpu")
    net = T.build_net(ck.get("arch", "unet"), ck["width"])
    net.load_state_dict(ck["state"])
    net.eval()
    return net, ck["size"]


def predict(nets, S, im):
    """Each member's landmarks [M,K,2] in image pixels."""
    g = im.convert("L")
    w, h = g.size
    lb, (nw, nh, ox, oy) = dataset.letterbox(g, S)
    x = torch.from_numpy(np.asarray(lb, np.float32) / 255.0)[None, None]
    out = []
    with torch.no_grad():
        for n in nets:
            _, c, _ = T.decode(n(x))
            c = c[0].numpy() * S
            out.append(np.stack([(c[:, 0] - ox) * w / nw, (c[:, 1] - oy) * h / nh], 1))
    return np.stack(out), lb, (nw, nh, ox, oy)


def spread(members, S, geom, w, h):
    nw, nh, ox, oy = geom
    lbu = np.stack([members[..., 0] * nw / w / S, members[..., 1] * nh / h / S], -1)
    return float(np.sqrt(((lbu - lbu.mean(0)) ** 2).sum(-1).mean()))


def vhs_of(p):
    return phantom.measure({k: p[i] for i, k in enumerate(LM)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("checkpoints", nargs="+")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--draw", help="write annotated images here")
    a = ap.parse_args()
    loaded = [load(c) for c in a.checkpoints]
    nets, S = [n for n, _ in loaded], loaded[0][1]
    tpath = os.path.join(a.folder, "truth.json")
    if a.draw:
        os.makedirs(a.draw, exist_ok=True)
    if not os.path.exists(tpath):
        for f in sorted(os.listdir(a.folder)):
            if not f.lower().endswith((".png", ".jpg", ".jpeg")):
                continue
            im = Image.open(os.path.join(a.folder, f))
            m, _, geom = predict(nets, S, im)
            mean = m.mean(0)
            vhs, vlas = vhs_of(mean)
            per = [vhs_of(x)[0] for x in m]
            ab = np.linalg.norm(mean[5] - mean[6])
            print(f"{f}: VHS {vhs:.2f} VLAS {vlas:.2f} members {np.round(per, 2).tolist()} "
                  f"spread {spread(m, S, geom, *im.size):.4f} |A-B| {ab:.0f}px of diag {np.hypot(*im.size):.0f}")
            if a.draw:
                rgb = im.convert("RGB")
                d = ImageDraw.Draw(rgb)
                r = max(3, int(max(im.size) / 200))
                for x in m:
                    for i, (px, py) in enumerate(x):
                        col = (255, 60, 60) if i >= 5 else (60, 200, 255)
                        d.ellipse([px - r, py - r, px + r, py + r], outline=col, width=2)
                for i, j, col in ((0, 1, (255, 255, 0)), (2, 3, (255, 255, 0)), (5, 6, (255, 0, 0))):
                    d.line([tuple(mean[i]), tuple(mean[j])], fill=col, width=max(2, r // 2))
                rgb.save(os.path.join(a.draw, os.path.splitext(f)[0] + ".png"))
        return
    with open(tpath) as fh:
        items = [it for it in json.load(fh)["items"] if it.get("radiograph")]
    if a.limit:
        items = items[: a.limit]
    errs, vhs_err, ens_err, spreads = [], [], [], []
    for it in items:
        im = Image.open(os.path.join(a.folder, it["file"]))
        truth = np.array([it["landmarks"][k] for k in LM])
        m, _, geom = predict(nets, S, im)
        diag = np.hypot(*im.size)
        errs.append(np.linalg.norm(m - truth[None], axis=-1) / diag * 100)
        tv = it["vhs"]
        vhs_err.append([abs(vhs_of(x)[0] - tv) for x in m])
        ens_err.append(abs(vhs_of(m.mean(0))[0] - tv))
        spreads.append(spread(m, S, geom, *im.size))
    errs, vhs_err, ens_err, spreads = np.array(errs), np.array(vhs_err), np.array(ens_err), np.array(spreads)
    print(f"{a.folder}: {len(items)} radiographs")
    for i, c in enumerate(a.checkpoints):
        pl = " ".join(f"{k[:6]} {errs[:, i, j].mean():.2f}" for j, k in enumerate(LM))
        print(f"  {os.path.basename(c)}: landmark err % diag: {pl}; VHS MAE {vhs_err[:, i].mean():.3f} "
              f"median {np.median(vhs_err[:, i]):.3f}")
    print(f"  ensemble: VHS MAE {ens_err.mean():.3f} median {np.median(ens_err):.3f} p95 {np.percentile(ens_err, 95):.3f}"
          f" within 0.5 v {np.mean(ens_err <= 0.5) * 100:.0f} %")
    q = np.quantile(spreads, [0.25, 0.5, 0.75])
    for lo, hi in zip([-1, *q], [*q, 9]):
        sel = (spreads > lo) & (spreads <= hi)
        print(f"  spread ({max(lo, 0):.4f}, {hi:.4f}]: n {sel.sum()} VHS MAE {ens_err[sel].mean():.3f}")


if __name__ == "__main__":
    main()
