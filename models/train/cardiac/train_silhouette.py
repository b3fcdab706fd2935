#!/usr/bin/env python3
"""The cardiac silhouette model: a segmentation of the heart's projected
silhouette, trained on the simulator's exact heart mask (cardiac/dataset.py
--heart-masks), and the heart axes measured on it as the spec defines them.

The network is the landmark members' MobileNetV2 U-Net (cardiac/mobilenet.py) with
a one-channel head: image [N,1,S,S] in 0..1 -> the heart's probability
[N,1,S,S] (logits at S/4, upsampled bilinearly inside the graph). It starts
from a shipped landmark member (--init-onnx), whose encoder already reads
radiographs, with the BatchNorm statistics fixed.

The axes (axes_from_mask, mirrored in Go by engine/cardiac silhouette.go):
the long axis runs from the carina (heart_top, which the silhouette does not
show; the landmark members give it) to the silhouette's point farthest from
it; the short axis is the widest chord perpendicular to it between 25 % and
80 % of its length: the rule xraysim.heart_landmarks applies to the exact
silhouette.

  python3 -m cardiac.train_silhouette train --data xs.npz x2.npz --init-onnx ../cardiac_landmark_1.onnx \\
      --deadline T --out ck/sil.pt
  python3 -m cardiac.train_silhouette eval --dev dev_xs.npz dev_x2.npz dev_ph.npz --sil ck/sil.pt \\
      --members ../cardiac_landmark_{1..5}.onnx [--heart-only ck/h_1.pt]
  python3 -m cardiac.train_silhouette pack --out sil16.pt ck/sil.pt
  python3 -m cardiac.train_silhouette export --out ../cardiac_silhouette.onnx sil16.pt

eval prints, per development set, the heart VHS error over the true vertebral
unit (so the column's error is left out) of the members' heart points, of
the silhouette with the members' carina, and of the silhouette with the true
carina; the figure that chooses between heart routes.
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

from cardiac import mobilenet
from sim import phantom
from cardiac import train_landmarks as T

L = {k: i for i, k in enumerate(phantom.LANDMARKS)}


class SilhouetteNet(nn.Module):
    """MobileLandmarkNet with one output channel, upsampled to the input size."""

    def __init__(self, width=32):
        super().__init__()
        self.net = mobilenet.MobileLandmarkNet(T.K, width)
        self.net.head = nn.Conv2d(width, 1, 1)

    def logits(self, x):
        """Logits at S/4."""
        return self.net(x)

    def forward(self, x):
        lo = self.net(x)
        return torch.sigmoid(F.interpolate(lo, size=x.shape[-2:], mode="bilinear", align_corners=False))


def build(width, init_onnx, dev):
    """A silhouette net whose encoder and decoder come from a landmark member."""
    s = SilhouetteNet(width)
    if init_onnx:
        donor = mobilenet.MobileLandmarkNet(T.K, width)
        T.init_from_onnx(donor, init_onnx)
        head = s.net.head
        s.net = donor
        s.net.head = head
    with torch.no_grad():
        s.net.head.weight.mul_(0.1)
        s.net.head.bias.fill_(-2.0)
    return s.to(dev)


def load(paths, dev, masks=True):
    """Images uint8 [N,S,S], landmarks [N,K,2], heart masks uint8 [N,S,S]
    (where the files have them) on dev; images without a mask left out."""
    ds = [np.load(p) for p in paths]
    X = np.concatenate([d["images"] for d in ds])
    Y = np.concatenate([d["landmarks"] for d in ds]).astype(np.float32)
    H = None
    if masks:
        H = np.concatenate([d["heart"] for d in ds])
        ok = np.concatenate([d["heart_ok"] for d in ds])
        X, Y, H = X[ok], Y[ok], H[ok]
        H = torch.from_numpy(H).to(dev)
    return torch.from_numpy(X).to(dev), torch.from_numpy(Y).to(dev), H


def joint_affine(x, m, g, max_rot_deg, zoom_out):
    """Flip, rotation, scale, shift and zoom-out applied alike to images x
    and masks m ([N,1,S,S] each); a zoomed-out border gets a random fill in
    x and 0 in m."""
    n = x.shape[0]
    dev = x.device
    flip = T._rand(g, n) < 0.5
    x = torch.where(flip.view(n, 1, 1, 1), x.flip(-1), x)
    m = torch.where(flip.view(n, 1, 1, 1), m.flip(-1), m)
    ang = (T._rand(g, n) * 2 - 1) * math.radians(max_rot_deg)
    sc = torch.exp((T._rand(g, n) * 2 - 1) * 0.18)
    far = T._rand(g, n) < zoom_out
    sc = torch.where(far, torch.exp(-0.15 - 0.5 * T._rand(g, n)), sc)
    tx = (T._rand(g, n) * 2 - 1) * 0.12
    ty = (T._rand(g, n) * 2 - 1) * 0.12
    c, s_ = torch.cos(ang), torch.sin(ang)
    fwd = torch.stack([torch.stack([sc * c, -sc * s_, tx], -1), torch.stack([sc * s_, sc * c, ty], -1)], 1)
    Ainv = torch.linalg.inv(fwd[:, :, :2])
    inv = torch.cat([Ainv, -(Ainv @ fwd[:, :, 2:])], 2)
    grid = F.affine_grid(inv, x.shape, align_corners=False)
    xa = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    ma = F.grid_sample(m, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    cover = F.grid_sample(torch.ones_like(x), grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    kind = torch.randint(0, 3, (n, 1, 1, 1), generator=g, device=dev)
    fill = torch.where(kind == 0, torch.zeros(n, 1, 1, 1, device=dev),
                       torch.where(kind == 1, torch.ones(n, 1, 1, 1, device=dev), T._rand(g, n, 1, 1, 1)))
    return xa + fill * (1 - cover), ma


def loss_fn(logits, m):
    """BCE plus soft Dice at half the input size."""
    h = m.shape[-1] // 2
    lo = F.interpolate(logits, size=(h, h), mode="bilinear", align_corners=False)
    t = F.avg_pool2d(m, 2)
    bce = F.binary_cross_entropy_with_logits(lo, t)
    p = torch.sigmoid(lo)
    dice = 1 - (2 * (p * t).sum((1, 2, 3)) + 1) / (p.sum((1, 2, 3)) + t.sum((1, 2, 3)) + 1)
    return bce + dice.mean()


def train_cmd(a):
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    X, Y, H = load(a.data, dev)
    net = build(a.width, a.init_onnx, dev).to(memory_format=torch.channels_last)
    net.train()
    T.freeze_bn(net)
    enc = list(net.net.enc.parameters())
    ids = {id(p) for p in enc}
    dec = [p for p in net.parameters() if id(p) not in ids]
    opt = torch.optim.AdamW([{"params": enc, "scale": a.enc_lr}, {"params": dec, "scale": 1.0}], lr=1e-4,
                            weight_decay=1e-4)
    g = torch.Generator(device=dev).manual_seed(a.seed)
    t0 = time.time()
    deadline = a.deadline if a.deadline else t0 + a.minutes * 60
    if deadline <= t0 + 1:
        raise SystemExit(f"train: the deadline passed {t0 - deadline:.0f} s before training could start")
    n = len(X)
    print(f"silhouette {a.out}: {n} training images, {(deadline - t0) / 60:.1f} min on {dev}", flush=True)
    step, lval = 0, float("nan")

    def save():
        state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        torch.save({"state": state, "width": a.width, "size": X.shape[-1], "seed": a.seed, "arch": "silhouette",
                    "init_onnx": os.path.basename(a.init_onnx or ""), "step": step, "loss": lval,
                    "minutes": round((time.time() - t0) / 60, 2), "max_rot_deg": a.max_rot,
                    "zoom_out": a.zoom_out, "extra_aug": a.extra}, a.out)

    while True:
        pr = (time.time() - t0) / (deadline - t0)
        if pr >= 1.0 or (a.steps and step >= a.steps):
            break
        lr = a.max_lr * (min(1.0, pr / 0.04) if pr < 0.04 else 0.5 * (1 + math.cos(math.pi * (pr - 0.04) / 0.96)))
        for grp in opt.param_groups:
            grp["lr"] = max(lr, a.max_lr * 1e-3) * grp["scale"]
        idx = torch.randint(n, (a.batch,), generator=g, device=dev)
        x = X[idx].float().unsqueeze(1) / 255.0
        m = H[idx].float().unsqueeze(1) / 255.0
        x, m = joint_affine(x, m, g, a.max_rot, a.zoom_out)
        x, _ = T.strong_augment(x, Y[idx], g, extra=a.extra, geometric=False)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = net.logits(x.contiguous(memory_format=torch.channels_last))
        loss = loss_fn(logits.float(), m)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        lval = float(loss.item()) if step % a.every == 0 else lval
        if step % a.every == 0:
            print(f"step {step} progress {pr:.2f} lr {lr:.5f} loss {lval:.4f} elapsed {time.time() - t0:.0f}s",
                  flush=True)
            save()
        step += 1
    save()
    print(f"final step {step} loss {lval:.4f}", flush=True)


def axes_from_mask(prob, top, up=2, thr=0.5):
    """The heart's long and short axes, in the mask's pixels, from its
    probability map prob [S,S] (pixel centres) and the carina top (x, y):
    (bottom, right, left) points, or None for an empty or degenerate mask.
    The map is upsampled up times (bilinear) so the edges fall between
    pixels; the rule is xraysim.heart_landmarks'."""
    p = torch.as_tensor(prob, dtype=torch.float32)[None, None]
    if up > 1:
        p = F.interpolate(p, scale_factor=up, mode="bilinear", align_corners=False)
    p = p[0, 0].numpy()
    ys, xs = np.nonzero(p > thr)
    if len(xs) < 50:
        return None
    px, py = (xs + 0.5) / up, (ys + 0.5) / up
    d2 = (px - top[0]) ** 2 + (py - top[1]) ** 2
    k = int(np.argmax(d2))
    bottom = np.array([px[k], py[k]])
    u = bottom - np.asarray(top, float)
    Lax = float(np.linalg.norm(u))
    if Lax < 4:
        return None
    u /= Lax
    nrm = np.array([-u[1], u[0]])
    if nrm[0] > 0:
        nrm = -nrm
    a = (px - top[0]) * u[0] + (py - top[1]) * u[1]
    b = (px - top[0]) * nrm[0] + (py - top[1]) * nrm[1]
    res = 1.0 / up
    sel = (a > 0.25 * Lax) & (a < 0.8 * Lax)
    if sel.sum() < 20:
        return None
    bins = np.floor(a[sel] / res).astype(int)
    bv = b[sel]
    order = np.argsort(bins, kind="stable")
    bins, bv = bins[order], bv[order]
    uniq, idx = np.unique(bins, return_index=True)
    bmax = np.maximum.reduceat(bv, idx)
    bmin = np.minimum.reduceat(bv, idx)
    j = int(np.argmax(bmax - bmin))
    am = (uniq[j] + 0.5) * res
    top = np.asarray(top, float)
    return bottom, top + u * am + nrm * bmax[j], top + u * am + nrm * bmin[j]


