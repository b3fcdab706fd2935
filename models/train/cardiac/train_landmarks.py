#!/usr/bin/env python3
"""Train one cardiac landmark model (heatmap regression, soft-argmax decoding).

A small U-Net predicts one heatmap per landmark at stride 4; a spatial
softmax and its expectation (integral regression / DSNT) give sub-pixel
coordinates. Loss: L1 on coordinates (masked, so data without a VLAS point
still trains the rest) plus a Jensen-Shannon term pulling each heatmap toward
a small Gaussian, which keeps heatmaps peaked so `peak` means something.

Train five with different --seed values (different init, data order and
augmentation) for the ensemble. Data: a phantom .npz (cardiac/dataset.py) and/or a
DogHeart/CCK folder (--dogheart DIR).
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

from cardiac import dataset

K = dataset.N_LANDMARKS


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def fuse(cin, cout):
    """Decoder stage: 1x1 reduction of the concatenated skip, then a 3x3."""
    return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         conv_bn(cout, cout))


class Block(nn.Module):
    """Two 3x3 convolutions with a residual connection."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = conv_bn(cin, cout, stride)
        self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = None if (cin == cout and stride == 1) else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        s = x if self.skip is None else self.skip(x)
        return F.relu(self.b(self.a(x)) + s)


class LandmarkNet(nn.Module):
    """Input [N,1,S,S] in 0..1 -> heatmap logits [N,K,S/4,S/4]."""

    def __init__(self, width=16):
        super().__init__()
        w = width
        self.stem = conv_bn(1, w, 2)            # S/2
        self.e1 = Block(w, 2 * w, 2)            # S/4
        self.e2 = Block(2 * w, 4 * w, 2)        # S/8
        self.e3 = Block(4 * w, 6 * w, 2)        # S/16
        self.e4 = Block(6 * w, 8 * w, 2)        # S/32
        self.ctx = Block(8 * w, 8 * w, 1)
        self.d3 = fuse(8 * w + 6 * w, 4 * w)
        self.d2 = fuse(4 * w + 4 * w, 3 * w)
        self.d1 = fuse(3 * w + 2 * w, 2 * w)
        self.head = nn.Conv2d(2 * w, K, 1)

    def forward(self, x):
        x = (x - 0.45) / 0.25
        s1 = self.stem(x)
        e1 = self.e1(s1)
        e2 = self.e2(e1)
        e3 = self.e3(e2)
        e4 = self.ctx(self.e4(e3))
        up = lambda t, ref: F.interpolate(t, size=ref.shape[-2:], mode="bilinear", align_corners=False)
        d3 = self.d3(torch.cat([up(e4, e3), e3], 1))
        d2 = self.d2(torch.cat([up(d3, e2), e2], 1))
        d1 = self.d1(torch.cat([up(d2, e1), e1], 1))
        return self.head(d1)


def decode(logits):
    """Heatmap logits -> (probabilities, coords [N,K,2] in 0..1, peak mass [N,K])."""
    n, k, h, w = logits.shape
    p = F.softmax(logits.reshape(n, k, h * w), -1).reshape(n, k, h, w)
    xs = (torch.arange(w, dtype=p.dtype, device=p.device) + 0.5) / w
    ys = (torch.arange(h, dtype=p.dtype, device=p.device) + 0.5) / h
    x = (p.sum(2) * xs).sum(-1)
    y = (p.sum(3) * ys).sum(-1)
    coords = torch.stack([x, y], -1)
    # probability mass within 2 cells of the decoded point
    dx = (xs.view(1, 1, 1, w) - x.view(n, k, 1, 1)) * w
    dy = (ys.view(1, 1, h, 1) - y.view(n, k, 1, 1)) * h
    near = ((dx * dx + dy * dy) <= 4.0).to(p.dtype)
    peak = (p * near).sum((2, 3))
    return p, coords, peak


class Exported(nn.Module):
    """The graph shipped in ONNX: image -> (landmarks, peak).

    With flip_tta the graph also runs the mirrored image (x -> 1-x in the
    letterbox frame, an exact mirror) and averages both predictions.
    """

    def __init__(self, net, flip_tta=False):
        super().__init__()
        self.net = net
        self.flip_tta = flip_tta

    def forward(self, image):
        if not self.flip_tta:
            _, coords, peak = decode(self.net(image))
            return coords, peak
        n = image.shape[0]
        _, c, p = decode(self.net(torch.cat([image, torch.flip(image, [3])], 0)))
        c1, c2 = c[:n], c[n:]
        c2 = torch.stack([1.0 - c2[..., 0], c2[..., 1]], -1)
        return 0.5 * (c1 + c2), 0.5 * (p[:n] + p[n:])


