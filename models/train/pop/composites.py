#!/usr/bin/python3
"""Screen-photo (picture-of-picture, PoP) composites with exact truth.

SYNTHETIC DATA. A simulated radiograph (sim/xraysim.py, the physically based
simulator; sim/phantom.py before v3.1) is shown on a monitor,
either full screen or inside a viewer window with toolbars and side panels,
and "photographed": bezel, room background, perspective (camera yaw/pitch up
to about 35 degrees), roll, screen glare and window reflections, moire,
viewing-angle falloff, defocus and motion blur, sensor noise, colour cast,
exposure and JPEG compression.

Truth per frame (pixels of the frame, continuous coordinates, pixel (i, j)
spans [i, i+1] x [j, j+1]):
  corners   TL, TR, BR, BL of the displayed image area: the whole screen in
            full-screen mode, the image viewport in viewer mode
  screen    TL, TR, BR, BL of the monitor's active area (equal to corners in
            full-screen mode)
  landmarks the phantom's 7 landmarks as they appear in the frame
  vhs, vlas measured on the phantom (invariant to the display)
  usable    false for frames made unusable on purpose (kind no_screen,
            heavy_blur, black)

Kinds: "screen" (usable single frame), "sequence" (N consecutive frames of
one monitor with hand shake; some frames blurred), "no_screen", "heavy_blur",
"black", "radiograph" (a plain grey radiograph file, the PoP detector's
negative class) and "radiograph_export" (plain radiograph files as viewers
and clinics export them: a display tint, a tight crop through the body, a
thin dark or light border, coloured measurement lines; also negatives).

Kinds "vscreen" and "vsequence" are the variety composites of
pop/variety.py (issue 14): display, viewer-layout and room families,
tilt up to 45 degrees, cut-off screens, hands and phones over a corner.
--split heldout draws every continuous setting from bins training never
uses; --only AXIS=FAMILY and --exclude AXIS=FAMILY[,FAMILY] pick or leave
out families (axes: display, layout, room). --content picks the generator
of the radiographs on the screens (CONTENTS: the simulator's first world,
as in training, its second world, or sim/phantom.py), so the finder can be
measured on radiographs unlike its training screens'; --content-dir DIR
shows a folder's own images (a clinic's radiographs), without landmarks.

Seeds: every composite seed also seeds its phantom. Ranges in use elsewhere:
phantom training 1000-7000 (train_cardiac.sh), cardiac held-out 10,000,000+,
negatives 90,000,000+. PoP composites use POP_TRAIN_SEED_BASE for training
and fixtures and POP_HELDOUT_SEED_BASE for evaluation only.

Usage:
  python3 -m pop.composites OUT --kind screen --n 150 --seed0 40000000 [--size 1280x720]
  python3 -m pop.composites OUT --kind sequence --n 30 --frames 8 --seed0 41000000
"""
import argparse
import functools
import io
import json
import math
import os
from multiprocessing import Pool

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy import ndimage

from sim import phantom
from pop import variety as pop_variety
from pop.geometry import apply_h, homography, motion_kernel, rot, shaken
from sim import xraysim

POP_TRAIN_SEED_BASE = 30_000_000
POP_HELDOUT_SEED_BASE = 40_000_000

FRAME_SIZES = [(1280, 720), (1920, 1080), (1024, 768), (1600, 1200), (1280, 960), (720, 1280), (1080, 1440)]
SCREEN_ASPECTS = [16 / 9, 16 / 10, 5 / 4, 4 / 3, 16 / 9, 16 / 10]
KINDS = ("screen", "sequence", "no_screen", "heavy_blur", "black", "radiograph", "radiograph_export",
         "vscreen", "vsequence")


# ---------------------------------------------------------------- geometry

