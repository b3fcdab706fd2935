#!/usr/bin/env python3
"""Train and export the validity classifier: is this a lateral thoracic radiograph?

Positives come from the physically based simulator (sim/xraysim.py, every
presentation: grey, tinted, cropped, scanned, annotated, thumbnails);
negatives from sim/negatives.py plus other radiographic views and regions
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

from cardiac import dataset
from sim import negatives
from sim import xraysim
from cardiac.version import CARDIAC_VERSION


def _pos(args):
    seed, S, heldout = args
    r = np.random.default_rng(seed + 3)
    im, _, _ = xraysim.generate(seed, heldout=heldout, long_side=int(r.integers(200, 420)))
    lb, _ = dataset.letterbox(im.convert("RGB"), S)
    return np.asarray(lb, np.uint8)


def _neg(args):
    """Not a lateral thorax: documents, screenshots, scenes, textures (sim/negatives.py)
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


def build(n, seed0, S, heldout=False, workers=2, cache=None):
    """n simulator positives and n negatives, letterboxed to S (uint8 HWC), and
    their labels. With cache, the arrays are read from that .npz when it exists
    and written to it otherwise (generation is most of the training time)."""
    if cache and os.path.exists(cache):
        d = np.load(cache)
        return d["x"], d["y"]
    x, y = _generate(n, seed0, S, heldout, workers)
    if cache:
        os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
        np.savez(cache + ".tmp.npz", x=x, y=y)
        os.replace(cache + ".tmp.npz", cache)
    return x, y


def _generate(n, seed0, S, heldout, workers):
    with Pool(workers) as p:
        pos = p.map(_pos, [(seed0 + i, S, heldout) for i in range(n)], chunksize=16)
        neg = p.map(_neg, [(seed0 + 500_000 + i, S) for i in range(n)], chunksize=16)
    x = np.stack(pos + neg)
    y = np.concatenate([np.ones(n), np.zeros(n)]).astype(np.float32)
    return x, y


def gaussian_blur(x, sigma):
    """Separable Gaussian blur of [N,C,H,W] with standard deviation sigma px."""
    r = max(1, int(3 * sigma))
    k = torch.exp(-0.5 * (torch.arange(-r, r + 1, dtype=x.dtype) / sigma) ** 2)
    k = (k / k.sum()).to(x.dtype)
    c = x.shape[1]
    x = F.pad(x, (r, r, r, r), mode="replicate")
    x = F.conv2d(x, k.view(1, 1, 1, -1).repeat(c, 1, 1, 1), groups=c)
    return F.conv2d(x, k.view(1, 1, -1, 1).repeat(c, 1, 1, 1), groups=c)