def soft_share(prob, lo=0.2, hi=0.8):
    """The silhouette's own doubt U: the share of its pixels (p > lo) that
    are soft (lo < p < hi). 0 for a crisp map, 1 for one soft everywhere,
    and 1 for an empty one (no silhouette is no certainty).
    experiments/2026-11-28-silhouette-uncertainty.md."""
    p = np.asarray(prob)
    sup = int((p > lo).sum())
    if sup == 0:
        return 1.0
    return float(((p > lo) & (p < hi)).sum()) / sup


def heart_sum(top, bottom, right, left):
    """Long axis plus short axis."""
    return np.linalg.norm(np.asarray(bottom) - top) + np.linalg.norm(np.asarray(right) - left)


def carina_errors(pred, truth):
    """Each image's carina (heart_top) distance from the truth, in true
    vertebral units, for landmark arrays pred and truth [N,K,2] in the same
    pixels: the figure that shows whether a route reads the carina or
    places it from a prior (experiments/2026-11-28-carina-world3.md)."""
    v = np.linalg.norm(truth[:, L["Vertebra A"]] - truth[:, L["Vertebra B"]], axis=-1) / 6
    return np.linalg.norm(pred[:, L["heart_top"]] - truth[:, L["heart_top"]], axis=-1) / v


def heart_sums(c):
    """heart_sum of each landmark array in c [N,K,2]."""
    return np.array([heart_sum(p[L["heart_top"]], p[L["heart_bottom"]], p[L["heart_right"]], p[L["heart_left"]])
                     for p in c])


