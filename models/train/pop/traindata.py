#!/usr/bin/python3
"""Training arrays for the PoP model family (issue 14). SYNTHETIC DATA.

Renders pop_variety composites at a small working size (long side WORK =
512 px, the size engine/pop resizes every frame to before its models run)
and stores what each model sees:

  x160  uint8 N x 3 x 160 x 160  the whole frame, stretched (corner models)
  pts   float N x 8 x 2          screen TL,TR,BR,BL then displayed image
                                 TL,TR,BR,BL, as shares of width and height
  present float N                1 screen photo, 0 no screen / plain file
  scr   uint8 N x 128 x 128      grey: the screen rectified with jittered
                                 truth corners (viewport model)
  vp    float N x 8              displayed-image corners in scr (shares)
  disp  uint8 N x 128 x 128      grey: the displayed image rectified with
                                 jittered corners (quality model)
  qual  float N x 3              blurred, glare over the heart, moire

Radiographs come from a pool of renders (seeds 30,900,000+) so a
composite costs a fraction of a second: the simulator's first world by
default; --pool-content xraysim,xraysim2,phantom mixes in the other
generators (pop_composites.CONTENTS), so that the viewport model learns a
radiograph's edge rather than one generator's look (docs/pop.md,
"Radiographs unlike the training screens'"; leave one generator out to
measure it with make eval-popnet's content sets). Two worlds alone
taught mostly those two worlds (docs/pop.md, "round 8"), so --looks P
also shows a share P of the displayed radiographs as a viewer may:
inverted, windowed, cropped tight, or inside a black or white surround;
--dark-looks keeps the bright ones out (no inverted view, no white
surround), since a white surround is a light viewer's own chrome to a
finder that cannot tell them apart (docs/pop.md, "round 9"), and
--no-invert keeps only the inverted view out: viewers rarely show one,
while white collimation borders are common (docs/pop.md, "round 10");
--visible-truth stops the viewport model's target where the picture can
be seen to end, leaving out a surround no different from the screen
beside it (docs/pop.md, "round 12"); --air-looks Q draws a share Q of the
surrounds as wide air around a smaller body, fading into it, as real
radiographs and sim/phantom.py's show it (docs/pop.md, "round 15").
Families can be left out (--exclude AXIS=F1,F2) for the
leave-one-family-out check.

Usage: python3 -m pop.traindata OUT.npz --n 5000 --neg 1500 --seed0 30100000 [--exclude display=tv ...]

With --seconds S, --n and --neg are upper bounds: screen photos and
negatives are drawn interleaved (in the --n : --neg ratio) until S seconds
of generation have passed, so the set is as large as the machine makes
in that time (train_pop_gpu.sh).
"""
import argparse
import math
import os
import time
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageDraw

from pop import composites as pc
from pop import variety as pv

WORK = 512
POOL_SEED = 30_900_000

_pool = None


def _pool_render(arg):
    """Pool image k: a grey render of contents[k % len(contents)] with a
    long side of 260-520 px."""
    k, contents = arg
    content = contents[k % len(contents)]
    long_side = int(np.random.default_rng(k).integers(260, 520))
    im = pc._render(content, POOL_SEED + k, grey=True, long_side=long_side)[0]
    if content == "phantom":  # sim/phantom.py picks its own size
        f = long_side / max(im.size)
        im = im.resize((max(1, round(im.size[0] * f)), max(1, round(im.size[1] * f))), Image.BILINEAR)
    return np.asarray(im.convert("L"))


def load_pool(n, path, workers=1, contents=None):
    """The radiograph pool: read from path (made with the same contents,
    when contents is given), or n renders of contents (default the first
    world) written there."""
    global _pool
    if _pool is None:
        if os.path.exists(path):
            z = np.load(path, allow_pickle=True)
            made = tuple(str(c) for c in z["contents"]) if "contents" in z.files else ("xraysim",)
            if contents is not None and made != tuple(contents):
                raise SystemExit(f"{path} holds a pool of {made}, not {contents}: choose another --pool-path")
            _pool = list(z["imgs"])
        else:
            contents = tuple(contents or ("xraysim",))
            args = [(k, contents) for k in range(n)]
            if workers > 1:
                with Pool(workers) as p:
                    _pool = p.map(_pool_render, args)
            else:
                _pool = [_pool_render(a) for a in args]
            np.savez_compressed(path, imgs=np.array(_pool, dtype=object), contents=np.array(contents), allow_pickle=True)
    return _pool