def augment(xb, g, strength="strong"):
    """Presentation randomisation, applied alike to both classes so the
    classifier cannot key on it. "basic": flips, exposure, tone curve and
    colour casts. "strong" adds what differs between X-ray systems, viewers
    and exports: zoom in (crops) and out (borders of any colour, as in
    viewer windows and padded exports), small rotations, inverted LUTs,
    strong tints, contrast, blur (to very soft), sharpening and noise. xb is [N,3,S,S] in
    0..1."""
    n = len(xb)

    def u(lo, hi, *shape):
        return lo + (hi - lo) * torch.rand(n, *shape, generator=g)

    def coin(p):
        return (torch.rand(n, generator=g) < p).view(-1, 1, 1, 1)

    flip = torch.rand(n, generator=g) < 0.5
    xb = torch.where(flip.view(-1, 1, 1, 1), xb.flip(-1), xb)
    if strength == "strong":
        # geometry: scale < 1 shrinks the picture into a border, > 1 crops
        scale = torch.exp(u(-0.55, 0.3))
        ang = u(-0.2, 0.2)
        tx, ty = u(-0.25, 0.25), u(-0.25, 0.25)
        cos, sin = torch.cos(ang) / scale, torch.sin(ang) / scale
        theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
        grid = F.affine_grid(theta, list(xb.shape), align_corners=False)
        moved = F.grid_sample(xb, grid, align_corners=False)
        inside = F.grid_sample(torch.ones_like(xb[:, :1]), grid, align_corners=False)
        kind = torch.randint(0, 4, (n,), generator=g).view(-1, 1, 1, 1)
        border = torch.where(kind == 0, torch.zeros(n, 1, 1, 1),
                             torch.where(kind == 1, torch.ones(n, 1, 1, 1), u(0.1, 0.9, 1, 1, 1)))
        border = border * (1 + 0.1 * torch.randn(n, 3, 1, 1, generator=g))
        keep = coin(0.35)  # some images keep their own frame
        xb = torch.where(keep, xb, moved * inside + border.clamp(0, 1) * (1 - inside))
        xb = torch.where(coin(0.12), 1 - xb, xb)  # inverted LUT
        mean = xb.mean((1, 2, 3), keepdim=True)
        xb = (mean + (xb - mean) * torch.exp(0.35 * torch.randn(n, 1, 1, 1, generator=g))).clamp(0, 1)
        blur = F.avg_pool2d(F.pad(xb, (1, 1, 1, 1), mode="replicate"), 3, 1)
        xb = torch.where(coin(0.35), gaussian_blur(xb, float(u(0.8, 3.0)[0])), xb)  # soft, defocused images
        xb = torch.where(coin(0.25), (xb + u(0.5, 2.0, 1, 1, 1) * (xb - blur)), xb).clamp(0, 1)
        xb = torch.where(coin(0.3), xb + u(0.0, 0.06, 1, 1, 1) * torch.randn(xb.shape, generator=g), xb)
        # tints: a viewer's colour map, from none to strong
        tint = torch.rand(n, 3, 1, 1, generator=g)
        grey = xb.mean(1, keepdim=True)
        xb = torch.where(coin(0.3), grey * (1 - u(0, 0.6, 1, 1, 1)) + grey * tint * u(0, 0.6, 1, 1, 1) * 1.6, xb)
    xb = (xb * (1 + 0.2 * torch.randn(n, 1, 1, 1, generator=g))).clamp(0, 1)
    # colour casts and tone curves of viewers, scanners and monitors
    cast = 1 + 0.08 * torch.randn(n, 3, 1, 1, generator=g)
    gamma = torch.exp((0.45 if strength == "strong" else 0.3) * torch.randn(n, 1, 1, 1, generator=g))
    return (xb.clamp(0, 1) ** gamma * cast).clamp(0, 1)