def members_predict(paths, X, dev, width=32, heart_only=None):
    """Each member's landmarks [M,N,K,2] (letterbox units) on X: ONNX files
    loaded into nets, checkpoints (.pt) loaded as they are."""
    from cardiac import train_gpu
    nets = []
    for p in paths:
        if p.endswith(".onnx"):
            net = mobilenet.MobileLandmarkNet(T.K, width)
            T.init_from_onnx(net, p)
            nets.append(net.to(dev))
        else:
            nets.append(train_gpu.load_ckpt(p, dev))
    return train_gpu.predict(nets, X)


def eval_cmd(a):
    dev = torch.device(a.device)
    sil = None
    if a.sil:
        ck = torch.load(a.sil, map_location="cpu")
        sil = SilhouetteNet(ck["width"])
        sil.load_state_dict({k: v.float() for k, v in ck["state"].items()})
        sil = sil.to(dev).eval()
    doubt = {}  # per set: the silhouette's doubt U and its error (members' carina)
    for path in a.dev:
        X, Y, _ = load([path], dev, masks=False)
        S = X.shape[-1]
        y = Y.cpu().numpy() * S
        v = np.linalg.norm(y[:, L["Vertebra A"]] - y[:, L["Vertebra B"]], axis=-1) / 6
        truth = heart_sums(y) / v
        rows = {}
        d = np.load(path)
        if "heart" in d:
            # the rule on the simulator's exact silhouette: the geometry's own error
            ok = d["heart_ok"]
            rows["exact_mask"] = np.array([heart_sum(y[i, L["heart_top"]], *ax) / v[i]
                                           if ok[i] and (ax := axes_from_mask(d["heart"][i] / 255.0,
                                                                              y[i, L["heart_top"]])) is not None
                                           else np.nan for i in range(len(y))])
        mem_all = members_predict(a.members, X, dev) * S
        mem = mem_all.mean(0)
        if len(mem_all) > 1:
            rows["member_1"] = heart_sums(mem_all[0]) / v
        rows["members"] = heart_sums(mem) / v
        carinas = {"members": carina_errors(mem, y)}
        if a.heart_only:
            ho = members_predict(a.heart_only, X, dev).mean(0) * S
            rows["heart_only"] = heart_sums(ho) / v
            carinas["heart_only"] = carina_errors(ho, y)
        if sil is not None:
            probs = []
            with torch.no_grad():
                for s in range(0, len(X), 64):
                    probs.append(sil(X[s:s + 64].float().unsqueeze(1) / 255.0).float().cpu().numpy()[:, 0])
            probs = np.concatenate(probs)
            top_m, top_t = mem[:, L["heart_top"]], y[:, L["heart_top"]]
            ax_m = [axes_from_mask(pm, top_m[i]) for i, pm in enumerate(probs)]
            ax_t = [axes_from_mask(pm, top_t[i]) for i, pm in enumerate(probs)]

            def nan_or(axes, f):
                return np.array([np.nan if ax is None else f(i, ax) for i, ax in enumerate(axes)])
            rows["sil_members_carina"] = nan_or(ax_m, lambda i, ax: heart_sum(top_m[i], *ax) / v[i])
            rows["sil_true_carina"] = nan_or(ax_t, lambda i, ax: heart_sum(top_t[i], *ax) / v[i])
            # the engine's hybrid (docs/cardiac.md): the members' long axis,
            # the silhouette's short axis from the members' carina
            rows["hybrid"] = nan_or(ax_m, lambda i, ax: heart_sum(top_m[i], mem[i, L["heart_bottom"]], ax[1], ax[2]) / v[i])
            doubt[os.path.basename(path)] = (np.array([soft_share(pm) for pm in probs]),
                                             np.abs(rows["sil_members_carina"] - truth))
        print(f"{os.path.basename(path)}: {len(X)} images; heart VHS error over the true v")
        for name, vhs in rows.items():
            e = np.abs(vhs - truth)
            ok = ~np.isnan(e)
            e = e[ok]
            if len(e) == 0:
                print(f"  {name:20s} n    0", flush=True)
                continue
            print(f"  {name:20s} n {ok.sum():4d} MAE {e.mean():.3f} median {np.median(e):.3f} "
                  f"within0.5 {np.mean(e <= 0.5):.3f} within1.0 {np.mean(e <= 1.0):.3f} p95 {np.quantile(e, 0.95):.3f} "
                  f"worst {e.max():.3f} bias {np.nanmean(vhs - truth):+.3f}", flush=True)
        for name, ce in carinas.items():
            print(f"  carina {name:13s} mean error {ce.mean():.3f} v, over 1 v {int((ce > 1).sum())} of {len(ce)}",
                  flush=True)
    if doubt:
        print_doubt(doubt, a.gate_set)