# Share of displayed radiographs given another look (--looks); 0 keeps
# every frame as before.
_looks = 0.0
# False keeps the inverted view out (--no-invert, --dark-looks).
_invert = True
# False draws a black surround where a white one was drawn (--dark-looks).
_white = True
# True moves the viewport target onto the visible edge where a look's
# surround cannot be told from the screen around it (--visible-truth).
_visible = False
# Grey levels between a surround and the screen beside it under which the
# surround's outer edge counts as invisible (--visible-truth).
VISIBLE_CONTRAST = 12.0
# Share of other_look's surrounds drawn as wide air instead (--air-looks);
# 0 makes the same draws as before.
_air = 0.0


def other_look(rng, a):
    """other_look_box's image alone."""
    return other_look_box(rng, a)[0]


def other_look_box(rng, a):
    """A grey radiograph as a viewer may show it, not as the pool rendered
    it: inverted (a MONOCHROME1 study, a negative view), windowed and
    gamma-corrected, cropped tight (body to the edge), or with a black or
    white surround (shutters, collimation, the air sim/phantom.py ends in).
    The surround belongs to the displayed image, so the truth still
    covers it. Each look is drawn on its own. With _invert False the
    inverted view is skipped; with _white False every surround is black.
    The same draws are made either way, so the frames around it do not
    change. Returns (image, surround): surround is (left, top, right,
    bottom) in pixels of the returned image, zeros without one."""
    a = a.astype(np.float32)
    if rng.random() < 0.25 and _invert:
        a = 255 - a
    if rng.random() < 0.5:
        lo, hi = np.percentile(a, [rng.uniform(0, 20), rng.uniform(80, 100)])
        a = np.clip((a - lo) / max(hi - lo, 1.0), 0, 1) ** rng.uniform(0.6, 1.6) * 255
    h, w = a.shape
    if rng.random() < 0.3:
        t, b, l, r = (rng.uniform(0, 0.12, 4) * [h, h, w, w]).astype(int)
        a = a[t:h - b, l:w - r]
    k = rng.random()
    box = (0, 0, 0, 0)
    if k < 0.4 and _air > 0 and rng.random() < _air:
        a, box = air_field(rng, a)
    elif k < 0.4:
        fill = rng.uniform(0, 12) if k < 0.3 or not _white else rng.uniform(225, 255)
        t, b, l, r = (rng.uniform(0.02, 0.15, 4) * [h, h, w, w]).astype(int)
        out = np.full((a.shape[0] + t + b, a.shape[1] + l + r), fill, np.float32)
        out[t:t + a.shape[0], l:l + a.shape[1]] = a
        a = out
        box = (int(l), int(t), int(r), int(b))
    return np.clip(a, 0, 255).astype(np.uint8), box


# Lead markers and burned-in text a radiograph's air may carry.
AIR_MARKS = ("R", "L", "R LAT", "L LAT", "RT", "LT", "DX", "SX")


