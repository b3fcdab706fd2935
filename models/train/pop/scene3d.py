#!/usr/bin/python3
"""A third screen-photo world: monitors on desks, ray traced in 3D.

SYNTHETIC DATA, FOR TESTING ONLY: nothing here is ever used to train or tune
a model. pop/composites.py and pop/variety.py both paste a flat picture of a
monitor into a background through one plane homography. This generator is
written apart from them and builds the scene in 3D instead, so that a
held-out set made with it differs in kind, not only in settings:

- the monitor is a box with depth: its top and side faces show at an
  angle, the active area sits recessed behind the bezel's lip, the bezel
  carries a logo and a power light, and a neck and base stand it on a desk;
- the room is a box around desk and camera: back wall with posters, a
  window or lamps, ceiling lights; a keyboard, papers, a mug and sometimes
  a second monitor showing office software stand about;
- the glossy screen and bezel reflect the room behind the camera (windows,
  ceiling lights and the photographer's dark silhouette), traced along the
  mirrored ray;
- light falls on every surface from the ceiling (Lambert) over an ambient
  level that sets the room: dark, office or bright;
- the screen emits its content through a pixel grid at its native
  resolution, so the camera's own sampling makes moire where it does;
- the camera is a pinhole with radial lens distortion (edges of the
  screen bow), depth of field focused on the screen, motion blur,
  vignetting, auto exposure (a dark room over-exposes the screen), shot and
  read noise, white balance, gamma, sharpening and JPEG.

Every ray is traced at 2x2 samples per pixel. The viewer software is drawn
here too (dark or light PACS, full screen, two viewports, a web viewer),
with corner overlay text over the image as viewers draw it. The radiograph
is an xraysim one so that VHS can be compared with the same image as a file.

Truth per frame (frame pixels, continuous, pixel i covering [i, i+1]):
corners (TL, TR, BR, BL of the displayed radiograph, through the lens
distortion), screen (the active area), landmarks, vhs, vlas, the display,
layout and room names, and hidden (the share of the displayed radiograph
behind something in front of it). Usable: the screen inside the frame
and at most MAX_HIDDEN hidden. Written as kind "vscreen" so that
bench/evalpop reads it as it reads pop/variety.py's composites; with
--frames K each scene is a hand-held sequence of K frames (kind
"sequence", about one in four motion-blurred and unusable), which
bench/evalpop plays through a capture session.

    python3 -m pop.scene3d OUT --n 120 --seed0 48000000 --workers 2
    python3 -m pop.scene3d OUT --n 12 --frames 6 --size 1280x720 --seed0 48100000
"""
import argparse
import json
import math
import os
from io import BytesIO

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy import ndimage

from sim import xraysim
from pop.composites import run_jobs
from pop.variety import fit_rect

DISPLAYS = ("medical", "office", "laptop", "tv")
LAYOUTS = ("fullscreen", "pacs_dark", "pacs_light", "two_up", "web")
ROOMS = ("dark", "office", "bright")
FRAME_SIZES = ((1280, 720), (1920, 1080), (1600, 1200), (1280, 960), (1024, 768))
SS = 2  # samples per pixel along each axis
# A frame whose displayed radiograph is hidden by more than this share (a
# desk item or the bezel's lip in front of it) is not usable: part of the
# anatomy cannot be seen.
MAX_HIDDEN = 0.1


# ---------------------------------------------------------------- geometry

def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


class Box:
    """An oriented box: centre c, rotation R (columns: local axes in world
    coordinates), half extents h; a material name and its parameters."""

    def __init__(self, name, c, R, h, mat, **kw):
        self.name, self.c, self.R, self.h = name, np.asarray(c, float), np.asarray(R, float), np.asarray(h, float)
        self.mat, self.kw = mat, kw

    def hit(self, o, d):
        """Entry distance t (inf where missed), local hit point, local face
        axis (0-2) and sign, for rays o + t d (arrays [N,3])."""
        ol = (o - self.c) @ self.R
        dl = d @ self.R
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / np.where(np.abs(dl) < 1e-12, 1e-12, dl)
            t1 = (-self.h - ol) * inv
            t2 = (self.h - ol) * inv
        tn, tf = np.minimum(t1, t2), np.maximum(t1, t2)
        axis = np.argmax(tn, 1)
        t0 = tn[np.arange(len(tn)), axis]
        t1m = tf.min(1)
        ok = (t1m >= t0) & (t0 > 1e-6)
        t = np.where(ok, t0, np.inf)
        sign = -np.sign(dl[np.arange(len(dl)), axis])
        return t, ol + dl * np.where(ok, t0, 0)[:, None], axis, sign


