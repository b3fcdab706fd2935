#!/usr/bin/env python3
"""An ImageNet-initialised MobileNetV2 encoder for the landmark models.

No registry reachable here serves an ImageNet checkpoint; the npm package
`nsfwjs` (MIT licence, code and weights) ships a Keras MobileNetV2 (alpha
1.0) as a TF.js layers model whose stem and blocks 0-10 still hold the
Keras ImageNet weights (its authors unfroze only `block_11_expand` onwards
for their 5-class image filter). `fetch_weights` unpacks that package with
npm and node; `load_keras_weights` maps the tensors by name onto the torch
modules below.

Keras conventions honoured: BatchNorm eps 1e-3, and stride-2 convolutions
pad asymmetrically (0 before, 1 after) rather than symmetrically. Grey
radiographs go in as one channel: the first convolution's RGB weights are
summed. Inputs stay in 0..1, the range nsfwjs feeds: the stem's BatchNorm
statistics match 0..1 input (correlation of channel means 1.00, against
-1.00 for -1..1).

`MobileLandmarkNet` keeps the landmark contract of train_landmarks.LandmarkNet:
image [N,1,S,S] in 0..1 -> heatmap logits [N,K,S/4,S/4].
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

NSFWJS = "nsfwjs@4.4.0"
EPS = 1e-3

# (expansion, channels, repeats, first stride) as in Keras' MobileNetV2.
CONFIG = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class KConv(nn.Module):
    """Convolution + BatchNorm (+ ReLU6), padded the Keras way."""

    def __init__(self, cin, cout, k, stride, groups=1, act=True):
        super().__init__()
        self.stride, self.k = stride, k
        pad = 0 if stride == 2 or k == 1 else k // 2
        self.conv = nn.Conv2d(cin, cout, k, stride, pad, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=EPS, momentum=0.01)
        self.act = act

    def forward(self, x):
        if self.stride == 2 and self.k > 1:
            x = F.pad(x, (0, 1, 0, 1))
        x = self.bn(self.conv(x))
        return F.relu6(x) if self.act else x


class Inverted(nn.Module):
    """MobileNetV2 inverted residual block."""

    def __init__(self, cin, cout, expand, stride):
        super().__init__()
        mid = cin * expand
        self.expand = KConv(cin, mid, 1, 1) if expand != 1 else None
        self.depthwise = KConv(mid, mid, 3, stride, groups=mid)
        self.project = KConv(mid, cout, 1, 1, act=False)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = x if self.expand is None else self.expand(x)
        y = self.project(self.depthwise(y))
        return x + y if self.residual else y


def keras_block_names():
    """Keras layer prefixes of the inverted residual blocks, in order."""
    names = ["expanded_conv"]
    names += [f"block_{i}" for i in range(1, 17)]
    return names


class Encoder(nn.Module):
    """The MobileNetV2 stem and blocks 0..`last` (Keras numbering, 16 = all).

    MobileLandmarkNet.trunk and from_trunk run them, taking the features
    after blocks 2 (stride 4), 5 (stride 8), 12 (stride 16) and `last`
    (stride 32 when last >= 13); `channels` gives their widths.
    """

    def __init__(self, last=15):
        super().__init__()
        self.stem = KConv(3, 32, 3, 2)
        blocks, cin = [], 32
        for t, c, n, s in CONFIG:
            for i in range(n):
                blocks.append(Inverted(cin, c, t, s if i == 0 else 1))
                cin = c
        self.blocks = nn.ModuleList(blocks[: last + 1])
        self.channels = {2: 24, 5: 32, 12: 96, last: blocks[last].project.conv.out_channels}
        self.last = last


def conv_bn(cin, cout, k=3):
    return nn.Sequential(nn.Conv2d(cin, cout, k, 1, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class MobileLandmarkNet(nn.Module):
    """MobileNetV2 encoder with a small U-Net decoder: image [N,1,S,S] in
    0..1 -> heatmap logits [N,K,S/4,S/4]."""

    def __init__(self, k, width=32, last=15):
        super().__init__()
        self.enc = Encoder(last)
        ch = self.enc.channels
        w = width
        self.d16 = nn.Sequential(conv_bn(ch[last] + ch[12], 2 * w, 1), conv_bn(2 * w, 2 * w))
        self.d8 = nn.Sequential(conv_bn(2 * w + ch[5], w + w // 2, 1), conv_bn(w + w // 2, w + w // 2))
        self.d4 = nn.Sequential(conv_bn(w + w // 2 + ch[2], w, 1), conv_bn(w, w))
        self.head = nn.Conv2d(w, k, 1)

    def trunk(self, x, upto=10):
        """Stem and blocks 0..upto (upto >= 5): features after blocks 2, 5 and upto."""
        x = self.enc.stem(x.expand(-1, 3, -1, -1))
        f2 = f5 = None
        for i, b in enumerate(self.enc.blocks[: upto + 1]):
            x = b(x)
            if i == 2:
                f2 = x
            elif i == 5:
                f5 = x
        return f2, f5, x

    def from_trunk(self, f2, f5, fu, upto=10):
        """The rest of the network from trunk(x, upto)'s features."""
        x, f12 = fu, fu if upto >= 12 else None
        for i in range(upto + 1, len(self.enc.blocks)):
            x = self.enc.blocks[i](x)
            if i == 12:
                f12 = x
        up = lambda t, ref: F.interpolate(t, size=ref.shape[-2:], mode="bilinear", align_corners=False)
        d = x
        if self.enc.last != 12:
            d = self.d16(torch.cat([up(d, f12), f12], 1))
        d = self.d8(torch.cat([up(d, f5), f5], 1))
        d = self.d4(torch.cat([up(d, f2), f2], 1))
        return self.head(d)

    def forward(self, x):
        return self.from_trunk(*self.trunk(x))


