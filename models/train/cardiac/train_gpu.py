#!/usr/bin/env python3
"""Train the cardiac landmark ensemble on a GPU: ImageNet-initialised
MobileNetV2 members (cardiac/mobilenet.py), the whole network trained, with fresh
domain randomisation (train_landmarks.augment and strong_augment) drawn on
the GPU at every step.

On the two-core CPU machines experiments/train_mnv2_ensemble.py has to freeze the
encoder and cache its features; with an accelerator every layer learns and
no augmented copy is ever seen twice. One process trains one member, so a
GPU runs several members (of one or more recipes) side by side:

  python3 -m cardiac.train_gpu member --data xs.npz --dev dev_xs.npz dev_ph.npz --seed 401 \\
      --deadline $(($(date +%s) + 400)) --out ckpt/a_1.pt [--extra]
  python3 -m cardiac.train_gpu eval ckpt/a_{1,2,3,4,5}.pt --dev dev_xs.npz dev_ph.npz
  python3 -m cardiac.train_gpu pack --out a.pt ckpt/a_{1,2,3,4,5}.pt    (fp16, to carry back)
  python3 -m cardiac.train_gpu unpack a.pt checkpoints/gpu               (PREFIX_K.pt, fp32)

--dev sets are letterboxed .npz files (cardiac/dataset.py); the figure printed for
them is the VHS error computed from the letterboxed landmarks (VHS is a
ratio of lengths, so the letterbox's uniform scale leaves it unchanged).
Choose recipes on development sets only; the product's figures come from
`make eval-cardiac` through the Go engine. Checkpoints have
train_landmarks' format (arch "mnv2"), so cardiac/export_landmarks.py, experiments/evalpt.py
and cardiac/learn.py take them unchanged.
"""
import argparse
import math
import os
import time

import numpy as np
import torch

from cardiac import mobilenet
from sim import phantom
from cardiac import train_landmarks as T

PRETRAINED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pretrained")


def load_npz(paths, dev):
    """Images (uint8 [N,S,S]), landmarks [N,K,2] and masks [N,K] of the
    .npz files, concatenated, on dev."""
    ds = [np.load(p) for p in paths]
    x = torch.from_numpy(np.concatenate([d["images"] for d in ds])).to(dev)
    y = torch.from_numpy(np.concatenate([d["landmarks"] for d in ds])).float().to(dev)
    m = torch.from_numpy(np.concatenate([d["mask"] for d in ds])).float().to(dev)
    return x, y, m


def vhs_from(c):
    """VHS of landmark arrays [..., K, 2] (any unit)."""
    L = {k: i for i, k in enumerate(phantom.LANDMARKS)}
    n = lambda a, b: np.linalg.norm(c[..., L[a], :] - c[..., L[b], :], axis=-1)
    v = n("Vertebra A", "Vertebra B") / 6.0
    return (n("heart_top", "heart_bottom") + n("heart_right", "heart_left")) / np.maximum(v, 1e-9)


def predict(nets, x, batch=128):
    """Each net's landmarks [M,N,K,2] (letterbox units) for images x (uint8 [N,S,S])."""
    out = []
    with torch.no_grad():
        for net in nets:
            net.eval()
            cs = []
            for s in range(0, len(x), batch):
                xb = x[s: s + batch].float().unsqueeze(1) / 255.0
                with torch.autocast(xb.device.type, dtype=torch.bfloat16, enabled=xb.is_cuda):
                    logits = net(xb.contiguous(memory_format=torch.channels_last))
                cs.append(T.decode(logits.float())[1])
            out.append(torch.cat(cs).cpu().numpy())
    return np.stack(out)


def vhs_errors(c, y):
    """|VHS(pred) - VHS(truth)| per image."""
    return np.abs(vhs_from(c) - vhs_from(y))


def summary(err):
    return (f"MAE {err.mean():.3f} median {np.median(err):.3f} <=0.5v {100 * (err <= 0.5).mean():.1f}% "
            f">1.5v {100 * (err > 1.5).mean():.1f}%")


def build(width, device, pretrained=True):
    net = mobilenet.MobileLandmarkNet(T.K, width)
    if pretrained:
        mobilenet.load_keras_weights(net.enc, mobilenet.fetch_weights(PRETRAINED))
    return net.to(device).to(memory_format=torch.channels_last)