def room_exit(o, d, lo, hi):
    """Where rays from inside the axis-aligned room box [lo, hi] leave it:
    distance, point, face axis and which side (+1 the hi side)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / np.where(np.abs(d) < 1e-12, 1e-12, d)
        t = np.where(d > 0, (hi - o) * inv, (lo - o) * inv)
    axis = np.argmin(t, 1)
    tt = t[np.arange(len(t)), axis]
    side = np.sign(d[np.arange(len(d)), axis])
    return tt, o + d * tt[:, None], axis, side


# ---------------------------------------------------------------- screen content

def _c(v):
    return tuple(int(max(0, min(255, round(x)))) for x in v)


def _text(d, rng, x, y, w, rows, col, h=7):
    """Lines of 'text' as runs of short bars (word widths)."""
    for k in range(rows):
        xx = x
        while xx < x + w * rng.uniform(0.4, 1.0):
            ww = rng.uniform(2, 7) * h * 0.6
            d.rectangle([xx, y + k * h * 1.7, xx + ww, y + k * h * 1.7 + h], fill=col)
            xx += ww + h * 0.6


def draw_content(rng, layout, cw, ch, seed):
    """The active area's picture (cw x ch RGB), the displayed radiograph's
    rectangle in it, its landmarks there, the radiograph meta and the
    radiograph itself as a file image."""
    img = Image.new("RGB", (cw, ch))
    d = ImageDraw.Draw(img)
    u = cw / 1600.0  # UI scale
    if layout == "fullscreen":
        vp = (0, 0, cw, ch)
    elif layout == "web":
        d.rectangle([0, 0, cw, ch], fill=_c([rng.uniform(225, 250)] * 3))
        d.rectangle([0, 0, cw, 70 * u], fill=_c([rng.uniform(200, 235)] * 3))  # browser chrome
        d.rectangle([160 * u, 18 * u, cw - 160 * u, 52 * u], fill=(255, 255, 255), outline=(180, 180, 180))
        _text(d, rng, 60 * u, 100 * u, cw * 0.5, 2, (60, 60, 70), h=max(4, 12 * u))
        m = rng.uniform(0.08, 0.2)
        vp = (cw * m, 170 * u, cw * (1 - m), ch - 40 * u)
        d.rectangle(vp, fill=_c([rng.uniform(0, 25)] * 3))
    else:
        light = layout == "pacs_light"
        bg = rng.uniform(200, 235) if light else rng.uniform(20, 55)
        d.rectangle([0, 0, cw, ch], fill=_c([bg, bg, bg + rng.uniform(0, 8)]))
        tb = 56 * u * rng.uniform(0.8, 1.5)
        d.rectangle([0, 0, cw, tb], fill=_c([bg + (-25 if light else 18)] * 3))
        for k in range(int(rng.integers(6, 18))):  # tool icons
            x = 12 * u + k * 48 * u
            ic = _c(rng.uniform(40, 120, 3) if light else rng.uniform(120, 230, 3))
            d.rounded_rectangle([x, tb * 0.2, x + 34 * u, tb * 0.8], radius=4 * u, outline=ic, width=max(1, int(2 * u)))
        left = cw * rng.uniform(0.08, 0.16) if rng.random() < 0.7 else 0
        if left:  # series panel with thumbnails
            y = tb + 10 * u
            while y + left * 0.8 < ch:
                g = rng.uniform(30, 150)
                d.rectangle([8 * u, y, left - 8 * u, y + left * 0.75], fill=_c([g] * 3))
                _text(d, rng, 8 * u, y + left * 0.78, left * 0.7, 1, _c([bg + (-120 if light else 120)] * 3), h=max(3, 8 * u))
                y += left * 0.95
        sb = 30 * u if rng.random() < 0.6 else 0
        if sb:
            d.rectangle([0, ch - sb, cw, ch], fill=_c([bg - 10] * 3))
            _text(d, rng, 10 * u, ch - sb * 0.7, cw * 0.5, 1, _c([bg + (-100 if light else 100)] * 3), h=max(3, 9 * u))
        area = (left + 4 * u, tb + 4 * u, cw - 4 * u, ch - sb - 4 * u)
        if layout == "two_up":
            mid = area[0] + (area[2] - area[0]) * rng.uniform(0.48, 0.6)
            vp = (area[0], area[1], mid - 3 * u, area[3])
            other = (mid + 3 * u, area[1], area[2], area[3])
        else:
            vp, other = area, None
        for v in [vp] + ([other] if layout == "two_up" else []):
            d.rectangle(v, fill=_c([rng.uniform(0, 10)] * 3))
        if layout == "two_up":
            o = fit_rect(other, rng.uniform(0.8, 1.4))
            oi, _, _ = xraysim.generate(seed * 13 + 5, 160, 130, present_opts={"lightbox": False, "tint": "grey"})
            oi = oi.convert("RGB").resize((max(1, int(o[2] - o[0])), max(1, int(o[3] - o[1]))), Image.BILINEAR)
            img.paste(oi, (int(o[0]), int(o[1])))
    # The radiograph: its own aspect inside the viewport most of the time.
    if layout == "fullscreen" and rng.random() < 0.4:
        rect = vp
    else:
        rect = fit_rect(vp, rng.uniform(0.75, 1.5))
        if rng.random() < 0.5:  # zoomed: fit, then shrink a little
            z = rng.uniform(0.8, 1.0)
            cx, cy = (rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2
            rect = (cx - (rect[2] - rect[0]) * z / 2, cy - (rect[3] - rect[1]) * z / 2,
                    cx + (rect[2] - rect[0]) * z / 2, cy + (rect[3] - rect[1]) * z / 2)
    x0, y0, x1, y1 = (int(round(v)) for v in rect)
    rim, lm, meta = xraysim.generate(seed, x1 - x0, y1 - y0, present_opts={"lightbox": False})
    img.paste(rim.convert("RGB"), (x0, y0))
    if layout != "fullscreen" or rng.random() < 0.5:  # corner overlays over the viewport
        tc = _c([rng.uniform(200, 255)] * 2 + [rng.uniform(150, 255)])
        h = max(4, 11 * u)
        for (ax, ay) in ((vp[0] + 8 * u, vp[1] + 8 * u), (vp[2] - 240 * u, vp[1] + 8 * u),
                         (vp[0] + 8 * u, vp[3] - 70 * u), (vp[2] - 240 * u, vp[3] - 70 * u)):
            if rng.random() < 0.8:
                _text(d, rng, ax, ay, 220 * u, int(rng.integers(1, 4)), tc, h=h)
    if layout == "two_up":  # the active viewport's outline
        d.rectangle(vp, outline=_c(rng.choice([[230, 200, 40], [70, 150, 250]])), width=max(1, int(2 * u)))
    lm = {k: [float(p[0]) + x0, float(p[1]) + y0] for k, p in lm.items()}
    return img, (x0, y0, x1, y1), lm, meta, rim


def office_content(rng, cw, ch):
    """A second monitor's picture: a spreadsheet or an e-mail client."""
    img = Image.new("RGB", (cw, ch), _c([rng.uniform(230, 250)] * 3))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, cw, ch * 0.08], fill=_c(rng.uniform(40, 200, 3)))
    step = ch * 0.035
    for k in range(int(ch * 0.9 / step)):
        y = ch * 0.1 + k * step
        d.line([0, y, cw, y], fill=(200, 200, 205))
    for x in np.arange(0, cw, cw * 0.09):
        d.line([x, ch * 0.1, x, ch], fill=(200, 200, 205))
    return img


