#!/usr/bin/python3
"""Train one model of the PoP family (issue 14) on pop/traindata.py arrays,
on the CPU, for a fixed number of minutes, and export it to ONNX with its
sidecar (NAME.meta.json) and an export reference (models/reference/NAME.json
and an input .f32 file) that engine/pop's tests replay through ONNX Runtime.

SYNTHETIC DATA ONLY (pop/variety.py composites).

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
present arrays only, e.g. pop/plain.py's plain-file negatives).

Usage: python3 -m pop.train --model corners_a --data data/pop_train.npz --minutes 15 --out ../
Always run it with nice -n 19; it uses one thread unless --threads says otherwise.

On a lent GPU (train_pop_gpu.sh): --device cuda [--amp] keeps the arrays
and the augmentation on the device; --deadline UNIX_TIME ends training at
a fixed wall time instead of after --minutes; --pack FILE writes the state
dict, the export parameters and the two export-reference inputs to FILE
instead of exporting (pop/unpack.py exports them later, on any machine,
as this script's export does). --keep-best exports the state at the
lowest validation metric instead of the last one. --init takes a checkpoint (.pt) or a
shipped ONNX file (.onnx: its BatchNorm-folded weights are unfolded and
the BatchNorm statistics recalibrated on training frames, so the network
computes what the ONNX file computes).
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

VERSION = "pop-v1.0.0-synthetic-composites.9"
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
        if hm.dtype != torch.float32:  # bf16 autocast: the soft-argmax in float32
            hm = hm.float()
        p = F.softmax(hm.reshape(n, k, h * w), -1).reshape(n, k, h, w)
        xs = LO + (HI - LO) * (torch.arange(w, dtype=hm.dtype, device=hm.device) + 0.5) / w
        ys = LO + (HI - LO) * (torch.arange(h, dtype=hm.dtype, device=hm.device) + 0.5) / h
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
    xs = torch.arange(w, dtype=torch.float32, device=pts.device)
    ys = torch.arange(h, dtype=torch.float32, device=pts.device)
    gx = torch.exp(-(xs - cx[..., None]) ** 2 / (2 * sigma ** 2))
    gy = torch.exp(-(ys - cy[..., None]) ** 2 / (2 * sigma ** 2))
    g = gy[..., :, None] * gx[..., None, :]
    return g / g.sum((-1, -2), keepdim=True).clamp_min(1e-8)


GAMMA = (0.6, 1.7)  # --strong: gamma range (log-uniform)
CAST = 0.15  # --strong: per-channel gain 1 +- CAST (a white-balance cast)


def strong_photometric(x, rng):
    """--strong augmentation of a float batch N x C x H x W in [0, 1]: a
    gamma per frame (log-uniform in GAMMA: exposure and display curves,
    dim or bright surroundings) and, for colour frames, a gain per channel
    within 1 +- CAST (white-balance casts). Labels are unchanged."""
    n, c = x.shape[:2]
    gam = np.exp(rng.uniform(np.log(GAMMA[0]), np.log(GAMMA[1]), (n, 1, 1, 1))).astype(np.float32)
    x = np.power(np.clip(x, 0, 1), gam)
    if c == 3:
        x = x * rng.uniform(1 - CAST, 1 + CAST, (n, 3, 1, 1)).astype(np.float32)
    return x


LUMA = (0.299, 0.587, 0.114)  # --grey: luminance weights of R, G, B


def to_grey(x, rng, p):
    """--grey P: a share P of the colour frames of a float batch
    N x 3 x H x W turned grey by luminance (a camera's monochrome mode, a
    photo greyed before upload), the three channels equal. Applied after
    the colour cast, so a grey frame stays grey. Labels are unchanged."""
    if p <= 0 or x.shape[1] != 3:
        return x
    pick = rng.random(x.shape[0]) < p
    if pick.any():
        w = np.asarray(LUMA, np.float32).reshape(1, 3, 1, 1)
        x = x.copy()
        x[pick] = (x[pick] * w).sum(1, keepdims=True)
    return x


def batches(name, z, idx, rng, bs, train, strong=False, grey=0.0):
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
            if strong:
                x = strong_photometric(x, rng)
            x = to_grey(x, rng, grey)
            g = rng.uniform(0.75, 1.25, (len(b), 1, 1, 1)).astype(np.float32)
            o = rng.uniform(-0.08, 0.08, (len(b), 1, 1, 1)).astype(np.float32)
            x = np.clip(x * g + o, 0, 1)
        yield torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(np.ascontiguousarray(y)).float()


def torch_batches(name, t, idx, gen, bs, train, strong=False, grey=0.0):
    """batches() on the device: t holds the uint8 arrays (x, y) as tensors
    there, idx a LongTensor there; the same augmentation (flip, gain,
    offset, with strong the gamma and colour cast of strong_photometric,
    and with grey to_grey's share of grey frames), drawn with the torch
    generator gen."""
    xs, ys = t
    for s in range(0, len(idx), bs):
        b = idx[s:s + bs]
        x = xs[b].float() / 255.0
        if x.dim() == 3:
            x = x[:, None]
        y = ys[b].clone()
        if train:
            nb = len(b)
            flip = torch.rand(nb, generator=gen, device=x.device) < 0.5
            x = torch.where(flip[:, None, None, None], x.flip(-1), x)
            if name in ("corners_a", "corners_b", "viewport"):
                perm = FLIP8 if name != "viewport" else FLIP4
                yf = y[:, perm].clone()
                yf[..., 0] = 1 - yf[..., 0]
                y = torch.where(flip[:, None, None], yf, y)
            if strong:
                lo, hi = math.log(GAMMA[0]), math.log(GAMMA[1])
                gam = torch.exp(lo + (hi - lo) * torch.rand(nb, 1, 1, 1, generator=gen, device=x.device))
                x = x.clamp(0, 1).pow(gam)
                if x.shape[1] == 3:
                    x = x * (1 - CAST + 2 * CAST * torch.rand(nb, 3, 1, 1, generator=gen, device=x.device))
            if grey > 0 and x.shape[1] == 3:
                pick = torch.rand(nb, generator=gen, device=x.device) < grey
                w = torch.tensor(LUMA, device=x.device).view(1, 3, 1, 1)
                x = torch.where(pick[:, None, None, None], (x * w).sum(1, keepdim=True).expand_as(x), x)
            g = 0.75 + 0.5 * torch.rand(nb, 1, 1, 1, generator=gen, device=x.device)
            o = -0.08 + 0.16 * torch.rand(nb, 1, 1, 1, generator=gen, device=x.device)
            x = (x * g + o).clamp(0, 1)
        yield x, y


def device_arrays(name, z, device):
    """The model's input and target arrays of z as tensors on device."""
    if name in ("corners_a", "corners_b", "presence"):
        x = z["x160"]
        y = z["pts"] if name != "presence" else z["present"]
    elif name == "viewport":
        x, y = z["scr"], z["vp"].reshape(-1, 4, 2)
    else:
        x, y = z["disp"], z["qual"]
    return torch.from_numpy(np.ascontiguousarray(x)).to(device), torch.from_numpy(np.asarray(y, np.float32)).to(device)


def loss_fn(name, model, x, y, amp=False):
    if amp:  # forward in bf16, losses in float32 (BCE is not autocast-safe)
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            out = model(x)
        out = tuple(o.float() for o in out) if isinstance(out, tuple) else out.float()
    else:
        out = model(x)
    if SPECS[name]["kind"] == "heat":
        pts, spread, hm = out
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
    p = out
    if name == "presence":
        p = p[:, 0]
    l = F.binary_cross_entropy(p.clamp(1e-6, 1 - 1e-6), y)
    return l, ((p > 0.5).float() != y).float().mean()


class BestState:
    """The model's state at its lowest validation metric so far
    (--keep-best): offer() after each validation, restore() at the end."""

    def __init__(self):
        self.metric, self.step, self.state = float("inf"), None, None

    def offer(self, metric, step, model):
        """Keep a copy of model's state if metric is the lowest yet."""
        if metric < self.metric:  # False for NaN too
            self.metric, self.step = metric, step
            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def restore(self, model):
        """Load the kept state into model; False if nothing was kept."""
        if self.state is None:
            return False
        model.load_state_dict(self.state)
        return True


def build(spec):
    if spec["kind"] == "heat":
        return HeatNet(spec["cin"], spec["k"], spec["w"], 32 if spec["cin"] == 3 else 24)
    return ClsNet(spec["cin"], spec["k"], spec["w"])


def _varint(b, i):
    v, sh = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << sh
        sh += 7
        if c < 0x80:
            return v, i


def _fields(b):
    """Protocol-buffer fields of message b: (number, wire type, value)."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            ln, i = _varint(b, i)
            v, i = b[i:i + ln], i + ln
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wt} not handled")
        yield f, wt, v


def read_onnx(path):
    """The Conv and Gemm nodes of an ONNX file in graph order, each as
    (op_type, [initializer arrays of its inputs]), without the onnx
    package (ModelProto.graph = 7; GraphProto node = 1, initializer = 5;
    NodeProto input = 1, op_type = 4; TensorProto dims = 1, data_type = 2,
    float_data = 4, name = 8, raw_data = 9)."""
    with open(path, "rb") as f:
        b = f.read()
    graph = next(v for f, wt, v in _fields(b) if f == 7)
    inits, nodes = {}, []
    for f, wt, v in _fields(graph):
        if f == 5:
            dims, name, raw, fl, dt = [], "", None, [], 1
            for g, gwt, gv in _fields(v):
                if g == 1:
                    if gwt == 2:
                        j = 0
                        while j < len(gv):
                            d, j = _varint(gv, j)
                            dims.append(d)
                    else:
                        dims.append(gv)
                elif g == 2:
                    dt = gv
                elif g == 4:
                    fl.append(np.frombuffer(gv, "<f4") if gwt == 2 else np.frombuffer(gv, "<f4"))
                elif g == 8:
                    name = gv.decode()
                elif g == 9:
                    raw = gv
            if dt != 1:
                continue
            a = np.frombuffer(raw, "<f4") if raw is not None else (np.concatenate(fl) if fl else np.zeros(0, "<f4"))
            inits[name] = a.reshape(dims).astype(np.float32)
        elif f == 1:
            ins, op = [], ""
            for g, gwt, gv in _fields(v):
                if g == 1:
                    ins.append(gv.decode())
                elif g == 4:
                    op = gv.decode()
            if op in ("Conv", "Gemm"):
                nodes.append((op, [inits.get(x) for x in ins[1:]] if inits else ins[1:]))
    # Initializers may follow the nodes: resolve names now.
    return [(op, [inits[x] if isinstance(x, str) else x for x in ins]) for op, ins in nodes]


def init_from_onnx(model, path, calib):
    """Load a shipped ONNX file's weights into model. The export folded
    each BatchNorm into the convolution before it; the BatchNorm is
    rebuilt so that eval mode computes exactly the ONNX function and
    training mode starts from it: running mean m and variance v of the
    folded convolution's output on the calibration batches, gamma =
    sqrt(v + eps), beta = folded bias + m."""
    nodes = read_onnx(path)
    bn_of = {}
    for m in model.modules():
        if isinstance(m, nn.Sequential) and len(m) >= 2 and isinstance(m[0], nn.Conv2d) and isinstance(m[1], nn.BatchNorm2d):
            bn_of[m[0]] = m[1]
    order = []
    hooks = [m.register_forward_hook(lambda mod, i, o: order.append(mod)) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    model.eval()
    with torch.no_grad():
        model(calib[:1])
    for h in hooks:
        h.remove()
    if len(order) != len(nodes):
        raise SystemExit(f"{path}: {len(nodes)} Conv/Gemm nodes, the model has {len(order)} layers")
    with torch.no_grad():
        for mod, (op, ws) in zip(order, nodes):
            w = torch.from_numpy(ws[0].copy())
            b = torch.from_numpy(ws[1].copy()) if len(ws) > 1 else None
            if w.shape != mod.weight.shape:
                raise SystemExit(f"{path}: weight {tuple(w.shape)} for layer {tuple(mod.weight.shape)}")
            mod.weight.copy_(w.to(mod.weight.device))
            if mod in bn_of:
                bn = bn_of[mod]
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0)
                bn.weight.fill_(math.sqrt(1.0 + bn.eps))
                bn.bias.copy_(b.to(bn.bias.device))
            else:
                mod.bias.copy_(b.to(mod.bias.device))
        # Recalibrate the BatchNorms (eval mode: each sees the ONNX
        # function's activations before it, so one pass does every layer).
        stats = {}

        def hook(bn):
            def f(mod, inp, out):
                x = inp[0].double()
                s = stats.setdefault(bn, [0.0, 0.0, 0])
                s[0] = s[0] + x.sum((0, 2, 3))
                s[1] = s[1] + (x * x).sum((0, 2, 3))
                s[2] += x.numel() // x.shape[1]
            return f
        hooks = [bn.register_forward_hook(hook(bn)) for bn in bn_of.values()]
        for s in range(0, len(calib), 64):
            model(calib[s:s + 64])
        for h in hooks:
            h.remove()
        for bn, (sm, sq, n) in stats.items():
            m = sm / n
            v = (sq / n - m * m).clamp_min(1e-6)
            beta = bn.bias.double() + m
            bn.running_mean.copy_(m.float())
            bn.running_var.copy_(v.float())
            bn.weight.copy_(torch.sqrt(v + bn.eps).float())
            bn.bias.copy_(beta.float())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=sorted(SPECS), required=True)
    ap.add_argument("--data", default="data/pop_train.npz")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--deadline", type=float, default=0, metavar="UNIX_TIME",
                    help="train until this wall time (seconds since the epoch) instead of --minutes")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--amp", action="store_true", help="bf16 autocast for the forward pass (meant for cuda)")
    ap.add_argument("--torch-batches", action="store_true",
                    help="arrays and augmentation as torch tensors also on the CPU (the cuda path, for testing it)")
    ap.add_argument("--out", default="..", help="models directory")
    ap.add_argument("--name", default="", help="file name stem (default pop_MODEL)")
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--init", default="", help="continue from this state dict (checkpoints/NAME.pt) or shipped ONNX file (NAME.onnx)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--pack", default="", metavar="FILE",
                    help="write state dict, export parameters and reference inputs to FILE instead of exporting (pop/unpack.py)")
    ap.add_argument("--strong", action="store_true",
                    help="stronger photometric augmentation: a gamma per frame and a white-balance cast (strong_photometric)")
    ap.add_argument("--grey", type=float, default=0.0, metavar="P",
                    help="turn a share P of the colour training frames grey by luminance (to_grey)")
    ap.add_argument("--keep-best", action="store_true",
                    help="export (or pack) the state at the lowest validation metric, not the last one")
    ap.add_argument("--extra", action="append", default=[], metavar="NPZ",
                    help="presence only: more frames (x160, present), e.g. pop/plain.py negatives")
    a = ap.parse_args()
    if a.extra and a.model != "presence":
        raise SystemExit("--extra is for the presence model only")
    dev = torch.device(a.device)
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True
    torch.set_num_threads(a.threads)
    spec = SPECS[a.model]
    torch.manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    onhost = dev.type == "cpu" and not a.torch_batches
    if onhost:
        z = dict(np.load(a.data, allow_pickle=True))
    else:  # only the arrays this model needs (the set may be several GB)
        zf = np.load(a.data, allow_pickle=True)
        keys = {"corners_a": ["x160", "pts"], "corners_b": ["x160", "pts"], "presence": ["x160"],
                "viewport": ["scr", "vp"], "quality": ["disp", "qual"]}[a.model]
        z = {k: zf[k] for k in keys + ["present", "exclude"] if k in zf.files}
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
    model = build(spec).to(dev)
    vm = float("nan")
    name = a.name or f"pop_{a.model}"
    if onhost:
        mk = lambda ix, bs, train: batches(a.model, z, ix, rng, bs, train, a.strong, a.grey)
    else:
        t = device_arrays(a.model, z, dev)
        gen = torch.Generator(device=dev)
        gen.manual_seed(spec["seed"])
        mk = lambda ix, bs, train: torch_batches(a.model, t, torch.as_tensor(ix, device=dev), gen, bs, train, a.strong, a.grey)

    def validate():
        model.eval()
        with torch.no_grad():
            return float(np.mean([float(loss_fn(a.model, model, x, y, a.amp)[1]) for x, y in mk(val, 64 if onhost else 256, False)]))

    if a.init.endswith(".onnx"):
        calib = torch.cat([x for x, _ in mk(tr[:512], 64, False)])
        init_from_onnx(model, a.init, calib)
        vm = validate()
        print(f"{name} initialised from {a.init}: val-metric {vm:.4f}", flush=True)
    elif a.init:
        model.load_state_dict(torch.load(a.init, map_location=dev))
        if not onhost:
            vm = validate()
            print(f"{name} initialised from {a.init}: val-metric {vm:.4f}", flush=True)
    best = BestState() if a.keep_best else None  # a copy per validation only when asked
    if best:
        best.offer(vm, 0, model)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=1e-4)
    t0 = time.time()
    budget = a.deadline - t0 if a.deadline else a.minutes * 60
    step, ep = 0, 0
    while time.time() - t0 < budget:
        model.train()
        perm = rng.permutation(tr)
        tl, tm, nb = 0.0, 0.0, 0
        for x, y in mk(perm, a.bs, True):
            frac = min(1.0, (time.time() - t0) / budget)
            lr = a.lr * (min(1.0, step / 100)) * (0.5 * (1 + math.cos(math.pi * frac)) * 0.97 + 0.03)
            for g in opt.param_groups:
                g["lr"] = lr
            l, m = loss_fn(a.model, model, x, y, a.amp)
            opt.zero_grad()
            l.backward()
            opt.step()
            if onhost:
                tl, tm = tl + float(l), tm + float(m)
            else:  # no device sync every step
                tl, tm = tl + l.detach(), tm + m.detach()
            nb, step = nb + 1, step + 1
            if time.time() - t0 >= budget:
                break
        vm = validate()
        if best:
            best.offer(vm, step, model)
        ep += 1
        print(f"{name} epoch {ep} step {step} {time.time() - t0:.0f}s loss {float(tl) / max(nb, 1):.4f} train-metric {float(tm) / max(nb, 1):.4f} val-metric {vm:.4f}", flush=True)
    minutes = round((time.time() - t0) / 60, 2) if a.deadline else a.minutes
    last_step = step
    if best and best.restore(model):
        vm, step = best.metric, best.step
        print(f"{name} kept step {step} of {last_step}: val-metric {vm:.4f}", flush=True)
    model = model.float().to("cpu").eval()
    xref = next(batches(a.model, z, val[:2], np.random.default_rng(0), 2, False))[0]
    params = {"samples": int(len(z["present"])), "steps": step, "minutes": minutes, "continued_from": a.init, "seed": spec["seed"],
              "extra": [os.path.basename(p) for p in a.extra], "strong_augmentation": a.strong, "grey_share": a.grey, "negatives": int((z["present"] < 0.5).sum()),
              "val_metric": round(vm, 5) if vm == vm else None, "excluded_families": str(z.get("exclude", "")),
              "heatmap_span": [LO, HI] if spec["kind"] == "heat" else None}
    if a.keep_best:
        params["kept_best_of_steps"] = last_step
    if a.pack:
        params["device"] = a.device + (" bf16" if a.amp else "")
        torch.save({"model": a.model, "name": name, "state_dict": model.state_dict(), "xref": xref, "params": params}, a.pack)
        print(f"packed {a.pack}")
        return
    os.makedirs("checkpoints", exist_ok=True)
    torch.save(model.state_dict(), os.path.join("checkpoints", name + ".pt"))
    export(a.out, spec, model, name, xref, params)


class Export(nn.Module):
    def __init__(self, m, kind):
        super().__init__()
        self.m, self.kind = m, kind

    def forward(self, x):
        if self.kind == "heat":
            p, s, _ = self.m(x)
            return p, s
        return self.m(x)


def export(out, spec, model, name, x, params):
    """ONNX file, sidecar and export reference (x: the two reference inputs)."""
    model.eval()
    e = Export(model, spec["kind"])
    c, s = spec["cin"], spec["size"]
    dummy = torch.zeros(1, c, s, s)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(e, dummy, path, input_names=["image"], output_names=spec["outputs"],
                      dynamic_axes={"image": {0: "n"}, **{o: {0: "n"} for o in spec["outputs"]}}, opset_version=13)
    # Export reference: two validation inputs through PyTorch (eval mode:
    # torch.onnx.export restores the wrapper's training flag, which a new
    # Module has set, and that would put BatchNorm back in training mode).
    e.eval()
    with torch.no_grad():
        outs = e(x)
    outs = outs if isinstance(outs, tuple) else (outs,)
    refdir = os.path.join(out, "reference")
    os.makedirs(refdir, exist_ok=True)
    inp = f"{name}_input_{s}.f32"
    x.numpy().astype("<f4").tofile(os.path.join(refdir, inp))
    with open(os.path.join(refdir, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": inp, "input_shape": list(x.shape),
                   "outputs": {o: [float(v) for v in t.reshape(-1)] for o, t in zip(spec["outputs"], outs)}}, f)
    meta = {"role": name, "input_size": [c, s, s], "inputs": ["image"], "outputs": spec["outputs"], "version": VERSION,
            "params": params}
    with open(os.path.join(out, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"exported {path}")


if __name__ == "__main__":
    main()