def member(a):
    dev = torch.device(a.device)
    torch.manual_seed(a.seed)
    X, Y, M = load_npz(a.data, dev)
    if a.heart_only:
        # the column route measures the vertebra: the members' job is the heart
        M[:, [phantom.LANDMARKS.index("Vertebra A"), phantom.LANDMARKS.index("Vertebra B")]] = 0
    devsets = [(os.path.basename(p), load_npz([p], dev)) for p in a.dev]
    n = len(X)
    perm = torch.from_numpy(np.random.default_rng(a.seed).permutation(n)).to(dev)
    nval = max(8, n // 50)
    val, tr = perm[:nval], perm[nval:]
    if a.init and a.init_onnx:
        raise SystemExit("member: --init and --init-onnx exclude each other")
    net = build(a.width, dev, pretrained=not (a.init or a.init_onnx))
    if a.init:
        net.load_state_dict(torch.load(a.init, map_location=dev)["state"])
    if a.init_onnx:
        # The export folded every BatchNorm into its convolution: the
        # statistics stay fixed (freeze_bn) so the net starts out computing
        # exactly what the shipped model computes.
        T.init_from_onnx(net, a.init_onnx)  # copies into net's tensors, on dev

    def train_mode():
        net.train()
        if a.init_onnx:
            T.freeze_bn(net)
    enc = list(net.enc.parameters())
    ids = {id(p) for p in enc}
    dec = [p for p in net.parameters() if id(p) not in ids]
    opt = torch.optim.AdamW([{"params": enc, "scale": a.enc_lr}, {"params": dec, "scale": 1.0}],
                            lr=1e-4, weight_decay=1e-4)
    g = torch.Generator(device=dev).manual_seed(a.seed)
    t0 = time.time()
    deadline = a.deadline if a.deadline else t0 + a.minutes * 60
    if deadline <= t0 + 1:
        raise SystemExit(f"member: the deadline passed {t0 - deadline:.0f} s before training could start")
    warm = 0.04 if (a.init or a.init_onnx) else 0.08

    def lr_at(pr):
        if pr < warm:
            return a.max_lr * (0.04 + 0.96 * pr / warm)
        q = (pr - warm) / (1 - warm)
        return a.max_lr * (1e-3 + 0.5 * (1 - 1e-3) * (1 + math.cos(math.pi * min(q, 1.0))))

    step, err, dev_err = 0, float("nan"), {}

    def evaluate():
        nonlocal err
        c = predict([net], X[val])[0]
        y = Y[val].cpu().numpy()
        mk = M[val].cpu().numpy()
        err = float((np.sqrt(((c - y) ** 2).sum(-1)) * mk).sum() / mk.sum() * a.size)
        for name, (dx, dy, _) in devsets:
            dev_err[name] = float(vhs_errors(predict([net], dx)[0], dy.cpu().numpy()).mean())
        train_mode()

    def save():
        state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        torch.save({"state": state, "size": a.size, "width": a.width, "seed": a.seed, "arch": "mnv2",
                    "frozen_bn": bool(a.init_onnx), "init_onnx": a.init_onnx or "", "max_rot_deg": a.max_rot,
                    "step": step, "total": step, "val_err_px": err,
                    "minutes": round((time.time() - t0) / 60, 2), "recipe": a.recipe,
                    "extra_aug": a.extra, "zoom_out": a.zoom_out, "heart_only": a.heart_only, "dev_vhs_mae": dict(dev_err),
                    "trunk_frozen_upto": -1}, a.out)

    train_mode()
    print(f"member {a.out}: {len(tr)} training images, {nval} validation, "
          f"{(deadline - t0) / 60:.1f} min on {dev}", flush=True)
    while True:
        pr = (time.time() - t0) / (deadline - t0)
        if pr >= 1.0:
            break
        lr = lr_at(pr)
        for grp in opt.param_groups:
            grp["lr"] = lr * grp["scale"]
        idx = tr[torch.randint(len(tr), (a.batch,), generator=g, device=dev)]
        x = X[idx].float().unsqueeze(1) / 255.0
        y, m = Y[idx], M[idx]
        x, y = T.augment(x, y, g)
        x, y = T.strong_augment(x, y, g, a.zoom_out, a.extra, a.max_rot)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda"):
            logits = net(x.contiguous(memory_format=torch.channels_last))
        p, c, _ = T.decode(logits.float())
        l1 = ((c - y).abs().sum(-1) * m).sum() / m.sum().clamp_min(1) * a.size
        js = (T.js_to_gaussian(p, y) * m).sum() / m.sum().clamp_min(1)
        opt.zero_grad(set_to_none=True)
        (l1 + js).backward()
        opt.step()
        if step % a.every == 0:
            evaluate()
            print(f"step {step} progress {pr:.2f} lr {lr:.5f} l1_px {l1.item():.2f} val_err_px {err:.2f} dev VHS MAE "
                  + " ".join(f"{k} {v:.3f}" for k, v in dev_err.items())
                  + f" elapsed {time.time() - t0:.0f}s", flush=True)
            save()
        step += 1
    evaluate()
    save()
    print(f"final step {step} val_err_px {err:.2f} dev VHS MAE "
          + " ".join(f"{k} {v:.3f}" for k, v in dev_err.items()), flush=True)


def load_ckpt(path, dev):
    ck = torch.load(path, map_location="cpu")
    net = build(ck["width"], dev, pretrained=False)
    net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in ck["state"].items()})
    return net