# ---------------------------------------------------------------- the scene

class Scene:
    """Everything fixed about one photo, drawn from its seed."""

    def __init__(self, seed, size=None, only=None):
        rng = np.random.default_rng(seed)
        self.rng, self.seed = rng, seed
        only = only or {}
        self.display = only.get("display") or DISPLAYS[int(rng.integers(len(DISPLAYS)))]
        self.layout = only.get("layout") or LAYOUTS[int(rng.integers(len(LAYOUTS)))]
        self.room = only.get("room") or ROOMS[int(rng.integers(len(ROOMS)))]
        self.W, self.H = size or FRAME_SIZES[int(rng.integers(len(FRAME_SIZES)))]
        disp = self.display
        # Active area (cm) and native resolution.
        if disp == "medical":
            portrait = rng.random() < 0.4
            nat = (1536, 2048) if portrait else ((2048, 1536) if rng.random() < 0.5 else (1280, 1024))
            sw = rng.uniform(30, 40) if portrait else rng.uniform(38, 55)
        elif disp == "office":
            nat = [(1920, 1080), (1920, 1200), (2560, 1440), (1680, 1050)][int(rng.integers(4))]
            sw = rng.uniform(44, 70)
        elif disp == "laptop":
            nat = [(1920, 1080), (1440, 900), (2560, 1600)][int(rng.integers(3))]
            sw = rng.uniform(28, 36)
        else:
            nat = (3840, 2160) if rng.random() < 0.5 else (1920, 1080)
            sw = rng.uniform(80, 130)
        self.native = nat
        self.sw, self.sh = sw, sw * nat[1] / nat[0]
        cw = min(nat[0], 1600)
        ch = int(round(cw * nat[1] / nat[0]))
        self.content, self.rect, self.lm, self.meta, self.file_image = draw_content(rng, self.layout, cw, ch, seed)
        # Housing: bezel widths (cm), depth, recess, colour.
        if disp == "medical":
            b, bb, depth, tone = rng.uniform(1.5, 3.5), rng.uniform(0, 2.5), rng.uniform(4, 9), "black"
        elif disp == "office":
            b = rng.uniform(0.3, 2.2) if rng.random() < 0.8 else 0.15
            bb, depth = rng.uniform(0, 2.5), rng.uniform(1.5, 5)
            tone = ["black", "black", "grey", "white", "silver"][int(rng.integers(5))]
        elif disp == "laptop":
            b, bb, depth = rng.uniform(0.4, 1.5), rng.uniform(0.8, 2.2), rng.uniform(0.5, 0.9)
            tone = "black" if rng.random() < 0.6 else "silver"
        else:
            b, bb, depth, tone = rng.uniform(0.1, 1.0), rng.uniform(0, 1.2), rng.uniform(3, 8), "black"
        self.b, self.bb, self.depth = b, bb, depth
        self.recess = rng.uniform(0.0, 0.6) if disp != "tv" else rng.uniform(0, 0.15)
        self.albedo = {"black": rng.uniform(0.02, 0.07), "grey": rng.uniform(0.15, 0.3),
                       "white": rng.uniform(0.65, 0.85), "silver": rng.uniform(0.4, 0.6)}[tone] * np.array(
            [1.0, 1.0, 1.0 + (0.04 if tone == "silver" else 0)])
        self.gloss = {"medical": 0.03, "office": 0.04, "laptop": 0.10, "tv": 0.12}[disp] * rng.uniform(0.5, 1.6)
        self.bezel_gloss = rng.uniform(0.02, 0.15)
        self.grid_fill = rng.uniform(0.1, 0.4)  # dark share between native pixels
        self.grid_depth = rng.uniform(0.1, 0.5)  # how dark the gaps are
        self.optics = rng.uniform(0.35, 0.9)  # lens and sensor blur (frame px)
        self.white = rng.uniform(0.8, 1.4)  # screen white in scene radiance units
        self.black = rng.uniform(0.002, 0.02)
        self.falloff = rng.uniform(0.0, 0.5)  # emission loss at grazing view
        # Room (cm): ambient level, light direction, walls.
        self.ambient = {"dark": rng.uniform(0.005, 0.04), "office": rng.uniform(0.12, 0.35),
                        "bright": rng.uniform(0.4, 0.9)}[self.room]
        self.key = self.ambient * rng.uniform(0.8, 2.0)
        ld = np.array([rng.uniform(-0.6, 0.6), 1.0, rng.uniform(-0.2, 0.9)])
        self.light_dir = ld / np.linalg.norm(ld)
        self.light_col = np.array([1.0, rng.uniform(0.9, 1.0), rng.uniform(0.75, 1.0)])
        # Monitor placement: housing bottom above the desk, yaw and tilt.
        hh_cm = self.sh + b + (b + bb)
        self.stand = disp != "laptop" and rng.random() < 0.85
        self.lift = (rng.uniform(6, 20) if disp != "tv" else rng.uniform(4, 12)) if self.stand else (
            0.8 if disp == "laptop" else rng.uniform(0, 3))
        self.yaw = math.radians(rng.uniform(-15, 15))
        self.tilt = math.radians(rng.uniform(-3, 15) if disp != "laptop" else rng.uniform(10, 30))
        self.M = rot_y(self.yaw) @ rot_x(-self.tilt)  # monitor local -> world
        self.base = np.array([rng.uniform(-10, 10), self.lift, rng.uniform(-5, 5)])  # housing bottom-front centre
        self.hh = hh_cm
        self.room_lo = np.array([-rng.uniform(120, 250), -75.0, -rng.uniform(30, 120)])
        self.room_hi = np.array([rng.uniform(120, 250), rng.uniform(150, 210), 0.0])  # front wall set with the camera
        self.wall = _c(rng.uniform(120, 235, 3) if rng.random() < 0.8 else rng.uniform(60, 140, 3))
        self.window = rng.random() < {"bright": 0.8, "office": 0.35, "dark": 0.0}[self.room]
        self.window_rect = (rng.uniform(-0.8, 0.4), rng.uniform(0.2, 0.6))  # x frac and width frac on a wall
        self.window_level = rng.uniform(2.0, 6.0)
        self.desk_albedo = _c(rng.uniform(60, 200, 3) * np.array([1.0, 0.85, 0.7]) if rng.random() < 0.6 else rng.uniform(40, 220, 3))
        self.wood = rng.random() < 0.6
        self.second = rng.random() < 0.3
        self.second_side = 1 if rng.random() < 0.5 else -1
        self.second_content = office_content(rng, 640, 360) if self.second else None
        self.items = self._desk_items()
        self._camera()
        # Imaging.
        self.defocus_ap = rng.uniform(0, 14)  # blur (px) of a point at infinity focused on the screen
        self.focus_err = rng.uniform(0, 1.6) if rng.random() < 0.6 else 0.0
        self.motion = rng.uniform(1, 7) if rng.random() < 0.3 else 0.0
        self.motion_dir = rng.uniform(0, math.pi)
        self.vignette = rng.uniform(0, 0.45)
        self.wb = np.array([rng.uniform(0.85, 1.15), 1.0, rng.uniform(0.8, 1.2)])
        self.expo = rng.uniform(0.75, 1.35)
        self.read_noise = rng.uniform(0.0005, 0.004)
        self.shot = rng.uniform(0.0002, 0.0015)
        self.sharpen = rng.uniform(0, 1.2)
        self.quality = int(rng.integers(55, 93))
        self.frame_no = 0  # a sequence's frame: fresh sensor noise per frame

    # -- layout helpers
    def monitor_point(self, x, y, z):
        """Monitor local (cm: x right from the housing centre, y up from its
        bottom, z out of the front face) to world."""
        return self.base + self.M @ np.array([x, y, z])

    def screen_point(self, u, v):
        """Content pixel (u right, v down) on the active area, to world."""
        cw, ch = self.content.size
        x = (u / cw - 0.5) * self.sw
        y = self.bb + self.b + self.sh * (1 - v / ch)
        return self.monitor_point(x, y, -self.recess)

    def _desk_items(self):
        rng = self.rng
        items = []
        if self.display != "laptop" and rng.random() < 0.7:  # keyboard
            items.append(Box("keyboard", [rng.uniform(-12, 12), 1.2, rng.uniform(18, 30)], rot_y(rng.uniform(-0.2, 0.2)),
                             [rng.uniform(18, 23), 1.2, 7], "keys", albedo=rng.uniform(0.03, 0.5)))
        for _ in range(int(rng.integers(0, 4))):  # papers
            items.append(Box("paper", [rng.uniform(-70, 70), 0.05, rng.uniform(-10, 35)], rot_y(rng.uniform(-1, 1)),
                             [10.5, 0.05, 14.8], "paper", albedo=rng.uniform(0.7, 0.9)))
        if rng.random() < 0.5:  # mug
            items.append(Box("mug", [rng.uniform(-60, 60), 5, rng.uniform(0, 30)], rot_y(rng.uniform(0, 3)),
                             [4, 5, 4], "plain", albedo=rng.uniform(0.05, 0.9, 3)))
        if rng.random() < 0.4:  # books
            items.append(Box("books", [rng.uniform(-80, 80), 6, rng.uniform(-20, 10)], rot_y(rng.uniform(-0.5, 0.5)),
                             [rng.uniform(8, 20), 6, 11], "books", albedo=rng.uniform(0.1, 0.7, 3)))
        return items

    def _camera(self):
        rng = self.rng
        W, H = self.W, self.H
        self.fov = math.radians(rng.uniform(50, 78))  # horizontal
        self.f = (W / 2) / math.tan(self.fov / 2)
        self.k1 = rng.uniform(-0.10, 0.03)
        self.cut = rng.random() < 0.08
        # View direction from the screen centre: azimuth and elevation
        # around the screen's normal, so that the total tilt is <= 45 deg.
        for _ in range(200):
            az, el = rng.uniform(-45, 45), rng.uniform(-12, 35)
            if math.hypot(az, el) <= 45:
                break
        share = rng.uniform(0.45, 0.9) if not self.cut else rng.uniform(0.8, 1.1)
        centre = self.screen_point(*(np.array(self.content.size) / 2))
        dirn = rot_y(math.radians(az)) @ rot_x(-math.radians(el)) @ np.array([0, 0, 1.0])
        dirn = rot_y(self.yaw) @ rot_x(-self.tilt) @ dirn
        # Distance so that the active area spans about share of the frame width.
        extent = max(self.sw, self.sh * W / H)
        dist = extent / share / (2 * math.tan(self.fov / 2))
        aim = centre + self.M @ np.array([rng.uniform(-0.12, 0.12) * self.sw, rng.uniform(-0.12, 0.12) * self.sh, 0])
        self.roll = math.radians(rng.uniform(-10, 10))
        for _ in range(30):
            pos = centre + dirn * dist
            pos[1] = max(pos[1], 8.0)
            self._look(pos, aim)
            sc = self.project([self.screen_point(*p) for p in self._screen_px()])
            inside = (sc[:, 0] >= 0) & (sc[:, 0] <= W) & (sc[:, 1] >= 0) & (sc[:, 1] <= H)
            if self.cut and 1 <= (~inside).sum() <= 2:
                break
            if not self.cut and inside.all():
                break
            dist *= 1.06 if not self.cut else rng.uniform(0.9, 1.1)
        else:
            self.cut = not inside.all()
        # The room holds the camera, and the photographer stands behind it.
        self.room_lo[0] = min(self.room_lo[0], self.cam[0] - rng.uniform(40, 200))
        self.room_hi[0] = max(self.room_hi[0], self.cam[0] + rng.uniform(40, 200))
        self.room_hi[1] = max(self.room_hi[1], self.cam[1] + rng.uniform(30, 80))
        self.room_hi[2] = max(self.cam[2] + rng.uniform(40, 250), 60.0)
        back = self.Rc[:, 2] * np.array([1, 0, 1])
        back /= max(np.linalg.norm(back), 1e-9)
        self.photographer = Box("photographer", self.cam - back * 30 + np.array([0, -25.0, 0]),
                                rot_y(math.atan2(back[0], back[2])), [22, 45, 12], "plain",
                                albedo=np.full(3, rng.uniform(0.02, 0.2)))

    def _look(self, pos, aim):
        self.aim = np.asarray(aim, float)
        fwd = aim - pos
        fwd /= np.linalg.norm(fwd)
        right = np.cross(fwd, [0, 1.0, 0])
        right /= np.linalg.norm(right)
        up = np.cross(right, fwd)
        Rc = np.stack([right, -up, fwd], 1)  # camera (x right, y down, z forward) -> world
        self.cam, self.Rc = pos, Rc @ rot_z(self.roll).T

    def _screen_px(self):
        cw, ch = self.content.size
        return [(0, 0), (cw, 0), (cw, ch), (0, ch)]

    def project(self, pts):
        """World points to frame pixels, through the lens distortion."""
        p = (np.asarray(pts, float) - self.cam) @ self.Rc
        xu, yu = p[:, 0] / p[:, 2], p[:, 1] / p[:, 2]
        xd, yd = xu.copy(), yu.copy()
        for _ in range(50):  # invert xu = xd (1 + k1 rd^2)
            s = 1 + self.k1 * (xd * xd + yd * yd) * (self.f / (self.W / 2)) ** 2
            xd, yd = xu / s, yu / s
        return np.stack([xd * self.f + self.W / 2, yd * self.f + self.H / 2], 1)

    def shaken(self, rng, amount=1.0):
        """The same scene seen from a hand-held camera a moment later: the
        camera moved by about a centimetre, turned by a fraction of a degree
        and rolled a little (amount scales all three)."""
        import copy
        t = copy.copy(self)
        t.frame_no = self.frame_no + 1
        t.roll = self.roll + math.radians(rng.normal(0, 0.4)) * amount
        aim = self.aim + rng.normal(0, 0.6, 3) * amount
        t._look(self.cam + rng.normal(0, 1.0, 3) * amount, aim)
        return t

    def in_active(self, x, y, tol=0.0):
        """Whether housing-local points (x from the centre, y up from the
        housing's bottom) lie inside the active area, grown by tol."""
        y0 = self.bb + self.b
        return (np.abs(x) < self.sw / 2 + tol) & (y > y0 - tol) & (y < y0 + self.sh + tol)

    def onto_screen(self, bx, pl, d):
        """Carry housing front-face hits pl (box-local) along their rays d
        (world) back to the recessed screen plane: box-local points and the
        rays in box coordinates."""
        dl = d @ bx.R
        t = (-self.recess) / np.where(np.abs(dl[:, 2]) < 1e-9, -1e-9, dl[:, 2])
        return pl + dl * t[:, None], dl

    def hidden_share(self, n=11):
        """Share of the displayed radiograph hidden from the camera by
        something in front of it (a desk item, the bezel's lip, the
        housing), from an n x n grid of points over it."""
        x0, y0, x1, y1 = self.rect
        mx, my = 0.03 * (x1 - x0), 0.03 * (y1 - y0)  # inset: the lip may hide a sliver of the edges
        pts = [self.screen_point(u, v) for u in np.linspace(x0 + mx, x1 - mx, n) for v in np.linspace(y0 + my, y1 - my, n)]
        p = np.asarray(pts)
        d = p - self.cam
        dist = np.linalg.norm(d, axis=1)
        d = d / dist[:, None]
        o = np.broadcast_to(self.cam, d.shape).copy()
        hidden = np.zeros(len(d), bool)
        for bx in self.boxes():
            t, pl, ax, sg = bx.hit(o, d)
            if bx.name == "housing":
                # Through the front opening onto the screen is the view; any
                # other face of the housing, or the lip, is in the way.
                through = (ax == 2) & (sg > 0) & self.in_active(pl[:, 0], pl[:, 1] + bx.h[1])
                q, _ = self.onto_screen(bx, pl, d)
                lip = ~self.in_active(q[:, 0], q[:, 1] + bx.h[1], 1e-6)
                hidden |= (t < dist - 1e-6) & (~through | lip)
            else:
                hidden |= t < dist - 1e-6
        return float(hidden.mean())

    def rays(self, ss):
        """Ray directions (world, unit) for ss x ss samples per pixel."""
        W, H = self.W * ss, self.H * ss
        y, x = np.mgrid[0:H, 0:W].astype(np.float64)
        xd = ((x + 0.5) / ss - self.W / 2) / self.f
        yd = ((y + 0.5) / ss - self.H / 2) / self.f
        s = 1 + self.k1 * (xd * xd + yd * yd) * (self.f / (self.W / 2)) ** 2
        d = np.stack([xd * s, yd * s, np.ones_like(xd)], -1).reshape(-1, 3) @ self.Rc.T
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    # -- objects
    def boxes(self):
        """Every box in the scene: monitor housing, stand, desk and items."""
        M, b, bb = self.M, self.b, self.bb
        hw = self.sw / 2 + b
        boxes = [Box("housing", self.monitor_point(0, self.hh / 2, -self.depth / 2), M, [hw, self.hh / 2, self.depth / 2],
                     "housing")]
        if self.stand:
            neck_h = self.lift + self.hh * 0.35
            boxes.append(Box("neck", self.base + np.array([0, -self.lift + neck_h / 2, 0]) + M @ np.array([0, 0, -self.depth - 1.5]) * np.array([1, 0, 1]),
                             rot_y(self.yaw), [self.sw * 0.06 + 2, neck_h / 2, 1.5], "housing"))
            boxes.append(Box("foot", np.array([self.base[0], 0.6, self.base[2] - self.depth - 4]), rot_y(self.yaw),
                             [self.sw * 0.2 + 6, 0.6, 11], "housing"))
        if self.display == "laptop":
            boxes.append(Box("deck", np.array([self.base[0], 0.5, self.base[2] + 13]), rot_y(self.yaw),
                             [hw, 0.5, 13], "keys", albedo=float(self.albedo[0]) * 1.1))
        boxes.append(Box("desk", [0, -2.0, 0], np.eye(3), [160, 2.0, 45], "desk"))
        if self.second:
            s = self.second_side
            c = self.base + np.array([s * (self.sw * 0.5 + 30 + 2 * b), self.hh / 2, -5])
            boxes.append(Box("second", c, rot_y(-s * 0.5), [30, 18, 2], "second"))
        return boxes + self.items