class Pose:
    """Camera pose of a planar monitor: yaw/pitch/roll (radians), the screen
    centre's offset (fractions of the frame) and its width share of the frame."""

    def __init__(self, rng, max_tilt=35.0):
        t = math.radians(rng.uniform(0, max_tilt))
        a = rng.uniform(0, 2 * math.pi)
        self.yaw, self.pitch = t * math.cos(a), t * math.sin(a)
        self.roll = math.radians(rng.normal(0, 5.0))
        self.cx, self.cy = rng.uniform(-0.08, 0.08), rng.uniform(-0.08, 0.08)
        self.share = rng.uniform(0.5, 0.92)
        self.focal = rng.uniform(0.8, 1.5)

    def shaken(self, rng, amount=1.0):
        """This pose moved by a hand's shake (pop_geometry.shaken)."""
        return shaken(self, rng, amount)

    def project(self, W, H, plane_w, plane_h, pts):
        """Project plane points (pixels of a plane_w x plane_h plane image,
        centred on the screen) into a W x H frame."""
        f = self.focal * max(W, H)
        R = rot(self.yaw, self.pitch, self.roll)
        # Plane in metres-ish units: width 1.
        s = 1.0 / plane_w
        P = np.c_[(np.asarray(pts, float) - [plane_w / 2, plane_h / 2]) * s, np.zeros(len(pts))]
        # Distance so the plane's width covers `share` of the frame width.
        Z = f * 1.0 / (self.share * W)
        C = np.array([self.cx * W * Z / f, self.cy * H * Z / f, Z])
        X = P @ R.T + C
        return np.c_[f * X[:, 0] / X[:, 2] + W / 2, f * X[:, 1] / X[:, 2] + H / 2]


# ---------------------------------------------------------------- content