def train_member(X, Y, seed, epochs, aug, t0, arch="cnn", fixed_upto=11):
    """One classifier on uint8 images X [N,3,S,S] and labels Y, its own seed
    for initialisation, batch order and augmentation (arch "mnv2": the
    trunk's stem and blocks 0..fixed_upto stay fixed)."""
    torch.manual_seed(seed)
    net = ValidityNet() if arch == "cnn" else ValidityMobileNet(fixed_upto)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=2e-3, weight_decay=1e-4)
    steps = epochs * (len(X) // 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    g = torch.Generator().manual_seed(seed)
    net.train()
    if arch != "cnn":
        net.fix_trunk()
    for ep in range(epochs):
        perm = torch.randperm(len(X), generator=g)
        for i in range(0, len(X) - 63, 64):
            idx = perm[i:i + 64]
            xb = augment(X[idx].float() / 255.0, g, aug)
            loss = F.binary_cross_entropy(net(xb).squeeze(1).clamp(1e-6, 1 - 1e-6), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        print(f"seed {seed} epoch {ep} loss {loss.item():.4f} {time.time()-t0:.0f}s", flush=True)
    return net.eval()


class ValidityEnsemble(nn.Module):
    """Members trained alike from different seeds; p_radiograph is their
    mean, so one member's quirk on an unfamiliar image weighs less. Exported
    as one model, so the contract (one cardiac_validity file) is unchanged."""

    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, image):
        return torch.stack([m(image) for m in self.members]).mean(0)


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


class ValidityMobileNet(nn.Module):
    """An ImageNet-initialised MobileNetV2 (cardiac/mobilenet.py: npm nsfwjs 4.4.0,
    MIT) up to block 12 with a linear head on mean and max pooling. The stem
    and blocks 0..fixed_upto (default 11) keep their weights and
    statistics; the later blocks and the head learn. Input [N,3,S,S] in 0..1 (the range the weights
    expect) -> p_radiograph [N,1]."""

    FIXED_UPTO = 11

    def __init__(self, fixed_upto=FIXED_UPTO):
        super().__init__()
        from cardiac import mobilenet

        self.enc = mobilenet.Encoder(last=12)
        mobilenet.load_keras_weights(self.enc, mobilenet.fetch_weights(
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pretrained")))
        self.fixed = [self.enc.stem] + list(self.enc.blocks[: fixed_upto + 1])
        for m in self.fixed:
            for p in m.parameters():
                p.requires_grad = False
        self.fc = nn.Linear(96 * 2, 1)

    def fix_trunk(self):
        """Keep the fixed layers' BatchNorm statistics while training."""
        for m in self.fixed:
            m.eval()

    def forward(self, image):
        x = self.enc.stem(image)
        for b in self.enc.blocks:
            x = b(x)
        x = torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1)
        return torch.sigmoid(self.fc(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=96)
    ap.add_argument("--n", type=int, default=2500, help="positives (and as many negatives)")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=77)
    ap.add_argument("--dogheart", help="DogHeart/CCK folder: its images are extra positives")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--aug", choices=["basic", "strong"], default="basic",
                    help="presentation randomisation (augment)")
    ap.add_argument("--cache", help="generated data .npz (read when present, else written)")
    ap.add_argument("--members", type=int, default=1,
                    help="train this many classifiers (seeds seed, seed+1, ...) and export their mean")
    ap.add_argument("--save", help="also save the members' state dicts here (.pt)")
    ap.add_argument("--arch", choices=["cnn", "mnv2"], default="cnn",
                    help="cnn: a small CNN from scratch; mnv2: ImageNet-initialised MobileNetV2 trunk (ValidityMobileNet)")
    ap.add_argument("--fixed-upto", type=int, default=ValidityMobileNet.FIXED_UPTO,
                    help="mnv2: the stem and blocks 0..N keep their ImageNet weights (12: only the head learns)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    t0 = time.time()
    x, y = build(a.n, 2_000_000 + a.seed * 10_000, a.size, cache=a.cache)
    if a.dogheart:
        extra = [np.asarray(dataset.letterbox(Image.open(p).convert("RGB"), a.size)[0], np.uint8)
                 for p in sorted(glob.glob(os.path.join(a.dogheart, "Images", "*.png")))]
        x = np.concatenate([x, np.stack(extra)])
        y = np.concatenate([y, np.ones(len(extra), np.float32)])
    print(f"data {len(x)} in {time.time()-t0:.0f}s", flush=True)
    X = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
    Y = torch.from_numpy(y)
    members = []
    for k in range(a.members):
        members.append(train_member(X, Y, a.seed + k, a.epochs, a.aug, t0, a.arch, a.fixed_upto))
        if a.save:
            os.makedirs(os.path.dirname(os.path.abspath(a.save)), exist_ok=True)
            torch.save([m.state_dict() for m in members], a.save)
    net = members[0] if len(members) == 1 else ValidityEnsemble(members)
    net.eval()
    path = os.path.join(a.models, "cardiac_validity.onnx")
    torch.onnx.export(net, torch.zeros(1, 3, a.size, a.size), path, opset_version=13, input_names=["image"],
                      output_names=["p_radiograph"], dynamic_axes={"image": {0: "n"}, "p_radiograph": {0: "n"}})
    meta = {"role": "cardiac_validity", "input_size": [3, a.size, a.size], "inputs": ["image"],
            "outputs": ["p_radiograph"], "version": CARDIAC_VERSION,
            "params": {"positives": a.n, "negatives": a.n, "epochs": a.epochs, "seed": a.seed,
                       "augmentation": a.aug, "members": a.members, "arch": a.arch,
                       **({"fixed_upto": a.fixed_upto} if a.arch == "mnv2" else {})}}
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