# ---------------------------------------------------------------- shading

def _bilinear(img, x, y):
    """Sample an RGB float image at continuous pixel coordinates (edge clamped)."""
    h, w = img.shape[:2]
    x = np.clip(x - 0.5, 0, w - 1.001)
    y = np.clip(y - 0.5, 0, h - 1.001)
    x0, y0 = x.astype(int), y.astype(int)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    a = img[y0, x0] * (1 - fx) + img[y0, x0 + 1] * fx
    b = img[y0 + 1, x0] * (1 - fx) + img[y0 + 1, x0 + 1] * fx
    return a * (1 - fy) + b * fy


def _srgb_to_lin(a):
    return (np.asarray(a, np.float64) / 255.0) ** 2.2


class Renderer:
    def __init__(self, s):
        self.s = s
        self.content = _srgb_to_lin(s.content)
        self.second = _srgb_to_lin(s.second_content) if s.second else None
        self.boxes = s.boxes()
        self.wall = _srgb_to_lin(s.wall)
        self.desk = _srgb_to_lin(s.desk_albedo)

    def room_radiance(self, p, axis, side):
        """Radiance of the room's walls, ceiling and floor where rays leave."""
        s = self.s
        lo, hi = s.room_lo, s.room_hi
        col = np.tile(self.wall * (s.ambient + 0.3 * s.key), (len(p), 1))
        ceil = (axis == 1) & (side > 0)
        floor = (axis == 1) & (side < 0)
        col[floor] = self.wall * 0.4 * (s.ambient + s.key)
        # Ceiling lights: a grid of bright panels.
        if ceil.any():
            q = p[ceil]
            lit = ((np.mod(q[:, 0], 120) < 60) & (np.mod(q[:, 2], 150) < 30))
            c = np.tile(self.wall * s.ambient * 0.8, (len(q), 1))
            c[lit] = s.light_col * (3.0 if s.room != "dark" else 0.05)
            col[ceil] = c
        # A window on the back wall (axis 2, side -) or the front wall (side +).
        if s.window:
            for wall_side in (-1, 1):
                m = (axis == 2) & (side == wall_side)
                if not m.any():
                    continue
                q = p[m]
                fx, fw = s.window_rect
                x0 = lo[0] + (hi[0] - lo[0]) * (0.5 + 0.5 * fx)
                x1 = x0 + (hi[0] - lo[0]) * fw * 0.5
                win = (q[:, 0] > x0) & (q[:, 0] < x1) & (q[:, 1] > 40) & (q[:, 1] < 170)
                # Window bars.
                bar = (np.abs(np.mod(q[:, 0] - x0, 60) - 30) < 1.5) | (np.abs(q[:, 1] - 105) < 1.5)
                c = col[m]
                c[win & ~bar] = np.array([0.9, 0.95, 1.05]) * s.window_level
                col[m] = c
        # Posters on the back wall.
        m = (axis == 2) & (side < 0)
        if m.any():
            q = p[m]
            rng = np.random.default_rng(s.seed + 77)
            c = col[m]
            for _ in range(int(rng.integers(0, 4))):
                x0, y0 = rng.uniform(lo[0], hi[0] - 60), rng.uniform(40, 150)
                pw, ph = rng.uniform(20, 60), rng.uniform(20, 60)
                inb = (q[:, 0] > x0) & (q[:, 0] < x0 + pw) & (q[:, 1] > y0) & (q[:, 1] < y0 + ph)
                c[inb] = rng.uniform(0.02, 0.8, 3) * (s.ambient + 0.3 * s.key)
            col[m] = c
        return col

    def lambert(self, n_world):
        s = self.s
        return s.ambient + s.key * np.clip(n_world @ s.light_dir, 0, None)[:, None] * s.light_col

    def reflect_env(self, p, d, n):
        """What a mirror at p with normal n shows along the reflected ray."""
        s = self.s
        r = d - 2 * (d * n).sum(1, keepdims=True) * n
        t, q, axis, side = room_exit(p, r, s.room_lo, s.room_hi)
        col = self.room_radiance(q, axis, side)
        tp, _, _, _ = s.photographer.hit(p, r)
        col[tp < t] = s.photographer.kw["albedo"] * s.ambient
        return col

    def trace(self, o, d):
        """Radiance and depth along rays d from o (arrays [N,3])."""
        s = self.s
        N = len(d)
        best = np.full(N, np.inf)
        idx = np.full(N, -1)
        hits = []
        for k, bx in enumerate(self.boxes):
            t, pl, ax, sg = bx.hit(o, d)
            m = t < best
            best[m], idx[m] = t[m], k
            hits.append((pl, ax, sg))
        rt, rq, raxis, rside = room_exit(o, d, s.room_lo, s.room_hi)
        idx[best > rt] = -1  # behind a wall
        col = np.zeros((N, 3))
        miss = idx < 0
        col[miss] = self.room_radiance(rq[miss], raxis[miss], rside[miss])
        depth = np.where(miss, rt, best)
        for k, bx in enumerate(self.boxes):
            m = idx == k
            if not m.any():
                continue
            pl, ax, sg = (h[m] for h in hits[k])
            nl = np.zeros((m.sum(), 3))
            nl[np.arange(m.sum()), ax] = sg
            nw = nl @ bx.R.T
            p = o[m] + d[m] * best[m][:, None]
            if bx.mat == "housing":
                col[m] = self.shade_housing(bx, pl, ax, sg, nw, p, d[m])
            elif bx.mat == "desk":
                a = self.desk
                if s.wood:
                    g = 1 + 0.12 * np.sin(p[:, 0] * 0.9 + 3 * np.sin(p[:, 2] * 0.05)) + 0.05 * np.sin(p[:, 0] * 7.3)
                    a = a[None, :] * g[:, None]
                col[m] = a * self.lambert(nw)
            elif bx.mat == "keys":
                alb = np.full((m.sum(), 3), bx.kw.get("albedo", 0.1))
                top = (ax == 1) & (sg > 0)
                kx = np.mod(pl[:, 0] + 100, 1.9) < 1.6
                kz = np.mod(pl[:, 2] + 100, 1.9) < 1.6
                alb[top & ~(kx & kz)] *= 0.35
                col[m] = alb * self.lambert(nw)
            elif bx.mat == "paper":
                alb = np.full((m.sum(), 3), bx.kw["albedo"])
                line = (np.mod(pl[:, 2] + 100, 0.8) < 0.25) & (np.abs(pl[:, 0]) < 8) & (np.abs(pl[:, 2]) < 12)
                alb[line] *= 0.4
                col[m] = alb * self.lambert(nw)
            elif bx.mat == "second":
                front = (ax == 2) & (sg > 0) & (np.abs(pl[:, 0]) < 28.5) & (np.abs(pl[:, 1]) < 16.5)
                c = np.full((m.sum(), 3), 0.04) * self.lambert(nw)
                if front.any():
                    u = (pl[front, 0] / 57 + 0.5) * self.second.shape[1]
                    v = (0.5 - pl[front, 1] / 33) * self.second.shape[0]
                    c[front] = _bilinear(self.second, u, v) * s.white * 0.9
                col[m] = c
            else:
                alb = np.broadcast_to(np.asarray(bx.kw.get("albedo", 0.3), float), (m.sum(), 3))
                if bx.mat == "books":
                    alb = alb * (1 + 0.3 * np.sin(pl[:, 0] * 2.5))[:, None]
                col[m] = alb * self.lambert(nw)
        return col, depth

    def shade_housing(self, bx, pl, ax, sg, nw, p, d):
        """The monitor's box: the active area through the front opening, the
        recess lip, the bezel with its logo and light, the other faces."""
        s = self.s
        col = self.s.albedo * self.lambert(nw)
        if bx.name != "housing":
            return col
        front = (ax == 2) & (sg > 0)
        # Local coordinates with y up from the housing bottom.
        x, y = pl[:, 0], pl[:, 1] + bx.h[1]
        ox0, oy0 = -s.sw / 2, s.bb + s.b
        opening = front & s.in_active(x, y)
        bez = front & ~opening
        if bez.any():  # glossy bezel with a logo and a power light
            c = col[bez]
            env = self.reflect_env(p[bez], d[bez], nw[bez])
            c = c + s.bezel_gloss * env
            bx_, by_ = x[bez], y[bez]
            logo = (np.abs(bx_) < s.sw * 0.05) & (np.abs(by_ - s.bb * 0.5 - s.b * 0.5) < min(0.5, (s.bb + s.b) * 0.2))
            c[logo] = c[logo] * 3 + 0.05 * s.white
            led = (np.abs(bx_ - s.sw * 0.45) < 0.25) & (np.abs(by_ - (s.bb + s.b) * 0.5) < 0.25)
            c[led] = np.array([0.2, 0.6, 1.0]) * s.white
            col[bez] = c
        if opening.any():
            q, dl = s.onto_screen(bx, pl[opening], d[opening])
            qx, qy = q[:, 0], q[:, 1] + bx.h[1]
            onscreen = s.in_active(qx, qy)
            c = np.tile(s.albedo * 0.5 * s.ambient, (len(q), 1))  # the lip, in its own shadow
            if onscreen.any():
                cw, ch = self.s.content.size
                u = (qx[onscreen] - ox0) / s.sw
                v = 1 - (qy[onscreen] - oy0) / s.sh
                emit = _bilinear(self.content, u * cw, v * ch)
                nu, nv = u * s.native[0], v * s.native[1]
                gx = np.abs(np.mod(nu, 1.0) - 0.5) > 0.5 - s.grid_fill / 2
                gy = np.abs(np.mod(nv, 1.0) - 0.5) > 0.5 - s.grid_fill / 2
                grid = 1 - s.grid_depth * (gx | gy)
                cosv = np.abs(dl[onscreen, 2]) / np.linalg.norm(dl[onscreen], axis=1)
                emit = (s.black + emit * (1 - s.black)) * s.white * grid[:, None] * (1 - s.falloff * (1 - cosv))[:, None]
                pw = p[opening][onscreen]
                nwo = nw[opening][onscreen]
                env = self.reflect_env(pw, d[opening][onscreen], nwo)
                c[onscreen] = emit + s.gloss * env + 0.02 * s.ambient
            col[opening] = c
        return col


