#!/usr/bin/python3
"""Train one model of the PoP family (issue 14) on pop_traindata.py arrays,
on the CPU, for a fixed number of minutes, and export it to ONNX with its
sidecar (NAME.meta.json) and an export reference (models/reference/NAME.json
and an input .f32 file) that engine/pop's tests replay through ONNX Runtime.

SYNTHETIC DATA ONLY (pop_variety.py composites).

Models (docs/pop.md, docs/model-contract.md):
  corners_a, corners_b  frame 3x160x160 (RGB/255, stretched) -> points 8x2
                        (screen TL,TR,BR,BL, displayed image TL,TR,BR,BL as
                        shares of width and height, from a soft-argmax over
                        40x40 heatmaps that span [-0.1, 1.1]) and spread 8
                        (the heatmap's standard deviation, shares)
  presence              frame 3x160x160 -> p_screen
  viewport              rectified screen 1x128x128 (grey/255) -> points 4x2
                        (displayed image corners in the rectified screen,
                        shares) and spread 4
  quality               rectified displayed image 1x128x128 -> problems 3
                        (probabilities: blurred, glare over the heart, moire)

The presence model can take more frames from --extra files (x160 and
present arrays only, e.g. pop_plain.py's plain-file negatives).

Usage: pop_train.py --model corners_a --data data/pop_train.npz --minutes 15 --out ../
Always run it with nice -n 19; it uses one thread unless --threads says otherwise.
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VERSION = "pop-v1.0.0-synthetic-composites.3"
LO, HI = -0.1, 1.1  # heatmap span, shares of the image
FLIP8 = [1, 0, 3, 2, 5, 4, 7, 6]
FLIP4 = [1, 0, 3, 2]


def cbr(i, o, s=1):
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class SoftArgmax(nn.Module):
    """Heatmap logits N x K x h x w -> points N x K x 2 (shares, in [LO, HI])
    and spread N x K (standard deviation, shares)."""

    def forward(self, hm):
        n, k, h, w = hm.shape
        p = F.softmax(hm.reshape(n, k, h * w), -1).reshape(n, k, h, w)
        xs = LO + (HI - LO) * (torch.arange(w, dtype=hm.dtype) + 0.5) / w
        ys = LO + (HI - LO) * (torch.arange(h, dtype=hm.dtype) + 0.5) / h
        px, py = p.sum(2), p.sum(3)
        mx, my = (px * xs).sum(-1), (py * ys).sum(-1)
        vx = (px * (xs - mx[..., None]) ** 2).sum(-1)
        vy = (py * (ys - my[..., None]) ** 2).sum(-1)
        return torch.stack([mx, my], -1), torch.sqrt(vx + vy + 1e-8)


class HeatNet(nn.Module):
    """A small encoder-decoder: stride-2 stages to 1/16, two skip merges
    back to 1/4, K heatmaps, soft-argmax."""

    def __init__(self, cin, k, w=(16, 32, 64, 96), d=32):
        super().__init__()
        self.s1 = cbr(cin, w[0], 2)  # 1/2
        self.s2 = nn.Sequential(cbr(w[0], w[1], 2), cbr(w[1], w[1]))  # 1/4
        self.s3 = nn.Sequential(cbr(w[1], w[2], 2), cbr(w[2], w[2]))  # 1/8
        self.s4 = nn.Sequential(cbr(w[2], w[3], 2), cbr(w[3], w[3]), cbr(w[3], w[3]))  # 1/16
        self.l4 = nn.Conv2d(w[3], d, 1)
        self.l3 = nn.Conv2d(w[2], d, 1)
        self.l2 = nn.Conv2d(w[1], d, 1)
        self.m3 = cbr(d, d)
        self.m2 = cbr(d, d)
        self.head = nn.Conv2d(d, k, 1)
        self.sa = SoftArgmax()

    def forward(self, x):
        a = self.s2(self.s1(x))
        b = self.s3(a)
        c = self.s4(b)
        u = self.m3(F.interpolate(self.l4(c), scale_factor=2.0, mode="nearest") + self.l3(b))
        u = self.m2(F.interpolate(u, scale_factor=2.0, mode="nearest") + self.l2(a))
        hm = self.head(u)
        pts, spread = self.sa(hm)
        return pts, spread, hm


class ClsNet(nn.Module):
    def __init__(self, cin, k, w=(12, 24, 48, 64)):
        super().__init__()
        self.f = nn.Sequential(cbr(cin, w[0], 2), cbr(w[0], w[1], 2), cbr(w[1], w[1]), cbr(w[1], w[2], 2), cbr(w[2], w[2]),
                               cbr(w[2], w[3], 2), cbr(w[3], w[3]))
        self.fc = nn.Linear(2 * w[3], k)

    def forward(self, x):
        f = self.f(x)
        f = torch.cat([f.mean((2, 3)), f.amax((2, 3))], 1)
        return torch.sigmoid(self.fc(f))


SPECS = {
    "corners_a": dict(kind="heat", cin=3, k=8, w=(16, 32, 64, 96), seed=1401, size=160, outputs=["points", "spread"]),
    "corners_b": dict(kind="heat", cin=3, k=8, w=(12, 24, 56, 80), seed=1402, size=160, outputs=["points", "spread"]),
    "presence": dict(kind="cls", cin=3, k=1, w=(12, 24, 48, 64), seed=1403, size=160, outputs=["p_screen"]),
    "viewport": dict(kind="heat", cin=1, k=4, w=(12, 24, 48, 64), seed=1404, size=128, outputs=["points", "spread"]),
    "quality": dict(kind="cls", cin=1, k=3, w=(12, 24, 48, 64), seed=1405, size=128, outputs=["problems"]),
}


def gauss_target(pts, h, w, sigma=1.2):
    """Soft targets for the heatmap: a Gaussian of sigma cells at each point."""
    cx = (pts[..., 0] - LO) / (HI - LO) * w - 0.5
    cy = (pts[..., 1] - LO) / (HI - LO) * h - 0.5
    xs = torch.arange(w, dtype=torch.float32)
    ys = torch.arange(h, dtype=torch.float32)
    gx = torch.exp(-(xs - cx[..., None]) ** 2 / (2 * sigma ** 2))
    gy = torch.exp(-(ys - cy[..., None]) ** 2 / (2 * sigma ** 2))
    g = gy[..., :, None] * gx[..., None, :]
    return g / g.sum((-1, -2), keepdim=True).clamp_min(1e-8)


def batches(name, z, idx, rng, bs, train):
    for s in range(0, len(idx), bs):
        b = idx[s:s + bs]
        if name in ("corners_a", "corners_b", "presence"):
            x = z["x160"][b].astype(np.float32) / 255.0
            y = z["pts"][b].copy() if name != "presence" else z["present"][b].copy()
        elif name == "viewport":
            x = z["scr"][b][:, None].astype(np.float32) / 255.0
            y = z["vp"][b].reshape(-1, 4, 2).copy()
        else:
            x = z["disp"][b][:, None].astype(np.float32) / 255.0
            y = z["qual"][b].copy()
        if train:
            flip = rng.random(len(b)) < 0.5
            x[flip] = x[flip][..., ::-1]
            if name in ("corners_a", "corners_b"):
                y[flip] = y[flip][:, FLIP8]
                y[flip, :, 0] = 1 - y[flip, :, 0]
            elif name == "viewport":
                y[flip] = y[flip][:, FLIP4]
                y[flip, :, 0] = 1 - y[flip, :, 0]
            g = rng.uniform(0.75, 1.25, (len(b), 1, 1, 1)).astype(np.float32)
            o = rng.uniform(-0.08, 0.08, (len(b), 1, 1, 1)).astype(np.float32)
            x = np.clip(x * g + o, 0, 1)
        yield torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(np.ascontiguousarray(y)).float()


def loss_fn(name, model, x, y):
    if SPECS[name]["kind"] == "heat":
        pts, spread, hm = model(x)
        n, k, h, w = hm.shape
        inside = ((y >= LO + 0.01) & (y <= HI - 0.01)).all(-1).float()
        yc = y.clamp(LO + 0.01, HI - 0.01)
        if name != "viewport":
            # No screen (negatives): no corner loss.
            inside = inside * (y.abs().sum((1, 2)) > 0).float()[:, None]
        tgt = gauss_target(yc, h, w)
        ce = -(tgt * F.log_softmax(hm.reshape(n, k, -1), -1).reshape(n, k, h, w)).sum((-1, -2))
        l1 = (pts - yc).abs().sum(-1)
        wsum = inside.sum().clamp_min(1)
        return ((ce + 20 * l1) * inside).sum() / wsum, (l1 * inside).sum() / wsum
    p = model(x)
    if name == "presence":
        p = p[:, 0]
    l = F.binary_cross_entropy(p.clamp(1e-6, 1 - 1e-6), y)
    return l, ((p > 0.5).float() != y).float().mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(SPECS), required=True)
    ap.add_argument("--data", default="data/pop_train.npz")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="..", help="models directory")
    ap.add_argument("--name", default="", help="file name stem (default pop_MODEL)")
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--init", default="", help="continue from this state dict (checkpoints/NAME.pt)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--extra", action="append", default=[], metavar="NPZ",
                    help="presence only: more frames (x160, present), e.g. pop_plain.py negatives")
    a = ap.parse_args()
    if a.extra and a.model != "presence":
        raise SystemExit("--extra is for the presence model only")
    torch.set_num_threads(a.threads)
    spec = SPECS[a.model]
    torch.manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    z = dict(np.load(a.data, allow_pickle=True))
    if a.extra:
        z = {"x160": z["x160"], "present": z["present"], "exclude": z.get("exclude", "")}
        for path in a.extra:
            e = np.load(path, allow_pickle=True)
            z["x160"] = np.concatenate([z["x160"], e["x160"]])
            z["present"] = np.concatenate([z["present"], e["present"].astype(z["present"].dtype)])
    n = len(z["present"])
    idx = np.arange(n)
    if a.model in ("viewport", "quality"):
        idx = idx[z["present"] > 0.5]
    rng.shuffle(idx)
    nval = max(50, len(idx) // 20)
    val, tr = idx[:nval], idx[nval:]
    if spec["kind"] == "heat":
        model = HeatNet(spec["cin"], spec["k"], spec["w"], 32 if spec["cin"] == 3 else 24)
    else:
        model = ClsNet(spec["cin"], spec["k"], spec["w"])
    if a.init:
        model.load_state_dict(torch.load(a.init))
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    budget = a.minutes * 60
    t0 = time.time()
    step, ep = 0, 0
    name = a.name or f"pop_{a.model}"
    while time.time() - t0 < budget:
        model.train()
        perm = rng.permutation(tr)
        tl, tm, nb = 0.0, 0.0, 0
        for x, y in batches(a.model, z, perm, rng, a.bs, True):
            frac = min(1.0, (time.time() - t0) / budget)
            lr = a.lr * (min(1.0, step / 100)) * (0.5 * (1 + math.cos(math.pi * frac)) * 0.97 + 0.03)
            for g in opt.param_groups:
                g["lr"] = lr
            l, m = loss_fn(a.model, model, x, y)
            opt.zero_grad()
            l.backward()
            opt.step()
            tl, tm, nb, step = tl + float(l), tm + float(m), nb + 1, step + 1
            if time.time() - t0 >= budget:
                break
        model.eval()
        with torch.no_grad():
            vm = [float(loss_fn(a.model, model, x, y)[1]) for x, y in batches(a.model, z, val, rng, 64, False)]
        ep += 1
        print(f"{name} epoch {ep} step {step} {time.time() - t0:.0f}s loss {tl / max(nb, 1):.4f} train-metric {tm / max(nb, 1):.4f} val-metric {np.mean(vm):.4f}", flush=True)
    os.makedirs("checkpoints", exist_ok=True)
    torch.save(model.state_dict(), os.path.join("checkpoints", name + ".pt"))
    export(a, spec, model, name, z, val, float(np.mean(vm)), step)


class Export(nn.Module):
    def __init__(self, m, kind):
        super().__init__()
        self.m, self.kind = m, kind

    def forward(self, x):
        if self.kind == "heat":
            p, s, _ = self.m(x)
            return p, s
        return self.m(x)


def export(a, spec, model, name, z, val, vmetric, steps):
    model.eval()
    e = Export(model, spec["kind"])
    c, s = spec["cin"], spec["size"]
    dummy = torch.zeros(1, c, s, s)
    path = os.path.join(a.out, name + ".onnx")
    torch.onnx.export(e, dummy, path, input_names=["image"], output_names=spec["outputs"],
                      dynamic_axes={"image": {0: "n"}, **{o: {0: "n"} for o in spec["outputs"]}}, opset_version=13)
    # Export reference: two validation inputs through PyTorch (eval mode:
    # torch.onnx.export restores the wrapper's training flag, which a new
    # Module has set, and that would put BatchNorm back in training mode).
    e.eval()
    x, _ = next(batches(a.model, z, val[:2], np.random.default_rng(0), 2, False))
    with torch.no_grad():
        outs = e(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    refdir = os.path.join(a.out, "reference")
    os.makedirs(refdir, exist_ok=True)
    inp = f"{name}_input_{s}.f32"
    x.numpy().astype("<f4").tofile(os.path.join(refdir, inp))
    with open(os.path.join(refdir, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": inp, "input_shape": list(x.shape),
                   "outputs": {o: [float(v) for v in t.reshape(-1)] for o, t in zip(spec["outputs"], outs)}}, f)
    meta = {"role": name, "input_size": [c, s, s], "inputs": ["image"], "outputs": spec["outputs"], "version": VERSION,
            "params": {"samples": int(len(z["present"])), "steps": steps, "minutes": a.minutes, "continued_from": a.init, "seed": spec["seed"],
                       "extra": [os.path.basename(p) for p in a.extra], "negatives": int((z["present"] < 0.5).sum()),
                       "val_metric": round(vmetric, 5), "excluded_families": str(z.get("exclude", "")),
                       "heatmap_span": [LO, HI] if spec["kind"] == "heat" else None}}
    with open(os.path.join(a.out, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"exported {path}")


if __name__ == "__main__":
    main()