def print_doubt(doubt, gate_set):
    """The silhouette's doubt as its gate: per set, Spearman(U, error), and
    the sets' figures at the U that keeps half of gate_set (the set the
    rule names; the first set when it is not among them)."""
    from scipy.stats import spearmanr
    name = gate_set if gate_set in doubt else next(iter(doubt))
    u, e = doubt[name]
    ok = ~np.isnan(e)
    thr = float(np.median(u[ok]))
    print(f"silhouette doubt U (soft share): gate at U <= {thr:.4f}, half of {name}")
    for n, (u, e) in doubt.items():
        ok = ~np.isnan(e)
        rho = spearmanr(u[ok], e[ok])[0] if ok.sum() > 2 else float("nan")
        keep = ok & (u <= thr)
        k = e[keep]
        worst = k.max() if len(k) else float("nan")
        mae = k.mean() if len(k) else float("nan")
        print(f"  {n:20s} Spearman(U, error) {rho:+.3f} | kept {keep.sum():4d} of {ok.sum():4d} "
              f"MAE {mae:.3f} worst {worst:.3f} over1.5 {int((k > 1.5).sum())}", flush=True)


def pack_cmd(a):
    ck = torch.load(a.checkpoint, map_location="cpu")
    ck["state"] = {k: (v.half() if v.is_floating_point() else v) for k, v in ck["state"].items()}
    torch.save(ck, a.out)