def render(s, ss=SS):
    """The photo (uint8 RGB) of scene s."""
    r = Renderer(s)
    d = s.rays(ss)
    o = np.broadcast_to(s.cam, d.shape)
    col = np.zeros((len(d), 3))
    depth = np.zeros(len(d))
    step = 400_000
    for i in range(0, len(d), step):
        col[i:i + step], depth[i:i + step] = r.trace(np.ascontiguousarray(o[i:i + step]), d[i:i + step])
    H, W = s.H, s.W
    img = col.reshape(H, ss, W, ss, 3).mean((1, 3))
    z = depth.reshape(H, ss, W, ss).min((1, 3))
    # Depth of field: blur by the circle of confusion, focused on the screen.
    zf = float(np.linalg.norm(s.screen_point(*(np.array(s.content.size) / 2)) - s.cam))
    coc = s.defocus_ap * np.abs(z - zf) / np.maximum(z, 1) + s.focus_err + 2 * s.optics
    levels = [0, 0.8, 1.6, 3.2, 6.4, 12.8]
    stack = [img] + [ndimage.gaussian_filter(img, (sg, sg, 0)) for sg in levels[1:]]
    sig = np.clip(coc / 2, 0, levels[-1])
    k = np.clip(np.searchsorted(levels, sig) - 1, 0, len(levels) - 2)
    lo = np.take(levels, k)
    hi = np.take(levels, k + 1)
    w = ((sig - lo) / (hi - lo))[..., None]
    out = np.zeros_like(img)
    for i in range(len(levels) - 1):
        m = (k == i)[..., None]
        out += np.where(m, stack[i] * (1 - w) + stack[i + 1] * w, 0)
    img = out
    if s.motion > 0.5:
        n = int(math.ceil(s.motion)) * 2 + 1
        ker = np.zeros((n, n))
        c = n // 2
        for t in np.linspace(-s.motion / 2, s.motion / 2, 4 * n):
            ker[int(round(c + t * math.sin(s.motion_dir))), int(round(c + t * math.cos(s.motion_dir)))] += 1
        ker /= ker.sum()
        img = np.stack([ndimage.convolve(img[..., i], ker, mode="nearest") for i in range(3)], -1)
    yy, xx = np.mgrid[0:H, 0:W]
    rr = ((xx - W / 2) ** 2 + (yy - H / 2) ** 2) / ((W / 2) ** 2 + (H / 2) ** 2)
    img = img * (1 - s.vignette * rr)[..., None]
    # Auto exposure on the frame's mean with a highlight limit.
    lum = img.mean(-1)
    gain = 0.18 * s.expo / max(float(lum.mean()), 1e-4)
    gain = min(gain, 1.6 / max(float(np.percentile(lum, 99.5)), 1e-4))
    img = img * gain * s.wb
    rng = np.random.default_rng(s.seed + 991 + 7919 * s.frame_no)
    img = img + rng.normal(0, 1, img.shape) * np.sqrt(s.shot * np.clip(img, 0, None) + s.read_noise ** 2)
    img = np.clip(img, 0, 1) ** (1 / 2.2)
    pim = Image.fromarray((img * 255 + 0.5).astype(np.uint8), "RGB")
    if s.sharpen > 0.1:
        pim = pim.filter(ImageFilter.UnsharpMask(radius=1.5, percent=int(60 * s.sharpen), threshold=2))
    return pim