def air_field(rng, a):
    """a as a smaller body inside wide, flat air (an open collimator, a
    small patient, a detector larger than the thorax): each side gains
    air of 5-35 % of the image's size with a share of 0.8 (else none),
    the body fades into it over a soft margin rather than ending in a
    step, and the air, near black with a faint heel gradient and quantum
    noise, may carry a white lead marker or a line of burned-in text.
    The air belongs to the displayed image, as a surround does. Returns
    (image, (left, top, right, bottom) air widths in pixels)."""
    h, w = a.shape
    grow = np.where(rng.random(4) < 0.8, rng.uniform(0.05, 0.35, 4), 0.0)
    l, t, r, b = (grow * [w, h, w, h]).astype(int)
    level = rng.uniform(0, 8)
    # The body fades over a margin on each side that gains air.
    f = max(2.0, rng.uniform(0.03, 0.12) * min(h, w))
    ramp = lambda n, lo, hi: np.minimum(
        np.clip(np.arange(n) / f, 0, 1) if lo else np.ones(n),
        np.clip(np.arange(n)[::-1] / f, 0, 1) if hi else np.ones(n))
    m = np.outer(ramp(h, t, b), ramp(w, l, r))
    m = m * m * (3 - 2 * m)  # smoothstep
    H, W = h + t + b, w + l + r
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    g = rng.uniform(-1, 1, 2) * rng.uniform(0, 4)
    out = level + g[0] * (xx / W - 0.5) + g[1] * (yy / H - 0.5)
    body = out[t:t + h, l:l + w]
    out[t:t + h, l:l + w] = a * m + body * (1 - m)
    out += rng.normal(0, rng.uniform(0, 2.0), out.shape)
    sides = [i for i, v in enumerate((l, t, r, b)) if v > 0]
    if sides and rng.random() < 0.6:
        side = sides[int(rng.integers(len(sides)))]
        if rng.random() < 0.6:
            text = AIR_MARKS[int(rng.integers(len(AIR_MARKS)))]
        else:
            text = f"{int(rng.integers(10000, 99999))} {int(rng.integers(1, 28)):02d}.{int(rng.integers(1, 13)):02d}"
        lab = Image.new("L", (6 * len(text) + 4, 14), 0)
        ImageDraw.Draw(lab).text((2, 1), text, fill=255)
        band = (l, t, r, b)[side]
        scale = max(1.0, min(rng.uniform(0.03, 0.07) * H / 14, 0.8 * band / 14 if side % 2 else 0.8 * band / lab.width))
        lab = np.asarray(lab.resize((max(1, int(lab.width * scale)), max(1, int(14 * scale))), Image.BILINEAR), np.float32)
        lh, lw = lab.shape
        # Somewhere in the band of the chosen side, inside the image.
        x0 = {0: (0, l - lw), 2: (l + w, W - lw)}.get(side, (0, W - lw))
        y0 = {1: (0, t - lh), 3: (t + h, H - lh)}.get(side, (0, H - lh))
        if x0[1] > x0[0] and y0[1] > y0[0]:
            x, y = int(rng.integers(*x0)), int(rng.integers(*y0))
            patch = out[y:y + lh, x:x + lw]
            out[y:y + lh, x:x + lw] = np.maximum(patch, lab / 255 * rng.uniform(200, 255))
    return np.clip(out, 0, 255).astype(np.float32), (int(l), int(t), int(r), int(b))


def pool_radiograph(D, w, h):
    """A pool radiograph of exactly w x h, maybe in another look, maybe
    mirrored: (image, None, meta). meta is None, or {"surround": (left,
    top, right, bottom)} as shares of the image's width and height when
    the look drew a surround."""
    a = _pool[int(D.rng.integers(len(_pool)))]
    meta = None
    if _looks > 0 and D.rng.random() < _looks:
        a, box = other_look_box(D.rng, a)
        if any(box):
            ah, aw = a.shape
            meta = {"surround": (box[0] / aw, box[1] / ah, box[2] / aw, box[3] / ah)}
    im = Image.fromarray(a)
    if D.rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
        if meta:
            l, t, r, b = meta["surround"]
            meta["surround"] = (r, t, l, b)
    return im.resize((max(1, w), max(1, h)), Image.BILINEAR), None, meta


