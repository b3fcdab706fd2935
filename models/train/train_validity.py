#!/usr/bin/env python3
"""Train and export the validity classifier: is this a lateral thoracic radiograph?

Positives come from the physically based simulator (xraysim.py, every
presentation: grey, tinted, cropped, scanned, annotated, thumbnails);
negatives from negatives.py plus other radiographic views and regions
(xraysim.other_view: VD/DV thorax, lateral abdomen, limbs), so those are
rejected (code 6) rather than measured. Input
is the letterboxed RGB image at S x S (docs/model-contract.md); the output is
p_radiograph. Optionally adds real radiographs from a DogHeart/CCK folder as
positives (--dogheart DIR).
"""
import argparse
import glob
import json
import os
import time
from multiprocessing import Pool

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

import dataset
import negatives
import xraysim
from version import CARDIAC_VERSION


def _pos(args):
    seed, S, heldout = args
    r = np.random.default_rng(seed + 3)
    im, _, _ = xraysim.generate(seed, heldout=heldout, long_side=int(r.integers(200, 420)))
    lb, _ = dataset.letterbox(im.convert("RGB"), S)
    return np.asarray(lb, np.uint8)


def _neg(args):
    """Not a lateral thorax: documents, screenshots, scenes, textures (negatives.py)
    and, for a quarter, other radiographic views and regions (VD/DV thorax,
    lateral abdomen, limbs) from the simulator."""
    seed, S = args
    r = np.random.default_rng(seed + 5)
    if r.random() < 0.25:
        im, _ = xraysim.other_view(seed)
    else:
        im = negatives.generate(seed)
    lb, _ = dataset.letterbox(im.convert("RGB"), S)
    return np.asarray(lb, np.uint8)


def build(n, seed0, S, heldout=False, workers=2):
    with Pool(workers) as p:
        pos = p.map(_pos, [(seed0 + i, S, heldout) for i in range(n)], chunksize=16)
        neg = p.map(_neg, [(seed0 + 500_000 + i, S) for i in range(n)], chunksize=16)
    x = np.stack(pos + neg)
    y = np.concatenate([np.ones(n), np.zeros(n)]).astype(np.float32)
    return x, y


class ValidityNet(nn.Module):
    """Input [N,3,S,S] in 0..1 -> p_radiograph [N,1]."""

    def __init__(self):
        super().__init__()
        chans = [3, 16, 32, 48, 64, 96]
        layers = []
        for a, b in zip(chans, chans[1:]):
            layers += [nn.Conv2d(a, b, 3, 2, 1, bias=False), nn.BatchNorm2d(b), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(96 * 2, 1)

    def forward(self, image):
        x = self.features((image - 0.45) / 0.25)
        x = torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1)
        return torch.sigmoid(self.fc(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--n", type=int, default=2500, help="positives (and as many negatives)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=77)
    ap.add_argument("--dogheart", help="DogHeart/CCK folder: its images are extra positives")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    t0 = time.time()
    x, y = build(a.n, 2_000_000 + a.seed * 10_000, a.size)
    if a.dogheart:
        extra = [np.asarray(dataset.letterbox(Image.open(p).convert("RGB"), a.size)[0], np.uint8)
                 for p in sorted(glob.glob(os.path.join(a.dogheart, "Images", "*.png")))]
        x = np.concatenate([x, np.stack(extra)])
        y = np.concatenate([y, np.ones(len(extra), np.float32)])
    print(f"data {len(x)} in {time.time()-t0:.0f}s", flush=True)
    X = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
    Y = torch.from_numpy(y)
    net = ValidityNet()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = a.epochs * (len(X) // 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    g = torch.Generator().manual_seed(a.seed)
    step = 0
    for ep in range(a.epochs):
        perm = torch.randperm(len(X), generator=g)
        for i in range(0, len(X) - 63, 64):
            idx = perm[i:i + 64]
            xb = X[idx].float() / 255.0
            flip = torch.rand(len(idx), generator=g) < 0.5
            xb = torch.where(flip.view(-1, 1, 1, 1), xb.flip(-1), xb)
            xb = (xb * (1 + 0.2 * torch.randn(len(idx), 1, 1, 1, generator=g))).clamp(0, 1)
            # colour casts and tone curves of viewers, scanners and monitors
            cast = 1 + 0.08 * torch.randn(len(idx), 3, 1, 1, generator=g)
            xb = (xb.clamp(0, 1) ** torch.exp(0.3 * torch.randn(len(idx), 1, 1, 1, generator=g)) * cast).clamp(0, 1)
            loss = F.binary_cross_entropy(net(xb).squeeze(1).clamp(1e-6, 1 - 1e-6), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
        print(f"epoch {ep} loss {loss.item():.4f} {time.time()-t0:.0f}s", flush=True)
    net.eval()
    path = os.path.join(a.models, "cardiac_validity.onnx")
    torch.onnx.export(net, torch.zeros(1, 3, a.size, a.size), path, opset_version=13, input_names=["image"],
                      output_names=["p_radiograph"], dynamic_axes={"image": {0: "n"}, "p_radiograph": {0: "n"}})
    meta = {"role": "cardiac_validity", "input_size": [3, a.size, a.size], "inputs": ["image"],
            "outputs": ["p_radiograph"], "version": CARDIAC_VERSION,
            "params": {"positives": a.n, "negatives": a.n, "epochs": a.epochs, "seed": a.seed}}
    with open(os.path.join(a.models, "cardiac_validity.meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    ref_dir = os.path.join(a.models, "reference")
    os.makedirs(ref_dir, exist_ok=True)
    xr = X[:2].float() / 255.0
    xr.numpy().astype("<f4").tofile(os.path.join(ref_dir, f"validity_input_{a.size}.f32"))
    with torch.no_grad():
        pr = net(xr)
    with open(os.path.join(ref_dir, "cardiac_validity.json"), "w") as f:
        json.dump({"model": "cardiac_validity.onnx", "input": f"validity_input_{a.size}.f32",
                   "input_shape": [2, 3, a.size, a.size], "outputs": {"p_radiograph": pr.numpy().ravel().tolist()}}, f)
    print("exported", path, flush=True)


if __name__ == "__main__":
    main()