def export_cmd(a):
    ck = torch.load(a.checkpoint, map_location="cpu")
    net = SilhouetteNet(ck["width"])
    net.load_state_dict({k: v.float() for k, v in ck["state"].items()})
    net.eval()
    S = ck.get("size", 224)
    x = torch.zeros(1, 1, S, S)
    torch.onnx.export(net, x, a.out, input_names=["image"], output_names=["heart"],
                      dynamic_axes={"image": {0: "n"}, "heart": {0: "n"}}, opset_version=13)
    meta = {"role": "cardiac_silhouette", "input_size": [1, S, S], "inputs": ["image"], "outputs": ["heart"],
            "version": a.version,
            "params": {"arch": "mnv2-unet-silhouette", "width": ck["width"], "steps": ck["step"],
                       "init_onnx": ck.get("init_onnx", ""), "training_data": a.training_data}}
    side = a.out[: -len(".onnx")] + ".meta.json"
    with open(side, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", a.out, "and", side)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", nargs="+", required=True)
    t.add_argument("--init-onnx")
    t.add_argument("--out", required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--width", type=int, default=32)
    t.add_argument("--batch", type=int, default=48)
    t.add_argument("--max-lr", type=float, default=1e-3)
    t.add_argument("--enc-lr", type=float, default=0.3)
    t.add_argument("--max-rot", type=float, default=30.0)
    t.add_argument("--zoom-out", type=float, default=0.3)
    t.add_argument("--extra", action="store_true")
    t.add_argument("--minutes", type=float, default=5.0)
    t.add_argument("--deadline", type=float, default=0.0)
    t.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: the clock alone)")
    t.add_argument("--every", type=int, default=200)
    t.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    e = sub.add_parser("eval")
    e.add_argument("--dev", nargs="+", required=True)
    e.add_argument("--sil")
    e.add_argument("--members", nargs="+", required=True)
    e.add_argument("--heart-only", nargs="*", default=[])
    e.add_argument("--gate-set", default="dev_ph.npz", help="the set whose median U gates (the doubt figures)")
    e.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p = sub.add_parser("pack")
    p.add_argument("--out", required=True)
    p.add_argument("checkpoint")
    x = sub.add_parser("export")
    x.add_argument("--out", required=True, help="e.g. ../cardiac_silhouette.onnx; the sidecar .meta.json goes beside it")
    x.add_argument("--version", required=True, help="the model's version, naming its synthetic training data")
    x.add_argument("--training-data", default="synthetic (xraysim.py, both worlds)",
                   help="the synthetic data it was trained on, for the sidecar (e.g. the simulator's first world only)")
    x.add_argument("checkpoint")
    a = ap.parse_args()
    {"train": train_cmd, "eval": eval_cmd, "pack": pack_cmd, "export": export_cmd}[a.cmd](a)


if __name__ == "__main__":
    main()