def visible_rect(s, contrast=None):
    """The displayed image's rectangle (content pixels, x0, y0, x1, y1) as
    the screen shows it: a side whose look drew a surround that differs
    from the screen just outside it by less than contrast grey levels
    (VISIBLE_CONTRAST) is moved in to the surround's inner edge, where
    the picture can be seen to end. Without a surround, s["rect"]."""
    x0, y0, x1, y1 = s["rect"]
    sur = (s.get("meta") or {}).get("surround")
    if not sur:
        return (x0, y0, x1, y1)
    contrast = VISIBLE_CONTRAST if contrast is None else contrast
    plane = np.asarray(s["plane"].convert("L"), np.float32)
    alpha = np.asarray(s["plane"].getchannel("A")) > 0
    ox, oy = s["off"]
    X0, Y0, X1, Y1 = x0 + ox, y0 + oy, x1 + ox, y1 + oy
    w, h = x1 - x0, y1 - y0
    l, t, r, b = sur
    inner = [x0 + l * w, y0 + t * h, x1 - r * w, y1 - b * h]
    k = 3  # strip width, pixels

    def strips(side):
        if side == 0:
            return (slice(Y0, Y1), slice(X0, X0 + k)), (slice(Y0, Y1), slice(X0 - k, X0))
        if side == 1:
            return (slice(Y0, Y0 + k), slice(X0, X1)), (slice(Y0 - k, Y0), slice(X0, X1))
        if side == 2:
            return (slice(Y0, Y1), slice(X1 - k, X1)), (slice(Y0, Y1), slice(X1, X1 + k))
        return (slice(Y1 - k, Y1), slice(X0, X1)), (slice(Y1, Y1 + k), slice(X0, X1))

    out = [x0, y0, x1, y1]
    for side, share in enumerate(sur):
        if share * (w if side % 2 == 0 else h) < 1:
            continue
        ins, outs = strips(side)
        if min(outs[0].start, outs[1].start) < 0 or outs[0].stop > plane.shape[0] or outs[1].stop > plane.shape[1]:
            continue  # nothing beside it to compare: keep the truth
        if not alpha[outs].all():
            continue  # the room shows through beside it: keep the truth
        if abs(float(plane[ins].mean()) - float(plane[outs].mean())) < contrast:
            out[side] = inner[side]
    return tuple(out)


def rectify(arr, quad, size=128):
    """Grey size x size image of quad (TL, TR, BR, BL) of arr."""
    Hm = pc.homography([(0, 0), (size, 0), (size, size), (0, size)], quad)  # out -> frame
    Hm = Hm / Hm[2, 2]
    im = Image.fromarray(arr).convert("L")
    return np.asarray(im.transform((size, size), Image.PERSPECTIVE, tuple(Hm.flatten()[:8]), Image.BILINEAR))


def _jitter(rng, q, amount):
    q = np.asarray(q, float)
    d = np.hypot(*(q[2] - q[0]))
    return q + rng.normal(0, amount * d, q.shape)


def positive(seed, exclude):
    rng = np.random.default_rng(seed)
    W0, H0 = pc.FRAME_SIZES[int(rng.integers(len(pc.FRAME_SIZES)))]
    sc = WORK / max(W0, H0)
    W, H = int(round(W0 * sc)), int(round(H0 * sc))
    s = pv.scene(seed, W, H, pool_radiograph, split="train", exclude=exclude, scale=sc)
    blur = None
    if rng.random() < 0.2:  # heavily blurred frames for the quality model
        blur = rng.uniform(3, 14)
    arr, t = pv.frame(s, defocus=blur)
    x = np.asarray(Image.fromarray(arr).resize((160, 160), Image.BOX)).transpose(2, 0, 1)
    pts = np.concatenate([np.asarray(t["screen"]), np.asarray(t["corners"])]) / [W, H]
    sq = _jitter(rng, t["screen"], 0.006)
    scr = rectify(arr, sq)
    Hb = pc.homography(sq, [(0, 0), (1, 0), (1, 1), (0, 1)])
    target = t["corners"]
    if _visible:
        vr = visible_rect(s)
        if vr != tuple(s["rect"]):
            # The same camera: content rectangle -> frame, through the
            # true corners; then the visible rectangle's corners.
            x0, y0, x1, y1 = s["rect"]
            Hc = pc.homography([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], t["corners"])
            a0, b0, a1, b1 = vr
            target = pc.apply_h(Hc, [(a0, b0), (a1, b0), (a1, b1), (a0, b1)])
    vp = pc.apply_h(Hb, target).reshape(-1)
    disp = rectify(arr, _jitter(rng, t["corners"], 0.004))
    qual = [t["blur_rel"] > 0.008, t["glare_heart"] > 0.25, t["moire"] > 0.07]
    return x, pts, 1.0, scr, vp, disp, np.array(qual, np.float32)