def _viewer(rng, cw, ch):
    """A viewer window: panel image (RGB) and the viewport rectangle."""
    base = np.array([rng.uniform(20, 80)] * 3) + rng.uniform(-6, 10, 3)
    img = Image.new("RGB", (cw, ch), tuple(int(v) for v in base))
    d = ImageDraw.Draw(img)
    top = int(ch * rng.uniform(0.05, 0.11))
    bottom = int(ch * rng.uniform(0.0, 0.05))
    left = int(cw * rng.choice([0.0, rng.uniform(0.08, 0.18)]))
    right = int(cw * rng.choice([0.0, rng.uniform(0.1, 0.2)]))
    tb = tuple(int(v) for v in np.clip(base + rng.uniform(-15, 25), 0, 255))
    d.rectangle([0, 0, cw, top], fill=tb)
    # toolbar icons and menu text
    x = int(cw * 0.01)
    while x < cw * 0.7:
        s = int(top * rng.uniform(0.35, 0.6))
        y = (top - s) // 2
        col = tuple(int(v) for v in np.clip(base + rng.uniform(60, 170), 0, 255))
        if rng.random() < 0.5:
            d.rectangle([x, y, x + s, y + s], outline=col, width=max(1, s // 8))
        else:
            d.ellipse([x, y, x + s, y + s], fill=col)
        x += int(s * rng.uniform(1.4, 2.2))
    if left:  # thumbnail strip
        y = top + 8
        while y < ch - bottom - left * 0.6:
            th = int(left * 0.75)
            g = int(rng.uniform(30, 120))
            d.rectangle([6, y, left - 6, y + th], fill=(g, g, g), outline=(150, 150, 160))
            y += th + 10
    if right:  # info panel text lines
        for i in range(int(rng.integers(4, 14))):
            y = top + 10 + i * 18
            if y > ch - bottom - 20:
                break
            col = tuple(int(v) for v in np.clip(base + rng.uniform(80, 160), 0, 255))
            d.rectangle([cw - right + 8, y, cw - right + 8 + int(right * rng.uniform(0.3, 0.85)), y + 6], fill=col)
    if bottom:
        d.rectangle([0, ch - bottom, cw, ch], fill=tuple(int(v) for v in np.clip(base - 10, 0, 255)))
    vp = (left, top, cw - right, ch - bottom)
    return img, vp


def make_content(rng, seed, heldout_phantom=False):
    """Screen content (RGB PIL image of the active area), the displayed
    image rectangle in it, the phantom truth mapped into content pixels and
    the phantom meta."""
    asp = SCREEN_ASPECTS[int(rng.integers(len(SCREEN_ASPECTS)))]
    cw = int(rng.integers(900, 1300))
    ch = int(round(cw / asp))
    if rng.random() < 0.5:
        img, vp = Image.new("RGB", (cw, ch)), (0, 0, cw, ch)
        mode = "fullscreen"
    else:
        img, vp = _viewer(rng, cw, ch)
        mode = "viewer"
    pw, ph = vp[2] - vp[0], vp[3] - vp[1]
    ph_img, truth, meta = xraysim.generate(seed, pw, ph, heldout=heldout_phantom, present_opts={"lightbox": False})
    img.paste(ph_img.convert("RGB"), (vp[0], vp[1]))
    lm = {k: [float(v[0]) + vp[0], float(v[1]) + vp[1]] for k, v in truth.items()}
    return img, vp, lm, meta, mode


# ---------------------------------------------------------------- scene

def room(rng, W, H):
    """Room background: wall gradient, furniture blocks, a window, a desk."""
    base = rng.uniform(40, 200, 3)
    gy = np.linspace(0, 1, H)[:, None, None]
    gx = np.linspace(0, 1, W)[None, :, None]
    a = base + (rng.uniform(-40, 40, 3) * gy) + (rng.uniform(-30, 30, 3) * gx)
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(2, 8))):
        x0, y0 = rng.uniform(-0.2, 1) * W, rng.uniform(-0.2, 1) * H
        x1, y1 = x0 + rng.uniform(0.05, 0.5) * W, y0 + rng.uniform(0.05, 0.5) * H
        col = tuple(int(v) for v in rng.uniform(0, 255, 3))
        if rng.random() < 0.7:
            d.rectangle([x0, y0, x1, y1], fill=col)
        else:
            d.ellipse([x0, y0, x1, y1], fill=col)
    # desk edge
    y = rng.uniform(0.75, 1.0) * H
    d.rectangle([0, y, W, H], fill=tuple(int(v) for v in rng.uniform(60, 200, 3)))
    a = np.asarray(img, np.float32)
    a += ndimage.gaussian_filter(rng.normal(0, 12, (H // 8 + 1, W // 8 + 1)), 2).repeat(8, 0).repeat(8, 1)[:H, :W, None]
    return a


def monitor_plane(rng, content):
    """Content plus bezel as one plane image; returns (image, offset of the
    active area in it)."""
    cw, ch = content.size
    b = int(cw * rng.uniform(0.012, 0.05))
    bb = b + int(cw * rng.uniform(0.0, 0.04))  # thicker bottom bezel
    if rng.random() < 0.8:
        col = tuple(int(v) for v in rng.uniform(8, 45, 3).clip(0, 255))
    else:
        col = tuple(int(v) for v in rng.uniform(150, 210, 3).clip(0, 255))
    plane = Image.new("RGB", (cw + 2 * b, ch + b + bb), col)
    plane.paste(content, (b, b))
    return plane, (b, b)


def warp(plane, Hm, W, H):
    """Warp a plane image into a W x H frame by homography Hm (plane->frame);
    returns float RGB and the coverage mask (0..1)."""
    Hi = np.linalg.inv(Hm)
    Hi = Hi / Hi[2, 2]
    coeffs = tuple(Hi.flatten()[:8])
    img = plane.transform((W, H), Image.PERSPECTIVE, coeffs, Image.BICUBIC)
    mask = Image.new("L", plane.size, 255).transform((W, H), Image.PERSPECTIVE, coeffs, Image.BILINEAR)
    return np.asarray(img, np.float32), np.asarray(mask, np.float32)[..., None] / 255.0


class Look:
    """Per-scene photographic parameters (fixed across a sequence)."""

    def __init__(self, rng):
        self.gain = rng.uniform(0.7, 1.25)
        self.cast = rng.uniform(0.85, 1.15, 3)
        self.noise = rng.uniform(1.0, 7.0)
        self.quality = int(rng.integers(55, 95))
        self.glare = rng.random() < 0.6
        self.glare_amp = rng.uniform(0.1, 0.55)
        self.glare_pos = rng.uniform(0.1, 0.9, 2)
        self.glare_size = rng.uniform(0.05, 0.25)
        self.reflect = rng.random() < 0.35
        self.moire = rng.random() < 0.6
        self.moire_amp = rng.uniform(0.03, 0.12)
        self.moire_f = rng.uniform(0.06, 0.25, 2) * rng.choice([-1, 1], 2)
        self.falloff = rng.uniform(0.0, 0.35, 2) * rng.choice([-1, 1], 2)
        self.screen_gamma = rng.uniform(0.85, 1.2)
        self.black_level = rng.uniform(0, 25)
        self.defocus = rng.uniform(0.0, 1.6)
        self.motion = rng.uniform(0.0, 4.0)


def photograph(rng, W, H, bg, content, plane_off, plane, pose, look, defocus, motion):
    """Render one frame; returns (uint8 RGB array, plane->frame homography)."""
    pw, ph = plane.size
    src = [(0, 0), (pw, 0), (pw, ph), (0, ph)]
    dst = pose.project(W, H, pw, ph, src)
    Hm = homography(src, dst)
    # Screen emission: gamma, black level, viewing-angle falloff.
    a = np.asarray(plane, np.float32) / 255.0
    a = a ** look.screen_gamma
    ox, oy = plane_off
    cw, ch = content.size
    yy, xx = np.mgrid[0:ph, 0:pw].astype(np.float32)
    u, v = (xx - ox) / cw - 0.5, (yy - oy) / ch - 0.5
    active = (u >= -0.5) & (u < 0.5) & (v >= -0.5) & (v < 0.5)
    emit = np.clip(1 + look.falloff[0] * u + look.falloff[1] * v, 0.5, 1.5)[..., None]
    a = np.where(active[..., None], (look.black_level / 255 + a * (1 - look.black_level / 255)) * emit, a)
    if look.glare:
        g = look.glare_amp * np.exp(-(((u + 0.5 - look.glare_pos[0]) ** 2 + (v + 0.5 - look.glare_pos[1]) ** 2)
                                      / (2 * look.glare_size ** 2)))
        a = a + g[..., None] * active[..., None]
    if look.reflect:  # a window reflected in the glass: a soft bright quad
        r = np.zeros((ph, pw), np.float32)
        x0, y0 = int(rng.uniform(0, 0.6) * pw), int(rng.uniform(0, 0.6) * ph)
        r[y0:y0 + int(0.3 * ph), x0:x0 + int(0.25 * pw)] = rng.uniform(0.04, 0.15)
        a = a + ndimage.gaussian_filter(r, pw * 0.02)[..., None] * active[..., None]
    plane_img = Image.fromarray((np.clip(a, 0, 1) * 255).astype(np.uint8), "RGB")
    scr, mask = warp(plane_img, Hm, W, H)
    img = bg * (1 - mask) + scr * mask
    if look.moire:
        y, x = np.mgrid[0:H, 0:W].astype(np.float32)
        m = 1 + look.moire_amp * np.sin(2 * math.pi * (look.moire_f[0] * x + look.moire_f[1] * y)
                                         + 0.02 * x * look.moire_f[1])
        img = img * (1 + (m[..., None] - 1) * mask)
    img = img * look.gain * look.cast
    if defocus > 0.3:
        img = ndimage.gaussian_filter(img, (defocus, defocus, 0))
    if motion > 1.0:
        k = motion_kernel(motion, rng.uniform(0, math.pi))
        img = np.stack([ndimage.convolve(img[..., c], k, mode="nearest") for c in range(3)], -1)
    img = img + rng.normal(0, look.noise, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8), Hm


def encode(arr, quality, fmt="jpg"):
    buf = io.BytesIO()
    im = Image.fromarray(arr) if isinstance(arr, np.ndarray) else arr
    if fmt == "png":
        im.save(buf, "PNG")
    else:
        im.save(buf, "JPEG", quality=int(quality))
    return buf.getvalue()


def _frame_truth(Hm, plane_off, vp, lm, content):
    ox, oy = plane_off
    cw, ch = content.size
    rect = lambda x0, y0, x1, y1: [(x0 + ox, y0 + oy), (x1 + ox, y0 + oy), (x1 + ox, y1 + oy), (x0 + ox, y1 + oy)]
    corners = apply_h(Hm, rect(*vp)).tolist()
    screen = apply_h(Hm, rect(0, 0, cw, ch)).tolist()
    lmf = {k: apply_h(Hm, [(p[0] + ox, p[1] + oy)])[0].tolist() for k, p in lm.items()}
    return corners, screen, lmf


def _inside(pts, W, H, margin):
    p = np.asarray(pts)
    return bool((p[:, 0] >= margin * W).all() and (p[:, 0] <= (1 - margin) * W).all()
                and (p[:, 1] >= margin * H).all() and (p[:, 1] <= (1 - margin) * H).all())


def scene(seed, size=None, heldout=False):
    """A usable monitor scene: everything that stays fixed across a sequence."""
    rng = np.random.default_rng(seed)
    W, H = size or FRAME_SIZES[int(rng.integers(len(FRAME_SIZES)))]
    content, vp, lm, meta, mode = make_content(rng, seed)
    plane, off = monitor_plane(rng, content)
    bg = room(rng, W, H)
    look = Look(rng)
    for _ in range(100):
        pose = Pose(rng)
        pw, ph = plane.size
        if _inside(pose.project(W, H, pw, ph, [(0, 0), (pw, 0), (pw, ph), (0, ph)]), W, H, 0.01):
            break
    else:
        pose.share *= 0.6
    return dict(rng=rng, W=W, H=H, content=content, vp=vp, lm=lm, meta=meta, mode=mode,
                plane=plane, off=off, bg=bg, look=look, pose=pose)


def screen_frame(s, pose=None, defocus=None, motion=None):
    look = s["look"]
    arr, Hm = photograph(s["rng"], s["W"], s["H"], s["bg"], s["content"], s["off"], s["plane"],
                         pose or s["pose"], look, look.defocus if defocus is None else defocus,
                         look.motion if motion is None else motion)
    corners, screen, lmf = _frame_truth(Hm, s["off"], s["vp"], s["lm"], s["content"])
    return arr, dict(corners=corners, screen=screen, landmarks=lmf, mode=s["mode"],
                     vhs=s["meta"]["vhs"], vlas=s["meta"]["vlas"], seed=s["meta"]["seed"],
                     displayed_size=[s["vp"][2] - s["vp"][0], s["vp"][3] - s["vp"][1]])


def unusable(seed, kind, size=None):
    """A frame no session may complete on."""
    rng = np.random.default_rng(seed)
    W, H = size or FRAME_SIZES[int(rng.integers(len(FRAME_SIZES)))]
    if kind == "black":
        a = rng.normal(rng.uniform(0, 6), rng.uniform(0.5, 3), (H, W, 3))
        return np.clip(a, 0, 255).astype(np.uint8), dict(usable=False, kind=kind)
    if kind == "no_screen":
        bg = room(rng, W, H)
        a = ndimage.gaussian_filter(bg, (rng.uniform(0, 1.5),) * 2 + (0,)) + rng.normal(0, 3, bg.shape)
        return np.clip(a, 0, 255).astype(np.uint8), dict(usable=False, kind=kind)
    if kind == "heavy_blur":
        s = scene(seed, size)
        arr, t = screen_frame(s, defocus=rng.uniform(9, 16), motion=rng.uniform(20, 40))
        t.update(usable=False, kind=kind)
        return arr, t
    raise ValueError(kind)


def pad_border(rgb, bw, col, rng):
    """rgb (H x W x 3 float) inside a border bw px wide of grey level col,
    given a colour cast six times in ten (a viewer's or crop tool's frame)."""
    col = np.full(3, col) if rng.random() < 0.6 else np.clip(col + rng.uniform(-15, 15, 3), 0, 255)
    h, w = rgb.shape[:2]
    out = np.empty((h + 2 * bw, w + 2 * bw, 3), np.float32)
    out[:] = col
    out[bw:bw + h, bw:bw + w] = rgb
    return out


def draw_measurement_lines(img, rng):
    """Draw one to three coloured measurement lines over the middle of img
    (a PIL RGB image, changed in place), as a viewer's tools leave them."""
    d = ImageDraw.Draw(img)
    col = [(255, 255, 0), (0, 255, 0), (0, 200, 255), (255, 80, 80)][int(rng.integers(4))]
    W, H = img.size
    for _ in range(int(rng.integers(1, 4))):
        p = rng.uniform(0.2, 0.8, 4) * [W, H, W, H]
        d.line([tuple(p[:2]), tuple(p[2:])], fill=col, width=max(1, W // 400))


def radiograph_export(seed):
    """A plain radiograph file as a viewer or a clinic exports it (no camera
    involved): the phantom, often cropped tight through the body, mapped
    through a display tint (a per-channel colour ramp from a dark to a
    light colour: blue, sepia, green...), often framed by a thin dark,
    light or grey border, sometimes with coloured measurement lines burned
    in. Returns (RGB array, truth, format, JPEG quality)."""
    rng = np.random.default_rng(seed)
    long_side = int(rng.integers(300, 2000))
    asp = rng.uniform(0.7, 1.6)
    w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
    im, truth, meta = xraysim.generate(seed, w, h, present_opts={"tint": "grey"})
    a = np.asarray(im.convert("L"), np.float32) / 255.0
    variant = {}
    if rng.random() < 0.5:  # tight crop: the frame cuts through the body
        cw, ch = int(w * rng.uniform(0.7, 0.95)), int(h * rng.uniform(0.7, 0.95))
        x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        a = a[y0:y0 + ch, x0:x0 + cw]
        truth = {k: (float(v[0]) - x0, float(v[1]) - y0) for k, v in truth.items()}
        w, h = cw, ch
        variant["crop"] = True
    if rng.random() < 0.85:  # display tint: a colour ramp per channel
        lo = rng.uniform(0, 45, 3)
        hi = rng.uniform(195, 255, 3)
        gam = rng.uniform(0.85, 1.15, 3)
        rgb = lo + (hi - lo) * a[..., None] ** gam
        variant["tint"] = [round(float(v)) for v in (hi - lo)]
    else:
        rgb = np.repeat(a[..., None] * 255, 3, -1)
    if rng.random() < 0.7:  # a thin border from the viewer or the crop tool
        bw = max(1, int(round(rng.uniform(0.002, 0.03) * min(w, h))))
        kind = rng.choice(["dark", "light", "grey"], p=[0.5, 0.35, 0.15])
        col = {"dark": rng.uniform(0, 30), "light": rng.uniform(225, 255), "grey": rng.uniform(60, 180)}[kind]
        rgb = pad_border(rgb, bw, col, rng)
        truth = {k: (v[0] + bw, v[1] + bw) for k, v in truth.items()}
        variant["border"] = f"{kind} {bw}px"
    img = Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8), "RGB")
    if rng.random() < 0.25:  # measurement lines drawn by a viewer
        draw_measurement_lines(img, rng)
        variant["lines"] = True
    fmt = "png" if rng.random() < 0.4 else "jpg"
    t = dict(usable=True, kind="radiograph_export", width=img.size[0], height=img.size[1], vhs=meta["vhs"],
             vlas=meta["vlas"], variant=variant, landmarks={k: [float(v[0]), float(v[1])] for k, v in truth.items()})
    return img, t, fmt, int(rng.integers(70, 96))


# ---------------------------------------------------------------- writers

def run_jobs(job, jobs, workers):
    """job over jobs, on a pool of workers when workers > 1; each job
    returns a list of truth dicts, and the lists are joined in job order."""
    if workers > 1:
        with Pool(workers) as p:
            res = p.map(job, jobs)
    else:
        res = [job(j) for j in jobs]
    return [t for r in res for t in r]


def _write(out, name, arr, quality, truth, fmt="jpg"):
    with open(os.path.join(out, name), "wb") as f:
        f.write(encode(arr, quality, fmt))
    truth["file"] = name
    return truth


# CONTENTS are the generators whose radiographs a variety screen can show:
# the simulator's first world (what PoP training uses), its second world
# and the first, 2D phantom generator. The last two are for measuring the
# finder on radiographs that do not look like its training screens' (make
# eval-popnet's content sets), as a real screen shows a real patient.
CONTENTS = ("xraysim", "xraysim2", "phantom")
# A content of FOLDER + path shows the images of that folder instead
# (--content-dir): a clinic's own radiographs, or ../shared/realref's, to
# measure the finder on pictures no generator drew. They carry no truth
# landmarks, so the frames measure where the displayed image is, not VHS.
FOLDER = "dir:"
FOLDER_EXTS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


@functools.lru_cache(maxsize=None)
def folder_images(folder):
    """The image files of folder, sorted by name, listed once per process
    (every viewport of every frame asks); SystemExit when none."""
    paths = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.lower().endswith(FOLDER_EXTS))
    if not paths:
        raise SystemExit(f"no images ({', '.join(FOLDER_EXTS)}) in {folder}")
    return tuple(paths)


def _render(content, seed, w=None, h=None, grey=False, long_side=None):
    """One radiograph of a content generator (one of CONTENTS): (PIL image,
    truth landmarks in pixels, meta with vhs and vlas), exactly w x h when
    given, else at the generator's own aspect (the simulator's with
    long_side; sim/phantom.py's own size). grey asks the simulator for a grey
    presentation (sim/phantom.py's always is). A FOLDER content gives image
    seed mod n of the folder, as it is (grey when asked), with no truth:
    (image, None, None)."""
    if content.startswith(FOLDER):
        paths = folder_images(content[len(FOLDER):])
        with Image.open(paths[seed % len(paths)]) as f:
            im = f.convert("L" if grey else "RGB")
        if w and h:
            im = im.resize((w, h), Image.BILINEAR)
        elif long_side:
            k = long_side / max(im.size)
            im = im.resize((max(1, round(im.width * k)), max(1, round(im.height * k))), Image.BILINEAR)
        return im, None, None
    if content == "phantom":
        return phantom.generate(seed, w, h)
    opts = {"lightbox": False, "tint": "grey"} if grey else {"lightbox": False}
    return xraysim.generate(seed, w, h, present_opts=opts, long_side=long_side, world=content)


def _content_radiograph(seed, content="xraysim"):
    """A radiograph callback for pop_variety: the first call is the
    measured radiograph (content's generator at the viewport's size, with
    truth), later ones (the study's other viewports) are quick small
    renders of the same generator."""
    calls = [0]

    def f(D, w, h):
        calls[0] += 1
        if calls[0] == 1:
            im, truth, meta = _render(content, seed, w, h)
            f.displayed = im
            return im, truth, meta
        im, _, _ = _render(content, seed * 7 + calls[0], max(32, w // 3), max(32, h // 3), grey=True)
        return im.resize((w, h), Image.BILINEAR), None, None
    return f


def variety_scene(seed, split, only=None, exclude=None, size=None, content="xraysim", cut=None):
    """The variety scene of a seed with a radiograph of content (one of
    CONTENTS) on its screen, in a frame of size (or one of FRAME_SIZES
    drawn from the seed): (scene for pop_variety.frame, the radiograph
    callback, whose .displayed is the shown radiograph once the scene is
    built)."""
    rng = np.random.default_rng(seed + 1)
    W, H = size or FRAME_SIZES[int(rng.integers(len(FRAME_SIZES)))]
    radiograph = _content_radiograph(seed, content)
    return pop_variety.scene(seed, W, H, radiograph, split=split, only=only, exclude=exclude, cut=cut), radiograph


def _variety_job(kind, i, seed, out, size, frames, opts):
    s, radiograph = variety_scene(seed, opts["split"], opts["only"], opts["exclude"], size, opts.get("content", "xraysim"),
                                  cut=opts.get("cut"))
    if kind == "vscreen":
        arr, t = pop_variety.frame(s)
        t.update(usable=not t["cut_off"], kind=kind)
        # The displayed radiograph as a file, for VHS on the same image
        # measured without the screen.
        name = f"vscreen_{i:04d}_file.png"
        radiograph.displayed.save(os.path.join(out, name))
        t["displayed_file"] = name
        return [_write(out, f"vscreen_{i:04d}.jpg", arr, s["look"].quality, t)]
    res, pose = [], s["pose"]
    for k in range(frames):
        pose = pose.shaken(s["D"].rng, s["D"].rng.uniform(0.3, 1.2))
        motion = s["D"].rng.uniform(8, 18) if s["D"].rng.random() < 0.25 else s["D"].rng.uniform(0, 3)
        arr, t = pop_variety.frame(s, pose=pose, motion=motion)
        t.update(usable=motion < 8 and not t["cut_off"], kind="sequence", sequence=i, frame=k)
        res.append(_write(out, f"vseq_{i:03d}_{k:02d}.jpg", arr, s["look"].quality, t))
    return res


def _job(args):
    kind, i, seed, out, size, frames = args[:6]
    if kind in ("vscreen", "vsequence"):
        return _variety_job(kind, i, seed, out, size, frames, args[6])
    if kind == "screen":
        s = scene(seed, size)
        arr, t = screen_frame(s)
        t.update(usable=True, kind=kind, width=s["W"], height=s["H"])
        return [_write(out, f"screen_{i:04d}.jpg", arr, s["look"].quality, t)]
    if kind == "sequence":
        s = scene(seed, size)
        rng = s["rng"]
        res, pose = [], s["pose"]
        for k in range(frames):
            pose = pose.shaken(rng, rng.uniform(0.3, 1.2))
            # Hand shake: about one frame in four is blurred by motion.
            motion = rng.uniform(8, 18) if rng.random() < 0.25 else rng.uniform(0, 3)
            arr, t = screen_frame(s, pose=pose, motion=motion)
            t.update(usable=motion < 8, kind=kind, width=s["W"], height=s["H"], sequence=i, frame=k)
            res.append(_write(out, f"seq_{i:03d}_{k:02d}.jpg", arr, s["look"].quality, t))
        return res
    if kind == "radiograph":
        rng = np.random.default_rng(seed)
        long_side = int(rng.integers(512, 2048))
        asp = rng.uniform(0.7, 1.6)
        w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
        im, truth, meta = xraysim.generate(seed, w, h, present_opts={"lightbox": False})
        fmt = "png" if i % 3 == 0 else "jpg"
        if i % 2:
            # PACS exports are often RGB even for grey images.
            im = im.convert("RGB")
        t = dict(usable=True, kind=kind, width=w, height=h, vhs=meta["vhs"], vlas=meta["vlas"],
                 landmarks={k: [float(v[0]), float(v[1])] for k, v in truth.items()})
        return [_write(out, f"radiograph_{i:04d}.{fmt}", im, int(rng.integers(80, 96)), t, fmt)]
    if kind == "radiograph_export":
        im, t, fmt, q = radiograph_export(seed)
        return [_write(out, f"export_{i:04d}.{fmt}", im, q, t, fmt)]
    if kind == "unusable_sequence":
        rng = np.random.default_rng(seed)
        res = []
        for k in range(frames):
            sub = ["no_screen", "heavy_blur", "black"][int(rng.integers(3))]
            arr, t = unusable(seed * 31 + k, sub, size)
            t.update(sequence=i, frame=k)
            res.append(_write(out, f"useq_{i:03d}_{k:02d}.jpg", arr, 85, t))
        return res
    arr, t = unusable(seed, kind, size)
    return [_write(out, f"{kind}_{i:04d}.jpg", arr, 85, t)]


def parse_families(specs, single=False):
    """["display=tv", "room=dark,busy"] -> {"display": "tv" or ("tv",), ...}."""
    out = {}
    for sp in specs:
        ax, _, fams = sp.partition("=")
        if ax not in pop_variety.AXES or not fams:
            raise SystemExit(f"bad family spec {sp!r}: want AXIS=FAMILY with AXIS in {sorted(pop_variety.AXES)}")
        names = tuple(fams.split(","))
        for n in names:
            if n not in pop_variety.AXES[ax]:
                raise SystemExit(f"unknown {ax} family {n!r}: {pop_variety.AXES[ax]}")
        out[ax] = names[0] if single else names
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--kind", choices=KINDS + ("unusable_sequence",), default="screen")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=POP_TRAIN_SEED_BASE)
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--size", default="", help="WxH, default: drawn per seed")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--split", choices=("train", "heldout"), default="train",
                    help="variety kinds: which interleaved bins continuous settings come from")
    ap.add_argument("--only", action="append", default=[], metavar="AXIS=FAMILY",
                    help="variety kinds: use only this family on an axis (display, layout, room)")
    ap.add_argument("--exclude", action="append", default=[], metavar="AXIS=F1[,F2]",
                    help="variety kinds: leave these families out")
    ap.add_argument("--cut-off", action="store_true",
                    help="variety kinds: every scene puts one or two displayed-image corners outside the frame "
                         "(a genuine screen photo that cannot be corrected; 12 %% of scenes otherwise)")
    ap.add_argument("--content", choices=CONTENTS, default="xraysim",
                    help="variety kinds: the generator of the radiographs on the screens")
    ap.add_argument("--content-dir", default="", metavar="DIR",
                    help="variety kinds: show the images of DIR on the screens instead (no truth landmarks, "
                         "so no VHS figures; never a training input)")
    a = ap.parse_args()
    if a.content_dir:
        folder_images(a.content_dir)
        a.content = FOLDER + os.path.abspath(a.content_dir)
    opts = {"split": a.split, "only": parse_families(a.only, single=True), "exclude": parse_families(a.exclude),
            "content": a.content, "cut": True if a.cut_off else None}
    os.makedirs(a.out, exist_ok=True)
    size = tuple(int(v) for v in a.size.split("x")) if a.size else None
    jobs = [(a.kind, i, a.seed0 + i, a.out, size, a.frames, opts) for i in range(a.n)]
    items = run_jobs(_job, jobs, a.workers)
    path = os.path.join(a.out, f"truth_{a.kind}.json")
    with open(path, "w") as f:
        json.dump({"kind": a.kind, "seed0": a.seed0, "n": a.n, "split": a.split, "only": opts["only"],
                   "exclude": opts["exclude"], "content": a.content, "items": items}, f, indent=1)
    print(f"wrote {len(items)} frames to {a.out} ({path})")


if __name__ == "__main__":
    main()