def evaluate_cmd(a):
    dev = torch.device(a.device)
    nets = [load_ckpt(p, dev) for p in a.checkpoints]
    for p in a.dev:
        x, y, _ = load_npz([p], dev)
        c = predict(nets, x)
        yn = y.cpu().numpy()
        print(f"== {os.path.basename(p)} ({len(x)} images)")
        for path, ci in zip(a.checkpoints, c):
            print(f"  {os.path.basename(path)}: {summary(vhs_errors(ci, yn))}")
        mean = c.mean(0)
        err = vhs_errors(mean, yn)
        spread = np.sqrt(((c - mean) ** 2).sum(-1).mean((0, 2)))
        print(f"  ensemble: {summary(err)}")
        q = np.quantile(spread, [0.25, 0.5, 0.75])
        for lo, hi, name in [(-1, q[0], "q1"), (q[0], q[1], "q2"), (q[1], q[2], "q3"), (q[2], 9, "q4")]:
            sel = (spread > lo) & (spread <= hi)
            print(f"    spread {name} (<= {min(hi, spread.max()):.4f}): n {sel.sum()} VHS MAE {err[sel].mean():.3f}")


def pack_cmd(a):
    packed = {}
    for p in a.checkpoints:
        ck = torch.load(p, map_location="cpu")
        ck["state"] = {k: v.half() if v.is_floating_point() else v for k, v in ck["state"].items()}
        packed[os.path.basename(p)] = ck
    torch.save(packed, a.out)
    print(f"packed {len(packed)} checkpoints into {a.out} ({os.path.getsize(a.out) / 1e6:.1f} MB)")


def unpack_cmd(a):
    os.makedirs(a.dir, exist_ok=True)
    for name, ck in torch.load(a.packed, map_location="cpu").items():
        ck["state"] = {k: v.float() if v.is_floating_point() else v for k, v in ck["state"].items()}
        torch.save(ck, os.path.join(a.dir, name))
        print("wrote", os.path.join(a.dir, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("member", help="train one ensemble member")
    m.add_argument("--data", nargs="+", required=True, help="training .npz files (cardiac/dataset.py)")
    m.add_argument("--dev", nargs="*", default=[], help="development .npz files: VHS MAE printed as it trains")
    m.add_argument("--seed", type=int, required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--init", help="continue from this checkpoint")
    m.add_argument("--init-onnx", help="continue from this exported member (e.g. ../cardiac_landmark_1.onnx), "
                                       "BatchNorm statistics fixed")
    m.add_argument("--max-rot", type=float, default=14.0, help="largest in-plane rotation of the augmentation, degrees")
    m.add_argument("--recipe", default="", help="a name recorded in the checkpoint")
    m.add_argument("--size", type=int, default=224)
    m.add_argument("--width", type=int, default=32)
    m.add_argument("--batch", type=int, default=64)
    m.add_argument("--max-lr", type=float, default=2e-3)
    m.add_argument("--enc-lr", type=float, default=0.3, help="encoder learning rate as a share of the decoder's")
    m.add_argument("--zoom-out", type=float, default=0.3)
    m.add_argument("--extra", action="store_true", help="strong_augment's extra randomisation")
    m.add_argument("--heart-only", action="store_true",
                   help="train the heart points only (the vertebral points leave the loss)")
    m.add_argument("--minutes", type=float, default=5.0)
    m.add_argument("--deadline", type=float, default=0.0, help="stop at this Unix time (overrides --minutes)")
    m.add_argument("--every", type=int, default=250)
    m.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    e = sub.add_parser("eval", help="VHS error of checkpoints and their mean on development sets")
    e.add_argument("--dev", nargs="+", required=True)
    e.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    e.add_argument("checkpoints", nargs="+")
    p = sub.add_parser("pack", help="checkpoints -> one fp16 file")
    p.add_argument("--out", required=True)
    p.add_argument("checkpoints", nargs="+")
    u = sub.add_parser("unpack", help="a packed file -> fp32 checkpoints in a folder")
    u.add_argument("packed")
    u.add_argument("dir")
    a = ap.parse_args()
    {"member": member, "eval": evaluate_cmd, "pack": pack_cmd, "unpack": unpack_cmd}[a.cmd](a)


if __name__ == "__main__":
    main()