def dev_frame(seed, out, i):
    """One development frame as pop_composites writes them (JPEG + truth),
    rendered like the training arrays (512 px working size, pool
    radiographs): for setting thresholds without touching held-out sets."""
    rng = np.random.default_rng(seed)
    W0, H0 = pc.FRAME_SIZES[int(rng.integers(len(pc.FRAME_SIZES)))]
    sc = WORK / max(W0, H0)
    W, H = int(round(W0 * sc)), int(round(H0 * sc))
    s = pv.scene(seed, W, H, pool_radiograph, split="train", scale=sc)
    arr, t = pv.frame(s)
    t.update(usable=not t["cut_off"], kind="vscreen")
    return pc._write(out, f"dev_{i:04d}.jpg", arr, s["look"].quality, t)


def negative(seed):
    """No screen: a room, a plain radiograph file (grey, tinted, bordered), black."""
    rng = np.random.default_rng(seed)
    D = pv.Draw(rng, "train")
    k = rng.random()
    if k < 0.45:
        W, H = [(512, 288), (384, 512), (512, 384)][int(rng.integers(3))]
        a = pv.room(D, D.choice(pv.AXES["room"]), W, H)
        img = Image.fromarray(np.clip(a + rng.normal(0, D.u(1, 8), a.shape), 0, 255).astype(np.uint8))
        if rng.random() < 0.3:
            pv._occluder(D, img, (D.u(0, W), D.u(0, H)), W, H)
        arr = np.asarray(img)
    elif k < 0.9:
        a = _pool[int(rng.integers(len(_pool)))].astype(np.float32) / 255
        if rng.random() < 0.5:
            lo, hi = rng.uniform(0, 45, 3), rng.uniform(195, 255, 3)
            rgb = lo + (hi - lo) * a[..., None]
        else:
            rgb = np.repeat(a[..., None] * 255, 3, -1)
        if rng.random() < 0.5:
            bw = max(1, int(rng.uniform(0.005, 0.04) * min(a.shape)))
            out = np.full((a.shape[0] + 2 * bw, a.shape[1] + 2 * bw, 3), rng.uniform(0, 255), np.float32)
            out[bw:-bw, bw:-bw] = rgb
            rgb = out
        img = Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8))
        if rng.random() < 0.25:
            d = ImageDraw.Draw(img)
            p = rng.uniform(0.2, 0.8, 4) * (img.size * 2)
            d.line([tuple(p[:2]), tuple(p[2:])], fill=(255, 255, 0), width=2)
        arr = np.asarray(img)
    else:
        arr = np.clip(rng.normal(rng.uniform(0, 8), rng.uniform(0.5, 3), (288, 512, 3)), 0, 255).astype(np.uint8)
    x = np.asarray(Image.fromarray(arr).resize((160, 160), Image.BOX)).transpose(2, 0, 1)
    z = np.zeros((128, 128), np.uint8)
    return x, np.zeros((8, 2)), 0.0, z, np.zeros(8), z, np.zeros(3, np.float32)