def truth(s):
    cw, ch = s.content.size
    x0, y0, x1, y1 = s.rect
    corners = s.project([s.screen_point(u, v) for u, v in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))])
    screen = s.project([s.screen_point(*p) for p in s._screen_px()])
    W, H = s.W, s.H
    out = (screen[:, 0] < 0) | (screen[:, 0] > W) | (screen[:, 1] < 0) | (screen[:, 1] > H)
    lm = {k: s.project([s.screen_point(*p)])[0].tolist() for k, p in s.lm.items()}
    hidden = s.hidden_share()
    return dict(corners=corners.tolist(), screen=screen.tolist(), display=s.display, layout=s.layout, room=s.room,
                generator="pop_scene3d", cut_off=bool(out.any()), hidden=round(hidden, 3),
                usable=not bool(out.any()) and hidden <= MAX_HIDDEN, kind="vscreen",
                mode="fullscreen" if s.layout == "fullscreen" else "viewer",
                displayed_size=[x1 - x0, y1 - y0], width=W, height=H, landmarks=lm, vhs=s.meta["vhs"],
                vlas=s.meta["vlas"], seed=int(s.seed), lens_k1=round(float(s.k1), 4),
                tilt_deg=round(math.degrees(math.acos(min(1.0, abs(float((s.cam - s.screen_point(cw / 2, ch / 2))
                    @ (s.M @ np.array([0, 0, 1.0]))) / np.linalg.norm(s.cam - s.screen_point(cw / 2, ch / 2)))))), 1))