def fetch_weights(cache_dir):
    """Unpack nsfwjs' MobileNetV2 with npm and node into cache_dir/mobilenet_v2.npz
    (float32 tensors by Keras name) and return that path."""
    out = os.path.join(cache_dir, "mobilenet_v2.npz")
    if os.path.exists(out):
        return out
    os.makedirs(cache_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", "--silent", NSFWJS], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")][0]
        subprocess.run(["tar", "xzf", tgz], cwd=tmp, check=True)
        d = os.path.join(tmp, "package", "dist", "models", "mobilenet_v2")
        js = ("const m=require(process.argv[1]+'/model.min.js');const s=require(process.argv[1]+'/group1-shard1of1.min.js');"
              "const fs=require('fs');fs.writeFileSync(process.argv[2]+'/manifest.json',JSON.stringify(m.weightsManifest));"
              "fs.writeFileSync(process.argv[2]+'/weights.bin',typeof s==='string'?Buffer.from(s,'base64'):Buffer.from(s));")
        subprocess.run(["node", "-e", js, d, tmp], check=True)
        with open(os.path.join(tmp, "manifest.json")) as f:
            manifest = json.load(f)
        raw = np.fromfile(os.path.join(tmp, "weights.bin"), dtype=np.uint8)
    tensors, off = {}, 0
    for group in manifest:
        for w in group["weights"]:
            n = int(np.prod(w["shape"]))
            q = w.get("quantization")
            if q and q["dtype"] == "uint8":
                v = raw[off:off + n].astype(np.float32) * q["scale"] + q["min"]
                off += n
            else:
                v = raw[off:off + 4 * n].view("<f4").copy()
                off += 4 * n
            tensors[w["name"]] = v.reshape(w["shape"])
    np.savez(out, **tensors)
    return out


def load_keras_weights(enc, npz_path):
    """Copy the Keras MobileNetV2 tensors onto enc (an Encoder); returns the
    number of tensors copied. Conv kernels are HWIO (depthwise HWC1) in
    Keras, OIHW in torch; the stem's RGB kernel is kept (the grey input is
    repeated to 3 channels, which equals summing it)."""
    t = np.load(npz_path)
    copied = 0

    def put(mod, prefix, bn_name, depthwise=False):
        nonlocal copied
        kname = prefix + ("/depthwise_kernel" if depthwise else "/kernel")
        k = t[kname]
        w = k.transpose(2, 3, 0, 1) if depthwise else k.transpose(3, 2, 0, 1)
        with torch.no_grad():
            mod.conv.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            mod.bn.weight.copy_(torch.from_numpy(t[bn_name + "/gamma"]))
            mod.bn.bias.copy_(torch.from_numpy(t[bn_name + "/beta"]))
            mod.bn.running_mean.copy_(torch.from_numpy(t[bn_name + "/moving_mean"]))
            mod.bn.running_var.copy_(torch.from_numpy(t[bn_name + "/moving_variance"]))
        copied += 5

    put(enc.stem, "Conv1", "bn_Conv1")
    for name, b in zip(keras_block_names(), enc.blocks):
        if b.expand is not None:
            put(b.expand, name + "_expand", name + "_expand_BN")
        put(b.depthwise, name + "_depthwise", name + "_depthwise_BN", depthwise=True)
        put(b.project, name + "_project", name + "_project_BN")
    return copied
