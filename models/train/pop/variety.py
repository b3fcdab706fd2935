#!/usr/bin/python3
"""Screen-photo composites built for variety (issue 14), with exact truth.

SYNTHETIC DATA. Extends pop/composites.py: the same plane-homography
camera, with more kinds of display, viewer software, camera pose and room,
each drawn from a named family so that a family can be left out of
training entirely (leave-one-family-out), and with every continuous
setting drawn from interleaved bins so that held-out composites use
settings never used in training.

Family axes (AXES):
  display  medical (portrait or landscape, thick dark bezel, stand),
           office (thin to medium bezel in black, grey, white or silver,
           stand or none), laptop (thin dark or silver bezel, keyboard deck
           below), tv (no or hairline bezel, feet, glossy: more reflections)
  layout   fullscreen, viewer_dark (toolbar, thumbnails, info panel, the
           radiograph letterboxed in its viewport), viewer_light (the same
           in a light theme), multi (a hanging protocol of 2-4 viewports;
           the primary one, largest and outlined, is the displayed image),
           windowed (a viewer window not maximised, on a desktop wallpaper)
  room     office, dark, bright (window light: glare and reflections),
           busy (a cluttered desk: papers, keyboard, mug, a second monitor
           at the frame's edge)

Camera: tilt up to 45 degrees in any direction, roll, focal 0.7-1.6 x the
long side, a screen partly outside the frame (cut_off, 12 %), a hand or a
phone edge over a corner (occluded, 18 %). Look: glare spots, window
reflections, moire, viewing-angle falloff, defocus and motion blur, sensor
noise, white-balance casts, exposure, JPEG 40-95.

Splits: "train" draws every continuous setting from the even bins of its
range (8 bins), "heldout" from the odd bins: no held-out value of a bezel
width, tilt, colour, noise level, ... was used in training.

Truth (frame pixels, continuous coordinates): corners (the displayed
radiograph: TL, TR, BR, BL), screen (the monitor's active area), landmarks
and vhs (when the radiograph came from xraysim), display/layout/room,
cut_off, occluded, and the quality truth: blur_rel (blur sigma over the
displayed image's width), glare_heart (glare added over the heart, 0..1),
moire (amplitude).
"""
import math

import numpy as np
from PIL import Image, ImageDraw
from scipy import ndimage

from pop.geometry import apply_h, homography, motion_kernel, rot, shaken

AXES = {
    "display": ("medical", "office", "laptop", "tv"),
    "layout": ("fullscreen", "viewer_dark", "viewer_light", "multi", "windowed"),
    "room": ("office", "dark", "bright", "busy"),
}
BINS = 8