def _write(out, name, im, quality):
    buf = BytesIO()
    im.save(buf, "JPEG", quality=quality)
    with open(os.path.join(out, name), "wb") as f:
        f.write(buf.getvalue())


def _job(args):
    """One scene: a photo (frames 0) or a hand-held sequence of frames, in
    which about one frame in four is blurred by motion (unusable)."""
    i, seed, out, only, frames, size = args
    s = Scene(seed, size=size, only=only)
    fname = f"vscreen_{i:04d}_file.png" if frames == 0 else f"vseq_{i:03d}_file.png"
    s.file_image.save(os.path.join(out, fname))
    if frames == 0:
        t = truth(s)
        name = f"vscreen_{i:04d}.jpg"
        _write(out, name, render(s), s.quality)
        t.update(file=name, displayed_file=fname)
        return [t]
    rng = np.random.default_rng(seed + 555)
    res, cur = [], s
    for k in range(frames):
        cur = cur.shaken(rng, rng.uniform(0.3, 1.2))
        cur.motion = rng.uniform(8, 16) if rng.random() < 0.25 else rng.uniform(0, 3)
        t = truth(cur)
        t.update(kind="sequence", sequence=i, frame=k, usable=t["usable"] and cur.motion < 8, motion=round(cur.motion, 2))
        name = f"vseq_{i:03d}_{k:02d}.jpg"
        _write(out, name, render(cur), s.quality)
        t.update(file=name, displayed_file=fname)
        res.append(t)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=48_000_000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--frames", type=int, default=0,
                    help="0: one photo per scene (kind vscreen); K: a hand-held sequence of K frames (kind sequence)")
    ap.add_argument("--size", default="", help="WxH for every frame, default: drawn per scene")
    ap.add_argument("--only", action="append", default=[], metavar="AXIS=NAME",
                    help="display, layout or room fixed to one value")
    a = ap.parse_args()
    only = {}
    for sp in a.only:
        ax, _, v = sp.partition("=")
        allowed = {"display": DISPLAYS, "layout": LAYOUTS, "room": ROOMS}.get(ax)
        if allowed is None or v not in allowed:
            raise SystemExit(f"bad --only {sp!r}")
        only[ax] = v
    os.makedirs(a.out, exist_ok=True)
    size = tuple(int(v) for v in a.size.split("x")) if a.size else None
    jobs = [(i, a.seed0 + i, a.out, only, a.frames, size) for i in range(a.n)]
    items = run_jobs(_job, jobs, a.workers)
    kind = "vscreen" if a.frames == 0 else "sequence"
    with open(os.path.join(a.out, f"truth_{kind}.json"), "w") as f:
        json.dump({"kind": kind, "generator": "pop_scene3d", "seed0": a.seed0, "n": a.n, "only": only,
                   "items": items}, f, indent=1)
    print(f"wrote {len(items)} frames to {a.out}")


if __name__ == "__main__":
    main()
