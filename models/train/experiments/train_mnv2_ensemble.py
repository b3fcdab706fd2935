#!/usr/bin/env python3
"""Train the five MobileNetV2 landmark models together, on a CPU budget.

The stem and blocks 0-10 of the encoder keep their ImageNet values
(cardiac/mobilenet.py), so their output for a given input never changes during
training. This trainer therefore runs that frozen trunk once per training
sample: it draws --augs randomised copies of every radiograph (the flips,
photometric jitter and domain randomisation of train_landmarks.augment and
strong_augment), stores the trunk's features (fp16), and then trains only
blocks 11-15 and the decoder of each ensemble member on them. On two CPU
cores that is several times faster per step than running the whole network,
at the price of a fixed pool of augmented samples instead of fresh ones.

Members differ in their decoder initialisation, data order and validation
split. Each checkpoint has train_landmarks' format (arch "mnv2"), so
cardiac/export_landmarks.py and experiments/evalpt.py take them unchanged.
"""
import argparse
import math
import os
import time

import numpy as np
import torch

from cardiac import mobilenet
from cardiac import train_landmarks as T

UPTO = 10


def build_cache(net, X, Y, M, idx, augs, seed, strong, batch=32):
    """Trunk features of augs augmented copies of X[idx] (augs=0: the plain
    images once): (f2, f5, f10) fp16, landmarks, masks."""
    g = torch.Generator().manual_seed(seed)
    f2s, f5s, f10s, ys, ms = [], [], [], [], []
    t0 = time.time()
    reps = max(augs, 1)
    for r in range(reps):
        for s in range(0, len(idx), batch):
            b = idx[s: s + batch]
            x = X[b].float().unsqueeze(1) / 255.0
            y, m = Y[b], M[b]
            if augs:
                x, y = T.augment(x, y, g)
                if strong:
                    x, y = T.strong_augment(x, y, g)
            with torch.no_grad():
                f2, f5, f10 = net.trunk(x, UPTO)
            f2s.append(f2.half())
            f5s.append(f5.half())
            f10s.append(f10.half())
            ys.append(y.float())
            ms.append(m)
        print(f"cache: copy {r + 1}/{reps} of {len(idx)} images, {time.time() - t0:.0f}s", flush=True)
    return torch.cat(f2s), torch.cat(f5s), torch.cat(f10s), torch.cat(ys), torch.cat(ms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="*", default=[], help="landmark .npz files (cardiac/dataset.py)")
    ap.add_argument("--dogheart", help="DogHeart/CCK folder (Images/, Labels/): its radiographs join the pool")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--width", type=int, default=32)
    ap.add_argument("--members", type=int, default=5)
    ap.add_argument("--seed", type=int, default=300)
    ap.add_argument("--augs", type=int, default=3, help="augmented copies of each radiograph")
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--max-lr", type=float, default=2e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cache", help="save/load the feature cache here")
    ap.add_argument("--out", required=True, help="checkpoint prefix: PREFIX_K.pt")
    ap.add_argument("--init", help="continue from the checkpoints PREFIX_K.pt of an earlier run (a further cycle)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if not a.data and not a.dogheart:
        ap.error("no data: give --data and/or --dogheart")
    imgs, lms, masks = T.load_data(a)
    X = torch.from_numpy(imgs)
    Y = torch.from_numpy(lms).float()
    Mk = torch.from_numpy(masks).float()
    n = len(X)
    perm = np.random.default_rng(a.seed).permutation(n)
    nval = max(8, n // 33)
    val, tr = perm[:nval], perm[nval:]
    weights = mobilenet.fetch_weights(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pretrained"))
    nets = []
    for k in range(a.members):
        torch.manual_seed(a.seed + 17 * k)
        net = mobilenet.MobileLandmarkNet(T.K, a.width)
        mobilenet.load_keras_weights(net.enc, weights)
        T.freeze_encoder(net, UPTO)
        if a.init:
            net.load_state_dict(torch.load(f"{a.init}_{k + 1}.pt", map_location="cpu")["state"])
        nets.append(net)
    trunk = nets[0]
    trunk.eval()
    if a.cache and os.path.exists(a.cache):
        cache = torch.load(a.cache)
        tr_f, va_f = cache["train"], cache["val"]
        print(f"cache loaded from {a.cache}", flush=True)
    else:
        tr_f = build_cache(trunk, X, Y, Mk, tr, a.augs, a.seed, True)
        va_f = build_cache(trunk, X, Y, Mk, val, 0, a.seed, False)
        if a.cache:
            torch.save({"train": tr_f, "val": va_f}, a.cache)
    N = len(tr_f[0])
    print(f"{N} cached training samples, {len(va_f[0])} validation; {a.members} members, {a.minutes} min", flush=True)
    opts = [torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=1e-4, weight_decay=1e-4)
            for net in nets]

    def set_train(net):
        net.train()
        net.enc.stem.eval()
        for b in net.enc.blocks[: UPTO + 1]:
            b.eval()

    for net in nets:
        set_train(net)
    budget, warm = a.minutes * 60.0, (0.05 if a.init else 0.1)

    def lr_at(pr):
        if pr < warm:
            return a.max_lr * (0.04 + 0.96 * pr / warm)
        q = (pr - warm) / (1 - warm)
        return a.max_lr * (1e-4 + 0.5 * (1 - 1e-4) * (1 + math.cos(math.pi * min(q, 1.0))))

    rngs = [np.random.default_rng(a.seed + 1000 + k) for k in range(a.members)]
    orders = [np.array([], dtype=int) for _ in nets]
    errs = [float("nan")] * a.members
    t0, step = time.time(), 0

    def validate(k):
        net = nets[k]
        net.eval()
        with torch.no_grad():
            f2, f5, f10, y, m = va_f
            _, c, _ = T.decode(net.from_trunk(f2.float(), f5.float(), f10.float(), UPTO))
            err = float((((c - y) ** 2).sum(-1).sqrt() * m).sum() / m.sum() * a.size)
        set_train(net)
        return err

    def save(k):
        torch.save({"state": nets[k].state_dict(), "size": a.size, "width": a.width, "seed": a.seed + 17 * k,
                    "arch": "mnv2", "frozen_bn": False, "step": step, "total": step,
                    "val_err_px": errs[k], "minutes": a.minutes, "augs": a.augs, "trunk_frozen_upto": UPTO},
                   f"{a.out}_{k + 1}.pt")

    while True:
        pr = (time.time() - t0) / budget
        if pr >= 1.0:
            break
        for k, (net, opt) in enumerate(zip(nets, opts)):
            for grp in opt.param_groups:
                grp["lr"] = lr_at(pr)
            if len(orders[k]) < a.batch:
                orders[k] = np.concatenate([orders[k], rngs[k].permutation(N)])
            idx, orders[k] = orders[k][: a.batch], orders[k][a.batch:]
            idx_t = torch.from_numpy(idx)
            f2, f5, f10 = (t[idx_t].float() for t in tr_f[:3])
            y, m = tr_f[3][idx_t], tr_f[4][idx_t]
            p, c, _ = T.decode(net.from_trunk(f2, f5, f10, UPTO))
            l1 = ((c - y).abs().sum(-1) * m).sum() / m.sum().clamp_min(1) * a.size
            js = (T.js_to_gaussian(p, y) * m).sum() / m.sum().clamp_min(1)
            opt.zero_grad()
            (l1 + js).backward()
            opt.step()
        if step % 200 == 0:
            errs = [validate(k) for k in range(a.members)]
            print(f"step {step} progress {pr:.2f} lr {lr_at(pr):.5f} l1_px(last) {l1.item():.2f} "
                  f"val_err_px {' '.join(f'{e:.2f}' for e in errs)} elapsed {time.time() - t0:.0f}s", flush=True)
            for k in range(a.members):
                save(k)
        step += 1
    errs = [validate(k) for k in range(a.members)]
    for k in range(a.members):
        save(k)
    print(f"final step {step} val_err_px {' '.join(f'{e:.2f}' for e in errs)}", flush=True)


if __name__ == "__main__":
    main()