def js_to_gaussian(p, coords, sigma_cells=1.0):
    n, k, h, w = p.shape
    xs = (torch.arange(w, dtype=p.dtype, device=p.device) + 0.5) / w
    ys = (torch.arange(h, dtype=p.dtype, device=p.device) + 0.5) / h
    gx = torch.exp(-0.5 * ((xs.view(1, 1, 1, w) - coords[..., 0].view(n, k, 1, 1)) * w / sigma_cells) ** 2)
    gy = torch.exp(-0.5 * ((ys.view(1, 1, h, 1) - coords[..., 1].view(n, k, 1, 1)) * h / sigma_cells) ** 2)
    q = gx * gy
    q = q / q.sum((2, 3), keepdim=True).clamp_min(1e-12)
    m = 0.5 * (p + q)
    kl = lambda a, b: (a * (torch.log(a.clamp_min(1e-12)) - torch.log(b.clamp_min(1e-12)))).sum((2, 3))
    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def _rand(g, *shape):
    """Uniform draws on the generator's device."""
    return torch.rand(*shape, generator=g, device=g.device)


def _randn(g, *shape):
    """Normal draws on the generator's device."""
    return torch.randn(*shape, generator=g, device=g.device)


def augment(x, y, g):
    """Photometric jitter and left-right flips (the anatomy labels do not swap).
    x, y and the generator g share a device (CPU or GPU)."""
    n = x.shape[0]
    flip = _rand(g, n) < 0.5
    x = torch.where(flip.view(n, 1, 1, 1), x.flip(-1), x)
    y = y.clone()
    y[..., 0] = torch.where(flip.view(n, 1), 1.0 - y[..., 0], y[..., 0])
    gamma = torch.exp(_randn(g, n, 1, 1, 1) * 0.25)
    x = x.clamp(0, 1) ** gamma
    c = 1 + _randn(g, n, 1, 1, 1) * 0.15
    b = _randn(g, n, 1, 1, 1) * 0.05
    x = (x - 0.5) * c + 0.5 + b
    x = x + _randn(g, *x.shape) * (_rand(g, n, 1, 1, 1) * 0.04)
    return x.clamp(0, 1), y


def conv_order(net, S=64):
    """The network's Conv2d modules in the order a forward pass runs them
    (the order torch.onnx.export writes their Conv nodes)."""
    seen = []
    hooks = [m.register_forward_hook(lambda mod, i, o: seen.append(mod))
             for m in net.modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        net.eval()
        net(torch.zeros(1, 1, S, S, device=next(net.parameters()).device))
    for h in hooks:
        h.remove()
    return seen


def init_from_onnx(net, path):
    """Load an exported landmark model's weights into net.

    The export folds every BatchNorm into its convolution, so each conv gets
    the folded weights and its BatchNorm becomes the identity plus the folded
    bias (gamma 1, mean 0, var 1 - eps). Train such a net with frozen
    BatchNorm statistics (freeze_bn): it then computes exactly what the ONNX
    file computes and fine-tunes from there.
    """
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    # The exporter shares equal tensors through Identity nodes (e.g. the
    # zero biases of an untrained net) and may write Constant nodes.
    for node in m.graph.node:
        if node.op_type == "Constant":
            init[node.output[0]] = numpy_helper.to_array(node.attribute[0].t)
        elif node.op_type == "Identity" and node.input[0] in init:
            init[node.output[0]] = init[node.input[0]]
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    mods = conv_order(net)
    if len(convs) != len(mods):
        raise ValueError(f"{path}: {len(convs)} Conv nodes, the net has {len(mods)} convolutions")
    bn_after = {}
    for mod in net.modules():
        kids = list(mod.children())
        for a, b in zip(kids, kids[1:]):
            if isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d):
                bn_after[id(a)] = b
    with torch.no_grad():
        for node, conv in zip(convs, mods):
            w = torch.from_numpy(init[node.input[1]].copy())
            b = torch.from_numpy(init[node.input[2]].copy()) if len(node.input) > 2 else None
            if w.shape != conv.weight.shape:
                raise ValueError(f"{path}: conv shape {tuple(w.shape)} != {tuple(conv.weight.shape)}")
            conv.weight.copy_(w)
            bn = bn_after.get(id(conv))
            if bn is not None:
                bn.weight.fill_(1.0)
                bn.bias.copy_(b if b is not None else torch.zeros_like(bn.bias))
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
            elif conv.bias is not None and b is not None:
                conv.bias.copy_(b)
    return net