class Draw:
    """Random draws for one split: continuous values from interleaved bins."""

    def __init__(self, rng, split="train"):
        if split not in ("train", "heldout"):
            raise ValueError(f"split {split!r}")
        self.rng, self.odd = rng, split == "heldout"

    def u(self, lo, hi, n=None):
        """Uniform on [lo, hi) restricted to the split's bins."""
        size = 1 if n is None else n
        b = self.rng.integers(0, BINS // 2, size) * 2 + (1 if self.odd else 0)
        v = lo + (hi - lo) * (b + self.rng.random(size)) / BINS
        return float(v[0]) if n is None else v

    def p(self, prob):
        return self.rng.random() < prob

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def i(self, lo, hi):
        return int(self.rng.integers(lo, hi))


def pick_family(rng, axis, only=None, exclude=()):
    """A family of axis: `only` if given, else uniformly among those not excluded."""
    fams = [f for f in AXES[axis] if f not in exclude]
    if only:
        if only not in AXES[axis]:
            raise ValueError(f"unknown {axis} family {only!r}")
        return only
    if not fams:
        raise ValueError(f"every {axis} family excluded")
    return fams[int(rng.integers(len(fams)))]


def _col(v):
    return tuple(int(x) for x in np.clip(v, 0, 255))


# ---------------------------------------------------------------- screen content

def fit_rect(rect, asp):
    """The largest rectangle of aspect asp centred in rect (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = rect
    w, h = x1 - x0, y1 - y0
    if w / h > asp:
        nw = h * asp
        return (x0 + (w - nw) / 2, y0, x0 + (w + nw) / 2, y1)
    nh = w / asp
    return (x0, y0 + (h - nh) / 2, x1, y0 + (h + nh) / 2)


def _toolbar(d, D, cw, top, base, light):
    x = int(cw * D.u(0.005, 0.02))
    while x < cw * D.u(0.5, 0.95):
        s = max(3, int(top * D.u(0.3, 0.65)))
        y = (top - s) // 2
        col = _col(base + (-D.u(60, 150) if light else D.u(60, 170)))
        if D.p(0.4):
            d.rectangle([x, y, x + s, y + s], outline=col, width=max(1, s // 8))
        elif D.p(0.5):
            d.ellipse([x, y, x + s, y + s], fill=col)
        else:  # menu text
            d.rectangle([x, y + s // 3, x + int(s * D.u(1.5, 4)), y + 2 * s // 3], fill=col)
            s = int(s * 3)
        x += int(s * D.u(1.3, 2.2))


def content(D, layout, cw, ch, radiograph):
    """The screen's active area as an RGB image, and the primary displayed
    radiograph: (image, (x0, y0, x1, y1) float rectangle, landmarks in
    content pixels or None, radiograph meta). radiograph(w, h) returns (PIL
    image of exactly w x h, landmarks dict or None, meta)."""
    light = layout == "viewer_light"
    if layout == "fullscreen":
        img = Image.new("RGB", (cw, ch))
        vp = (0, 0, cw, ch)
        # Most viewers keep the radiograph's aspect in full screen too.
        rect = vp if D.p(0.5) else fit_rect(vp, D.u(0.7, 1.6))
        others = []
    else:
        if light:
            base = np.full(3, D.u(190, 245)) + D.u(-8, 8, 3)
        else:
            base = np.full(3, D.u(15, 85)) + D.u(-6, 12, 3)
        win = (0, 0, cw, ch)
        if layout == "windowed":  # a desktop wallpaper and a window on it
            img = Image.new("RGB", (cw, ch), _col(D.u(0, 255, 3)))
            d = ImageDraw.Draw(img)
            for _ in range(D.i(0, 6)):
                x, y = D.u(0, cw), D.u(0, ch)
                d.rectangle([x, y, x + D.u(20, 60), y + D.u(20, 60)], fill=_col(D.u(0, 255, 3)))
            ww, wh = cw * D.u(0.55, 0.9), ch * D.u(0.6, 0.92)
            wx, wy = D.u(0, cw - ww), D.u(0, ch - wh)
            win = (int(wx), int(wy), int(wx + ww), int(wy + wh))
            d.rectangle(win, fill=_col(base), outline=_col(base + 40), width=2)
        else:
            img = Image.new("RGB", (cw, ch), _col(base))
        d = ImageDraw.Draw(img)
        wx0, wy0, wx1, wy1 = win
        ww, wh = wx1 - wx0, wy1 - wy0
        top = int(wh * D.u(0.04, 0.11))
        bottom = int(wh * D.u(0.0, 0.05)) if D.p(0.6) else 0
        left = int(ww * D.u(0.07, 0.18)) if D.p(0.5) else 0
        right = int(ww * D.u(0.08, 0.2)) if D.p(0.4) else 0
        tb = _col(base + D.u(-20, 25))
        d.rectangle([wx0, wy0, wx1, wy0 + top], fill=tb)
        ImageDraw.Draw(img)
        sub = img.crop((wx0, wy0, wx1, wy0 + top))
        _toolbar(ImageDraw.Draw(sub), D, ww, top, np.asarray(tb, float), light)
        img.paste(sub, (wx0, wy0))
        if left:  # thumbnails
            y = wy0 + top + 8
            while y < wy1 - bottom - left * 0.6:
                th = int(left * 0.75)
                g = D.u(20, 140) if not light else D.u(40, 200)
                if left >= 12:  # newer Pillow refuses an inverted rectangle; older ones drew a sliver
                    d.rectangle([wx0 + 6, y, wx0 + left - 6, y + th], fill=_col([g] * 3),
                                outline=_col(base + (-60 if light else 70)))
                y += th + 10
        if right:  # information panel text
            for k in range(D.i(4, 16)):
                y = wy0 + top + 10 + k * 18
                if y > wy1 - bottom - 20:
                    break
                col = _col(base + (-D.u(80, 170) if light else D.u(80, 160)))
                d.rectangle([wx1 - right + 8, y, wx1 - right + 8 + int(right * D.u(0.3, 0.85)), y + 6], fill=col)
        if bottom:
            d.rectangle([wx0, wy1 - bottom, wx1, wy1], fill=_col(base - 12))
        area = (wx0 + left, wy0 + top, wx1 - right, wy1 - bottom)
        # Viewports: black (or near-black) backgrounds, the radiograph fitted
        # with its own aspect inside each.
        ax0, ay0, ax1, ay1 = area
        if layout == "multi":
            n = D.choice((2, 3, 4))
            g = 3
            if n == 2:
                mid = ax0 + (ax1 - ax0) * D.u(0.5, 0.65)
                vps = [(ax0, ay0, mid - g, ay1), (mid + g, ay0, ax1, ay1)]
            elif n == 3:
                mid = ax0 + (ax1 - ax0) * D.u(0.55, 0.7)
                my = (ay0 + ay1) / 2
                vps = [(ax0, ay0, mid - g, ay1), (mid + g, ay0, ax1, my - g), (mid + g, my + g, ax1, ay1)]
            else:
                mx, my = (ax0 + ax1) / 2, (ay0 + ay1) / 2
                vps = [(ax0, ay0, mx - g, my - g), (mx + g, ay0, ax1, my - g), (ax0, my + g, mx - g, ay1), (mx + g, my + g, ax1, ay1)]
        else:
            vps = [area]
        vbg = _col([D.u(0, 12)] * 3)
        for v in vps:
            d.rectangle([v[0], v[1], v[2] - 1, v[3] - 1], fill=vbg)
        vp = vps[0]
        rect = fit_rect(vp, D.u(0.7, 1.6)) if D.p(0.75) else vp
        others = vps[1:]
    x0, y0, x1, y1 = (int(round(v)) for v in rect)
    rect = (x0, y0, x1, y1)
    rim, lm, meta = radiograph(x1 - x0, y1 - y0)
    img.paste(rim.convert("RGB"), (x0, y0))
    for v in others:  # other images of the study, smaller
        r = fit_rect(v, D.u(0.7, 1.5))
        r = tuple(int(round(t)) for t in r)
        if r[2] - r[0] > 8 and r[3] - r[1] > 8:
            o, _, _ = radiograph(r[2] - r[0], r[3] - r[1])
            img.paste(o.convert("RGB"), (r[0], r[1]))
    if layout == "multi":  # the active viewport's outline
        v = vp
        ImageDraw.Draw(img).rectangle([v[0], v[1], v[2] - 1, v[3] - 1], outline=_col(D.choice(([230, 200, 40], [60, 140, 250], [240, 240, 240]))), width=2)
    if lm is not None:
        lm = {k: [float(p[0]) + x0, float(p[1]) + y0] for k, p in lm.items()}
    return img, rect, lm, meta


# ---------------------------------------------------------------- monitor

def monitor(D, display, cont):
    """The monitor as an RGBA plane image (alpha 0 where the room shows
    through, around a stand), and the active area's offset in it."""
    cw, ch = cont.size
    if display == "medical":
        b = cw * D.u(0.03, 0.07)
        bb = b + cw * D.u(0.0, 0.03)
        col = np.full(3, D.u(8, 60)) + D.u(-4, 6, 3)
        stand = D.p(0.8)
    elif display == "office":
        b = cw * (D.u(0.004, 0.04) if D.p(0.8) else 0.0)
        bb = b + cw * D.u(0.0, 0.04)
        tone = D.choice(("black", "grey", "white", "silver"))
        col = {"black": np.full(3, D.u(5, 40)), "grey": np.full(3, D.u(60, 130)),
               "white": np.full(3, D.u(200, 245)), "silver": np.full(3, D.u(150, 200)) + [0, 2, 6]}[tone] + D.u(-5, 5, 3)
        stand = D.p(0.7)
    elif display == "laptop":
        b = cw * D.u(0.01, 0.035)
        bb = b + cw * D.u(0.01, 0.05)
        col = np.full(3, D.u(5, 40)) if D.p(0.6) else np.full(3, D.u(150, 205))
        stand = False
    else:  # tv
        b = cw * (D.u(0.0, 0.012) if D.p(0.7) else 0.0)
        bb = b + cw * D.u(0.0, 0.015)
        col = np.full(3, D.u(3, 30))
        stand = D.p(0.7)
    b, bb = int(round(b)), int(round(bb))
    W0, H0 = cw + 2 * b, ch + b + bb
    extra = 0
    if stand or display == "laptop":
        extra = int(H0 * (D.u(0.15, 0.35) if display != "laptop" else D.u(0.1, 0.25)))
    plane = Image.new("RGBA", (W0, H0 + extra), (0, 0, 0, 0))
    d = ImageDraw.Draw(plane)
    d.rectangle([0, 0, W0 - 1, H0 - 1], fill=_col(col) + (255,))
    if display == "laptop":
        deck = _col(col * D.u(0.9, 1.15))
        d.polygon([(0, H0), (W0, H0), (W0 + W0 * 0.04, H0 + extra), (-W0 * 0.04, H0 + extra)], fill=deck + (255,))
        for k in range(4):  # key rows
            y = H0 + extra * (0.15 + 0.18 * k)
            d.rectangle([W0 * 0.1, y, W0 * 0.9, y + extra * 0.1], fill=_col(col * 0.6) + (255,))
    elif stand:
        sc = _col(col * D.u(0.7, 1.2))
        if display == "tv" and D.p(0.6):  # two feet
            for fx in (0.15, 0.85):
                d.polygon([(W0 * fx - 6, H0), (W0 * fx + 6, H0), (W0 * fx + W0 * 0.05, H0 + extra), (W0 * fx - W0 * 0.05, H0 + extra)], fill=sc + (255,))
        else:
            nw = W0 * D.u(0.06, 0.14)
            d.rectangle([W0 / 2 - nw / 2, H0, W0 / 2 + nw / 2, H0 + extra * 0.85], fill=sc + (255,))
            bw = W0 * D.u(0.25, 0.45)
            d.rectangle([W0 / 2 - bw / 2, H0 + extra * 0.8, W0 / 2 + bw / 2, H0 + extra], fill=sc + (255,))
    plane.paste(cont, (b, b))
    return plane, (b, b)


# ---------------------------------------------------------------- room

def room(D, kind, W, H):
    """Room background as a float RGB array."""
    lvl = {"office": (60, 200), "dark": (5, 45), "bright": (150, 240), "busy": (50, 210)}[kind]
    base = np.full(3, D.u(*lvl)) + D.u(-30, 30, 3)
    gy = np.linspace(0, 1, H)[:, None, None]
    gx = np.linspace(0, 1, W)[None, :, None]
    a = base + D.u(-40, 40, 3) * gy + D.u(-30, 30, 3) * gx
    img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    sc = 0.25 if kind == "dark" else 1.0
    for _ in range(D.i(2, 8)):
        x0, y0 = D.u(-0.2, 1) * W, D.u(-0.2, 1) * H
        x1, y1 = x0 + D.u(0.05, 0.5) * W, y0 + D.u(0.05, 0.5) * H
        col = _col(D.u(0, 255, 3) * sc)
        (d.rectangle if D.p(0.7) else d.ellipse)([x0, y0, x1, y1], fill=col)
    if kind == "bright":  # a window
        x0, y0 = D.u(-0.2, 0.8) * W, D.u(-0.2, 0.4) * H
        d.rectangle([x0, y0, x0 + D.u(0.2, 0.5) * W, y0 + D.u(0.2, 0.5) * H], fill=_col([D.u(225, 255)] * 3))
    y = D.u(0.7, 1.0) * H  # desk
    d.rectangle([0, y, W, H], fill=_col(D.u(40, 210, 3) * sc))
    if kind == "busy":
        for _ in range(D.i(4, 12)):  # papers, keyboard, mug, phone
            x0, y0 = D.u(0, 1) * W, D.u(0.55, 1) * H
            w, h = D.u(0.03, 0.25) * W, D.u(0.02, 0.12) * H
            kind_ = D.i(0, 4)
            if kind_ == 0:
                d.polygon([(x0, y0), (x0 + w, y0 + D.u(-5, 5)), (x0 + w + D.u(-9, 9), y0 + h), (x0, y0 + h)], fill=_col([D.u(215, 250)] * 3))
            elif kind_ == 1:
                d.rectangle([x0, y0, x0 + w * 2, y0 + h * 0.6], fill=_col([D.u(15, 60)] * 3))
                for k in range(int(w * 2 / 10)):
                    d.rectangle([x0 + k * 10 + 2, y0 + 3, x0 + k * 10 + 7, y0 + 7], fill=_col([D.u(60, 120)] * 3))
            elif kind_ == 2:
                d.ellipse([x0, y0, x0 + h, y0 + h * 1.3], fill=_col(D.u(0, 255, 3)))
            else:
                d.rectangle([x0, y0, x0 + w * 0.3, y0 + h], fill=_col(D.u(0, 255, 3)))
        if D.p(0.5):  # a second monitor at the frame's edge
            side = D.choice((-1, 1))
            mw, mh = D.u(0.25, 0.45) * W, D.u(0.3, 0.5) * H
            x0 = -mw * D.u(0.3, 0.7) if side < 0 else W - mw * D.u(0.3, 0.7)
            y0 = D.u(0.05, 0.4) * H
            d.rectangle([x0, y0, x0 + mw, y0 + mh], fill=_col([D.u(5, 40)] * 3))
            bz = mw * 0.03
            d.rectangle([x0 + bz, y0 + bz, x0 + mw - bz, y0 + mh - bz], fill=_col(D.u(150, 250, 3)))
            for k in range(D.i(3, 12)):
                yy = y0 + bz + 8 + k * 12
                if yy < y0 + mh - bz - 8:
                    d.rectangle([x0 + bz + 6, yy, x0 + bz + 6 + D.u(0.2, 0.8) * (mw - 2 * bz - 12), yy + 4], fill=_col([D.u(20, 90)] * 3))
    a = np.asarray(img, np.float32).copy()
    a += ndimage.gaussian_filter(D.rng.normal(0, 10, (H // 8 + 1, W // 8 + 1)), 2).repeat(8, 0).repeat(8, 1)[:H, :W, None]
    return a


class Look:
    """Photographic parameters of one scene."""

    def __init__(self, D, room_kind, display):
        self.gain = D.u(0.65, 1.3) if room_kind != "dark" else D.u(0.8, 1.4)
        self.cast = D.u(0.75, 1.25, 3)
        self.noise = D.u(1.0, 9.0) * (1.5 if room_kind == "dark" else 1.0)
        self.quality = int(D.u(40, 96))
        glossy = display in ("tv", "laptop")
        self.glare = D.p(0.8 if room_kind == "bright" else 0.55)
        self.glare_amp = D.u(0.1, 0.7)
        self.glare_pos = D.u(0.05, 0.95, 2)
        self.glare_size = D.u(0.04, 0.25)
        self.reflect = D.p(0.7 if (room_kind == "bright" or glossy) else 0.3)
        self.reflect_amp = D.u(0.04, 0.22 if glossy else 0.15)
        self.moire = D.p(0.55)
        self.moire_amp = D.u(0.02, 0.14)
        self.moire_f = D.u(0.05, 0.3, 2) * D.rng.choice([-1, 1], 2)
        self.falloff = D.u(0.0, 0.45, 2) * D.rng.choice([-1, 1], 2)
        self.screen_gamma = D.u(0.8, 1.25)
        self.black_level = D.u(0, 30)
        self.defocus = D.u(0.0, 2.0)
        self.motion = D.u(0.0, 5.0)
        self.occlude = D.p(0.18)


class Pose:
    """Camera pose: yaw/pitch/roll, screen centre offset (frame shares),
    screen width share of the frame and focal length (x long side)."""

    def __init__(self, D, cut=False):
        t = math.radians(D.u(0, 45))
        a = D.u(0, 2 * math.pi)
        self.yaw, self.pitch = t * math.cos(a), t * math.sin(a)
        self.roll = math.radians(D.rng.normal(0, 7.0))
        self.focal = D.u(0.7, 1.6)
        if cut:
            self.share = D.u(0.75, 1.1)
            ang = D.u(0, 2 * math.pi)
            r = D.u(0.12, 0.3)
            self.cx, self.cy = r * math.cos(ang), r * math.sin(ang)
        else:
            self.share = D.u(0.3, 0.95)
            self.cx, self.cy = D.u(-0.12, 0.12), D.u(-0.12, 0.12)

    def project(self, W, H, plane_w, plane_h, pts, ref_w=None):
        """Project plane points (pixels of the plane image; the screen's
        width ref_w defines the share) into a W x H frame."""
        f = self.focal * max(W, H)
        R = rot(self.yaw, self.pitch, self.roll)
        ref_w = ref_w or plane_w
        s = 1.0 / ref_w
        P = np.c_[(np.asarray(pts, float) - [plane_w / 2, plane_h / 2]) * s, np.zeros(len(pts))]
        Z = f / (self.share * W)
        C = np.array([self.cx * W * Z / f, self.cy * H * Z / f, Z])
        X = P @ R.T + C
        return np.c_[f * X[:, 0] / X[:, 2] + W / 2, f * X[:, 1] / X[:, 2] + H / 2]

    def shaken(self, rng, amount=1.0):
        """This pose moved by a hand's shake (pop_geometry.shaken)."""
        return shaken(self, rng, amount)


def _occluder(D, img, corner, W, H):
    """A hand or a phone edge over a screen corner (in place)."""
    d = ImageDraw.Draw(img)
    x, y = corner
    r = min(W, H) * D.u(0.06, 0.16)
    dx, dy = (1 if x < W / 2 else -1), (1 if y < H / 2 else -1)
    if D.p(0.6):  # hand: palm and fingers
        skin = _col(np.array([D.u(120, 235), D.u(80, 190), D.u(60, 160)]))
        cx, cy = x - dx * r * 0.6, y - dy * r * 0.6
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=skin)
        for k in range(4):
            ang = math.atan2(dy, dx) + (k - 1.5) * 0.25
            fx, fy = cx + math.cos(ang) * r * 1.6, cy + math.sin(ang) * r * 1.6
            d.line([(cx, cy), (fx, fy)], fill=skin, width=int(r * 0.35))
    else:  # phone edge
        col = _col([D.u(5, 60)] * 3)
        d.rounded_rectangle([x - dx * r * 2 - r * 1.5, y - dy * r * 0.3 - r * 1.5, x + dx * r * 0.5 + r * 1.5, y + dy * r * 0.5 + r * 1.5], radius=int(r * 0.3), fill=col)


def photograph(D, W, H, bg, plane, off, cont_size, pose, look, rect, scale=1.0, defocus=None, motion=None):
    """Render one frame (uint8 RGB) and return it with the plane->frame
    homography. scale multiplies pixel-sized blur (for small renders)."""
    pw, ph = plane.size
    cw, ch = cont_size
    src = [(0, 0), (pw, 0), (pw, ph), (0, ph)]
    dst = pose.project(W, H, pw, ph, src, ref_w=cw + 2 * off[0])
    Hm = homography(src, dst)
    rgba = np.asarray(plane, np.float32) / 255.0
    a, alpha = rgba[..., :3] ** look.screen_gamma, rgba[..., 3:]
    ox, oy = off
    yy, xx = np.mgrid[0:ph, 0:pw].astype(np.float32)
    u, v = (xx - ox) / cw - 0.5, (yy - oy) / ch - 0.5
    active = ((u >= -0.5) & (u < 0.5) & (v >= -0.5) & (v < 0.5))[..., None]
    emit = np.clip(1 + look.falloff[0] * u + look.falloff[1] * v, 0.4, 1.6)[..., None]
    a = np.where(active, (look.black_level / 255 + a * (1 - look.black_level / 255)) * emit, a)
    glare_heart = 0.0
    if look.glare:
        g = look.glare_amp * np.exp(-(((u + 0.5 - look.glare_pos[0]) ** 2 + (v + 0.5 - look.glare_pos[1]) ** 2)
                                      / (2 * look.glare_size ** 2)))
        a = a + g[..., None] * active
        # Glare at the displayed radiograph's heart region (its middle).
        hx = (rect[0] + 0.45 * (rect[2] - rect[0])) / cw
        hy = (rect[1] + 0.55 * (rect[3] - rect[1])) / ch
        glare_heart = float(look.glare_amp * math.exp(-((hx - look.glare_pos[0]) ** 2 + (hy - look.glare_pos[1]) ** 2)
                                                      / (2 * look.glare_size ** 2)))
    if look.reflect:
        r = np.zeros((ph, pw), np.float32)
        x0, y0 = int(D.u(0, 0.6) * pw), int(D.u(0, 0.6) * ph)
        r[y0:y0 + int(0.3 * ph), x0:x0 + int(0.25 * pw)] = look.reflect_amp
        a = a + ndimage.gaussian_filter(r, pw * 0.02)[..., None] * active
    pim = Image.fromarray((np.clip(np.concatenate([a, alpha], -1), 0, 1) * 255).astype(np.uint8), "RGBA")
    Hi = np.linalg.inv(Hm)
    Hi = Hi / Hi[2, 2]
    warped = np.asarray(pim.transform((W, H), Image.PERSPECTIVE, tuple(Hi.flatten()[:8]), Image.BICUBIC), np.float32)
    scr, mask = warped[..., :3], warped[..., 3:] / 255.0
    # Premultiplied-looking edges: the colour next to transparent pixels is dark.
    img = bg * (1 - mask) + scr * mask
    if look.moire:
        y, x = np.mgrid[0:H, 0:W].astype(np.float32)
        f = look.moire_f  # a beat pattern: as many fringes at any scale
        m = 1 + look.moire_amp * np.sin(2 * math.pi * (f[0] * x + f[1] * y) + 0.02 * x * f[1])
        img = img * (1 + (m[..., None] - 1) * mask)
    occluded = False
    if look.occlude:
        sc = apply_h(Hm, [(ox, oy), (ox + cw, oy), (ox + cw, oy + ch), (ox, oy + ch)])
        k = D.i(0, 4)
        pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
        _occluder(D, pil, sc[k], W, H)
        img = np.asarray(pil, np.float32)
        occluded = True
    img = img * look.gain * look.cast
    df = (look.defocus if defocus is None else defocus) * scale
    mo = (look.motion if motion is None else motion) * scale
    if df > 0.3:
        img = ndimage.gaussian_filter(img, (df, df, 0))
    if mo > 1.0:
        k = motion_kernel(mo, D.u(0, math.pi))
        img = np.stack([ndimage.convolve(img[..., c], k, mode="nearest") for c in range(3)], -1)
    img = img + D.rng.normal(0, look.noise, img.shape)
    info = dict(glare_heart=glare_heart, occluded=occluded, defocus=df, motion=mo)  # frame pixels
    return np.clip(img, 0, 255).astype(np.uint8), Hm, info


def scene(seed, W, H, radiograph, split="train", only=None, exclude=None, scale=1.0, cut=None):
    """Everything fixed about one monitor scene. only/exclude: dicts axis ->
    family / families. radiograph(D, w, h) returns (image, landmarks, meta).
    Returns a dict for frame()."""
    rng = np.random.default_rng(seed)
    D = Draw(rng, split)
    only, exclude = only or {}, exclude or {}
    fam = {ax: pick_family(rng, ax, only.get(ax), exclude.get(ax, ())) for ax in AXES}
    if fam["display"] == "medical" and D.p(0.4):
        asp = D.choice((3 / 4, 4 / 5))  # portrait medical display
    elif fam["display"] == "tv":
        asp = 16 / 9
    else:
        asp = D.choice((16 / 9, 16 / 10, 4 / 3, 5 / 4, 16 / 9, 3 / 2))
    cw = int(D.u(900, 1400) * scale)
    ch = int(round(cw / asp))
    cont, rect, lm, meta = content(D, fam["layout"], cw, ch, lambda w, h: radiograph(D, w, h))
    plane, off = monitor(D, fam["display"], cont)
    bg = room(D, fam["room"], W, H)
    look = Look(D, fam["room"], fam["display"])
    cut = D.p(0.12) if cut is None else cut
    pw, ph = plane.size
    for _ in range(100):
        pose = Pose(D, cut)
        sc = pose.project(W, H, pw, ph, [off, (off[0] + cw, off[1]), (off[0] + cw, off[1] + ch), (off[0], off[1] + ch)], ref_w=cw + 2 * off[0])
        inside = ((sc[:, 0] >= 0.01 * W) & (sc[:, 0] <= 0.99 * W) & (sc[:, 1] >= 0.01 * H) & (sc[:, 1] <= 0.99 * H))
        if cut and 1 <= (~inside).sum() <= 2:
            break
        if not cut and inside.all():
            break
    else:
        pose.share *= 0.6
        cut = False
    return dict(D=D, W=W, H=H, cont=cont, rect=rect, lm=lm, meta=meta, plane=plane, off=off, bg=bg,
                look=look, pose=pose, fam=fam, cut=cut, scale=scale, split=split)


def frame(s, pose=None, defocus=None, motion=None):
    """Render one frame of scene s: (uint8 RGB array, truth dict)."""
    arr, Hm, info = photograph(s["D"], s["W"], s["H"], s["bg"], s["plane"], s["off"], s["cont"].size,
                               pose or s["pose"], s["look"], s["rect"], s["scale"], defocus, motion)
    ox, oy = s["off"]
    cw, ch = s["cont"].size
    x0, y0, x1, y1 = s["rect"]
    corners = apply_h(Hm, [(x0 + ox, y0 + oy), (x1 + ox, y0 + oy), (x1 + ox, y1 + oy), (x0 + ox, y1 + oy)])
    screen = apply_h(Hm, [(ox, oy), (ox + cw, oy), (ox + cw, oy + ch), (ox, oy + ch)])
    W, H = s["W"], s["H"]
    out = ((screen[:, 0] < 0) | (screen[:, 0] > W) | (screen[:, 1] < 0) | (screen[:, 1] > H))
    dw = float(np.hypot(*(corners[1] - corners[0])))
    blur = math.hypot(info["defocus"], info["motion"] / 2.5)
    look = s["look"]
    t = dict(corners=corners.tolist(), screen=screen.tolist(), display=s["fam"]["display"],
             layout=s["fam"]["layout"], room=s["fam"]["room"], split=s["split"],
             mode="fullscreen" if s["fam"]["layout"] == "fullscreen" else "viewer",
             cut_off=bool(out.any()), occluded=info["occluded"], glare_heart=round(info["glare_heart"], 4),
             blur_rel=round(blur / max(dw, 1.0), 5), moire=round(look.moire_amp if look.moire else 0.0, 4),
             displayed_size=[x1 - x0, y1 - y0], width=W, height=H)
    if s["lm"] is not None:
        t["landmarks"] = {k: apply_h(Hm, [(p[0] + ox, p[1] + oy)])[0].tolist() for k, p in s["lm"].items()}
        t["vhs"], t["vlas"], t["seed"] = s["meta"]["vhs"], s["meta"]["vlas"], s["meta"]["seed"]
    return arr, t