def _job(a):
    global _looks, _invert, _white, _visible, _air
    kind, seed, exclude, pool_path, (_looks, _invert, _white, _visible, _air) = a[:5]
    load_pool(0, pool_path)
    if kind == "dev":
        return dev_frame(seed, a[5], a[6])
    return positive(seed, exclude) if kind == "pos" else negative(seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--neg", type=int, default=1500)
    ap.add_argument("--seed0", type=int, default=30_100_000)
    ap.add_argument("--pool", type=int, default=240)
    ap.add_argument("--pool-path", default="", help="default data/pop_pool.npz, or data/pop_pool_C1+C2.npz for other contents")
    ap.add_argument("--pool-content", default="xraysim", metavar="C1[,C2]",
                    help=f"generators of the pool's radiographs, from {pc.CONTENTS}")
    ap.add_argument("--looks", type=float, default=0.0, metavar="P",
                    help="give this share of the displayed radiographs another look (other_look: inverted, "
                         "windowed, cropped tight, a black or white surround); 0 keeps every frame as before")
    ap.add_argument("--dark-looks", action="store_true",
                    help="with --looks: no bright look (no inverted view, every surround black)")
    ap.add_argument("--no-invert", action="store_true",
                    help="with --looks: no inverted view (white surrounds stay)")
    ap.add_argument("--visible-truth", action="store_true",
                    help="with --looks: the viewport model's target stops where the displayed image can be seen "
                         "to end: a surround no different from the screen beside it (VISIBLE_CONTRAST) is left out")
    ap.add_argument("--air-looks", type=float, default=0.0, metavar="Q",
                    help="with --looks: draw this share of the surrounds as wide air around a smaller body (air_field: "
                         "a soft edge, a heel gradient, noise, a lead marker); 0 makes the same draws as before")
    ap.add_argument("--exclude", action="append", default=[], metavar="AXIS=F1[,F2]")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=0, help="stop generating after this many seconds (--n, --neg: upper bounds)")
    ap.add_argument("--dev-frames", default="", metavar="DIR",
                    help="write --n development frames (JPEG + truth_vscreen.json) to DIR instead of arrays")
    a = ap.parse_args()
    contents = tuple(a.pool_content.split(","))
    for c in contents:
        if c not in pc.CONTENTS:
            raise SystemExit(f"unknown --pool-content {c!r}: one of {pc.CONTENTS}")
    if not a.pool_path:
        a.pool_path = "data/pop_pool.npz" if contents == ("xraysim",) else f"data/pop_pool_{'+'.join(contents)}.npz"
    os.makedirs(os.path.dirname(os.path.abspath(a.pool_path)), exist_ok=True)
    looks = (a.looks, not (a.dark_looks or a.no_invert), not a.dark_looks, a.visible_truth, a.air_looks)  # _job's share, _invert, _white, _visible, _air
    t0 = time.time()
    load_pool(a.pool, a.pool_path, a.workers, contents)
    print(f"radiograph pool: {len(_pool)} images ({time.time() - t0:.1f} s)", flush=True)
    if a.dev_frames:
        os.makedirs(a.dev_frames, exist_ok=True)
        with Pool(a.workers) as p:
            items = p.map(_job, [("dev", a.seed0 + i, {}, a.pool_path, looks, a.dev_frames, i) for i in range(a.n)])
        import json
        with open(os.path.join(a.dev_frames, "truth_vscreen.json"), "w") as f:
            json.dump({"kind": "vscreen", "seed0": a.seed0, "n": a.n, "split": "train", "items": items}, f, indent=1)
        print(f"wrote {len(items)} development frames to {a.dev_frames}")
        return
    exclude = pc.parse_families(a.exclude)
    jobs = [("pos", a.seed0 + i, exclude, a.pool_path, looks) for i in range(a.n)]
    jobs += [("neg", a.seed0 + 500_000 + i, exclude, a.pool_path, looks) for i in range(a.neg)]
    if a.seconds:
        # Interleaved, so that any prefix keeps the ratio; stop at the time.
        jobs.sort(key=lambda j: (j[1] - a.seed0) / max(a.n, 1) if j[0] == "pos" else (j[1] - a.seed0 - 500_000) / max(a.neg, 1))
        t1, res = time.time(), []
        with Pool(a.workers) as p:
            for r in p.imap(_job, jobs, chunksize=8):
                res.append(r)
                if time.time() - t1 > a.seconds:
                    p.terminate()
                    break
        dt = time.time() - t1
        npos = sum(1 for r in res if r[2] > 0.5)
        print(f"generated {npos} screen photos and {len(res) - npos} negatives in {dt:.0f} s on {a.workers} workers "
              f"({dt * a.workers / max(len(res), 1):.3f} worker-s per frame)", flush=True)
    else:
        with Pool(a.workers) as p:
            res = p.map(_job, jobs, chunksize=16)
    cols = list(zip(*res))
    np.savez(a.out, x160=np.stack(cols[0]).astype(np.uint8), pts=np.stack(cols[1]).astype(np.float32),
             present=np.array(cols[2], np.float32), scr=np.stack(cols[3]), vp=np.stack(cols[4]).astype(np.float32),
             disp=np.stack(cols[5]), qual=np.stack(cols[6]), exclude=str(exclude))
    print(f"wrote {len(res)} samples to {a.out}")


if __name__ == "__main__":
    main()