def freeze_bn(net):
    """Keep BatchNorm layers in eval mode (fixed statistics) while training."""
    for mod in net.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.eval()


def _box_blur(x, k):
    """Box blur of odd width k, edges replicated."""
    return F.avg_pool2d(F.pad(x, (k // 2,) * 4, mode="replicate"), k, 1)


def strong_augment(x, y, g, zoom_out=0.0, extra=False, max_rot_deg=14.0, geometric=True):
    """Domain randomisation for synthetic-to-real transfer, on the letterboxed
    batch: random affine (rotation, scale, shift; landmarks follow; with
    probability zoom_out the picture shrinks into a border), loss of
    resolution, blur or sharpening, gamma/contrast/brightness, noise, burned-in
    lines and occluding blocks.

    extra widens it towards what clinical images carry: tighter crops
    (zoom in up to 1.5x), the large-radius local contrast enhancement of DR
    post-processing, random tone curves, uneven exposure (a linear ramp) and
    faint grid lines. max_rot_deg bounds the in-plane rotation (the
    engine levels spines tilted further, docs/cardiac.md "Levelling a
    tilted spine"). x, y and the generator g share a device. geometric=False
    leaves out the affine (for a caller that moves a mask with the image
    itself, cardiac/train_silhouette.py); the draws that follow differ then."""
    n, _, S, _ = x.shape
    dev, dt = x.device, x.dtype
    if geometric:
        x, y = _random_affine(x, y, g, n, zoom_out, extra, max_rot_deg)
    return _photometric(x, y, g, n, S, dev, dt, extra)


def _random_affine(x, y, g, n, zoom_out, extra, max_rot_deg):
    """strong_augment's rotation, scale, shift and zoom-out; landmarks follow."""
    dev = x.device
    ang = (_rand(g, n) * 2 - 1) * math.radians(max_rot_deg)
    sc = torch.exp((_rand(g, n) * 2 - 1) * 0.18)
    if extra:
        sc = torch.where(_rand(g, n) < 0.3, torch.exp(_rand(g, n) * 0.4), sc)
    tx = (_rand(g, n) * 2 - 1) * 0.12
    ty = (_rand(g, n) * 2 - 1) * 0.12
    # framing: a share of the images shrink into a border (viewer windows,
    # padded exports, a thorax photographed from further away)
    far = _rand(g, n) < zoom_out
    sc = torch.where(far, torch.exp(-0.15 - 0.5 * _rand(g, n)), sc)
    keep = (_rand(g, n) < 0.25) & ~far
    ang, sc = torch.where(keep, torch.zeros_like(ang), ang), torch.where(keep, torch.ones_like(sc), sc)
    tx, ty = torch.where(keep, torch.zeros_like(tx), tx), torch.where(keep, torch.zeros_like(ty), ty)
    # forward map on normalised coords q = 2p - 1: q' = sc R q + t
    c, s_ = torch.cos(ang), torch.sin(ang)
    fwd = torch.stack([torch.stack([sc * c, -sc * s_, tx], -1), torch.stack([sc * s_, sc * c, ty], -1)], 1)
    q = y * 2 - 1
    q2 = torch.einsum("nij,nkj->nki", fwd[:, :, :2], q) + fwd[:, :, 2].unsqueeze(1)
    inside = ((q2.abs() < 0.97).all(-1)).all(-1)
    A = fwd[:, :, :2]
    Ainv = torch.linalg.inv(A)
    inv = torch.cat([Ainv, -(Ainv @ fwd[:, :, 2:])], 2)
    grid = F.affine_grid(inv, x.shape, align_corners=False)
    xa = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    if zoom_out > 0:
        # the border outside the moved picture: black, white or a grey
        cover = F.grid_sample(torch.ones_like(x[:, :1]), grid, mode="bilinear", padding_mode="zeros",
                              align_corners=False)
        kind = torch.randint(0, 3, (n, 1, 1, 1), generator=g, device=dev)
        fill = torch.where(kind == 0, torch.zeros(n, 1, 1, 1, device=dev),
                           torch.where(kind == 1, torch.ones(n, 1, 1, 1, device=dev), _rand(g, n, 1, 1, 1)))
        xa = xa + fill * (1 - cover)
    x = torch.where(inside.view(n, 1, 1, 1), xa, x)
    y = torch.where(inside.view(n, 1, 1), (q2 + 1) / 2, y)
    return x, y


def _photometric(x, y, g, n, S, dev, dt, extra):
    """strong_augment's resolution loss, blur, tone, noise, lines and blocks."""
    # resolution loss
    lo = (_rand(g, n) < 0.2).view(n, 1, 1, 1)
    f = float(_rand(g, 1)) * 0.4 + 0.3
    small = F.interpolate(x, scale_factor=f, mode="bilinear", align_corners=False)
    x = torch.where(lo, F.interpolate(small, size=(S, S), mode="bilinear", align_corners=False), x)
    # blur or unsharp mask
    amt = (_rand(g, n, 1, 1, 1) * 2.0 - 0.7).clamp_min(-0.7)  # <0 blurs, >0 sharpens
    x = x + amt * (x - _box_blur(x, 5))
    if extra:
        # DR post-processing: large-radius local contrast enhancement
        k = 2 * int(_rand(g, 1) * 12) + 9
        lce = (_rand(g, n, 1, 1, 1) < 0.5) * _rand(g, n, 1, 1, 1) * 1.5
        x = x + lce * (x - _box_blur(_box_blur(x, k), k))
        # uneven exposure: a linear ramp in a random direction
        th = _rand(g, n, 1, 1) * 2 * math.pi
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, S, device=dev, dtype=dt),
                                torch.linspace(-1, 1, S, device=dev, dtype=dt), indexing="ij")
        ramp = (xx * torch.cos(th) + yy * torch.sin(th)).unsqueeze(1)
        x = x + ramp * _randn(g, n, 1, 1, 1) * 0.08
        # faint grid lines (antiscatter grids, scanned film)
        period = 2.0 + _rand(g, n, 1, 1, 1) * 4.0
        on = (_rand(g, n, 1, 1, 1) < 0.15) * _rand(g, n, 1, 1, 1) * 0.06
        x = x + on * torch.sin(2 * math.pi * xx.unsqueeze(0).unsqueeze(0) * (S / 2) / period)
    # gamma, contrast, brightness, noise
    gamma = torch.exp(_randn(g, n, 1, 1, 1) * 0.35)
    x = x.clamp(0, 1) ** gamma
    if extra:
        # a random tone curve: a sigmoid of random slope and centre, mixed in
        slope = 3 + _rand(g, n, 1, 1, 1) * 7
        mid = 0.35 + _rand(g, n, 1, 1, 1) * 0.3
        sig = torch.sigmoid((x - mid) * slope)
        lo_, hi_ = torch.sigmoid(-mid * slope), torch.sigmoid((1 - mid) * slope)
        mix = (_rand(g, n, 1, 1, 1) < 0.4) * _rand(g, n, 1, 1, 1)
        x = x + mix * ((sig - lo_) / (hi_ - lo_) - x)
    cst = torch.exp(_randn(g, n, 1, 1, 1) * 0.2)
    x = (x - 0.5) * cst + 0.5 + _randn(g, n, 1, 1, 1) * 0.06
    x = x + _randn(g, *x.shape) * (_rand(g, n, 1, 1, 1) ** 2 * 0.08)
    # burned-in lines (up to three per image, a quarter of the images) and
    # occluding blocks (15 %)
    yy, xx = torch.meshgrid(torch.arange(S, dtype=dt, device=dev), torch.arange(S, dtype=dt, device=dev),
                            indexing="ij")
    has = _rand(g, n) < 0.25
    count = torch.randint(1, 4, (n,), generator=g, device=dev)
    for j in range(3):
        p0 = _rand(g, n, 2) * S
        th = _rand(g, n) * math.pi
        ln = _rand(g, n) * S * 0.6 + 10
        val = _rand(g, n) * 0.3 + 0.7
        sn, cs = torch.sin(th).view(n, 1, 1), torch.cos(th).view(n, 1, 1)
        dx, dy = xx - p0[:, 0].view(n, 1, 1), yy - p0[:, 1].view(n, 1, 1)
        m = ((dx * sn - dy * cs).abs() < 0.8) & ((dx * cs + dy * sn).abs() < ln.view(n, 1, 1) / 2)
        m = m & (has & (count > j)).view(n, 1, 1)
        x = torch.where(m.unsqueeze(1), val.view(n, 1, 1, 1), x)
    blk = _rand(g, n) < 0.15
    wh = (_rand(g, n, 2) * S * 0.15 + 6).floor()
    x0y0 = (_rand(g, n, 2) * (S - 20)).floor()
    val = _rand(g, n)
    m = ((xx >= x0y0[:, 0].view(n, 1, 1)) & (xx < (x0y0[:, 0] + wh[:, 0]).view(n, 1, 1)) &
         (yy >= x0y0[:, 1].view(n, 1, 1)) & (yy < (x0y0[:, 1] + wh[:, 1]).view(n, 1, 1)) & blk.view(n, 1, 1))
    x = torch.where(m.unsqueeze(1), val.view(n, 1, 1, 1), x)
    return x.clamp(0, 1), y


def build_net(arch, width):
    """The landmark network for arch: "unet" (LandmarkNet, from scratch) or
    "mnv2" (mobilenet.MobileLandmarkNet, an ImageNet-initialised MobileNetV2
    encoder with a U-Net decoder)."""
    if arch == "unet":
        return LandmarkNet(width)
    if arch == "mnv2":
        from cardiac import mobilenet
        return mobilenet.MobileLandmarkNet(K, width)
    raise ValueError(f"unknown arch {arch!r}")


def freeze_encoder(net, upto):
    """Fix the MobileNetV2 stem and blocks 0..upto (weights and BatchNorm
    statistics); returns the modules to keep in eval mode."""
    mods = [net.enc.stem] + list(net.enc.blocks[: upto + 1])
    for m in mods:
        for p in m.parameters():
            p.requires_grad = False
    return mods


def load_data(args):
    imgs, lms, masks = [], [], []
    for p in args.data:
        d = np.load(p)
        imgs.append(d["images"])
        lms.append(d["landmarks"])
        masks.append(d["mask"])
    if args.dogheart:
        i, l, m = dataset.load_dogheart(args.dogheart, args.size)
        imgs.append(i)
        lms.append(l)
        masks.append(m)
    return np.concatenate(imgs), np.concatenate(lms), np.concatenate(masks)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="*", default=[], help="phantom .npz files")
    ap.add_argument("--dogheart", help="DogHeart/CCK folder (Images/, Labels/)")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--minutes", type=float, default=12.0, help="training time budget")
    ap.add_argument("--steps", type=int, default=0, help="fixed step count (overrides --minutes)")
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True, help="checkpoint path (.pt)")
    ap.add_argument("--init", help="start from this checkpoint (a further, shorter cycle)")
    ap.add_argument("--max-lr", type=float, default=3e-3)
    ap.add_argument("--init-onnx", help="start from an exported landmark model (BatchNorm folded, then frozen)")
    ap.add_argument("--strong-aug", action="store_true", help="domain randomisation (strong_augment)")
    ap.add_argument("--zoom-out", type=float, default=0.0,
                    help="with --strong-aug: share of images shrunk into a border of random grey "
                         "(0 for the shipped models)")
    ap.add_argument("--arch", choices=["unet", "mnv2"], default="unet",
                    help="unet: LandmarkNet; mnv2: ImageNet-initialised MobileNetV2 encoder (cardiac/mobilenet.py)")
    ap.add_argument("--freeze-upto", type=int, default=10,
                    help="mnv2: keep the stem and blocks 0..N at their ImageNet values (-1: train all)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    g = torch.Generator().manual_seed(args.seed)
    imgs, lms, masks = load_data(args)
    n = len(imgs)
    # Each ensemble member sees its own bootstrap-free shuffle and holds out
    # 3 % for a progress figure.
    perm = np.random.default_rng(args.seed).permutation(n)
    nval = max(8, n // 33)
    val, tr = perm[:nval], perm[nval:]
    X = torch.from_numpy(imgs)
    Y = torch.from_numpy(lms)
    Mk = torch.from_numpy(masks)
    net = build_net(args.arch, args.width)
    frozen_bn = False
    fixed = []
    if args.arch == "mnv2" and not args.init and not args.init_onnx:
        from cardiac import mobilenet
        n_t = mobilenet.load_keras_weights(net.enc, mobilenet.fetch_weights(os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "..", "data", "pretrained")))
        print(f"mnv2: {n_t} ImageNet tensors from {mobilenet.NSFWJS}", flush=True)
    if args.arch == "mnv2" and args.freeze_upto >= 0:
        fixed = freeze_encoder(net, args.freeze_upto)
    if args.init:
        ck = torch.load(args.init, map_location="cpu")
        net.load_state_dict(ck["state"])
        frozen_bn = bool(ck.get("frozen_bn"))
    elif args.init_onnx:
        init_from_onnx(net, args.init_onnx)
        frozen_bn = True
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4, weight_decay=1e-4)

    def batch(idx):
        x = X[idx].float().unsqueeze(1) / 255.0
        return x, Y[idx], Mk[idx]

    def step_fn(idx):
        x, y, m = batch(idx)
        x, y = augment(x, y, g)
        if args.strong_aug:
            x, y = strong_augment(x, y, g, args.zoom_out)
        p, c, _ = decode(net(x))
        l1 = ((c - y).abs().sum(-1) * m).sum() / m.sum().clamp_min(1) * args.size
        js = (js_to_gaussian(p, y) * m).sum() / m.sum().clamp_min(1)
        loss = l1 + js
        opt.zero_grad()
        loss.backward()
        opt.step()
        return l1.item()

    # The schedule runs on elapsed time, not steps, so training ends on time
    # however busy the machine is: one-cycle, warm-up then cosine decay.
    max_lr = args.max_lr
    budget = args.minutes * 60.0
    warm = 0.05 if args.init else 0.15

    def lr_at(progress):
        if progress < warm:
            return max_lr * (0.04 + 0.96 * progress / warm)
        q = (progress - warm) / (1 - warm)
        return max_lr * (1e-4 + 0.5 * (1 - 1e-4) * (1 + math.cos(math.pi * min(q, 1.0))))

    def train_mode():
        net.train()
        if frozen_bn:
            freeze_bn(net)
        for m in fixed:
            m.eval()

    train_mode()
    rng = np.random.default_rng(args.seed + 1)
    print(f"seed {args.seed}: {n} samples, budget {args.minutes} min" + (f", {args.steps} steps" if args.steps else ""),
          flush=True)
    order = np.array([], dtype=int)
    t_start = time.time()
    step = 0
    err = float("nan")

    def checkpoint():
        torch.save({"state": net.state_dict(), "size": args.size, "width": args.width, "seed": args.seed,
                    "arch": args.arch,
                    "frozen_bn": frozen_bn,
                    "step": step, "total": step, "val_err_px": float(err), "minutes": args.minutes}, args.out)

    while True:
        progress = step / args.steps if args.steps else (time.time() - t_start) / budget
        if progress >= 1.0:
            break
        for grp in opt.param_groups:
            grp["lr"] = lr_at(progress)
        if len(order) < args.batch:
            order = np.concatenate([order, rng.permutation(tr)])
        idx, order = order[: args.batch], order[args.batch:]
        l1 = step_fn(idx)
        if step % 100 == 0:
            net.eval()
            with torch.no_grad():
                x, y, m = batch(val)
                _, c, pk = decode(net(x))
                err = float((((c - y) ** 2).sum(-1).sqrt() * m).sum() / m.sum() * args.size)
            train_mode()
            print(f"step {step} progress {progress:.2f} lr {lr_at(progress):.5f} train_l1_px {l1:.2f} "
                  f"val_err_px {err:.3f} peak {pk.mean():.2f} elapsed {time.time()-t_start:.0f}s", flush=True)
            checkpoint()
        step += 1
    net.eval()
    with torch.no_grad():
        x, y, m = batch(val)
        _, c, pk = decode(net(x))
        err = float((((c - y) ** 2).sum(-1).sqrt() * m).sum() / m.sum() * args.size)
    print(f"final step {step} val_err_px {err:.3f} peak {pk.mean():.2f}", flush=True)
    checkpoint()
    print("done", args.out, flush=True)


if __name__ == "__main__":
    main()
