"""Images that are not thoracic radiographs, for the validity classifier.

SYNTHETIC. Kinds: text documents, UI screenshots, colour scenes, grayscale
textures and blobs (hard negatives), colour photos of clutter, plain and
gradient fields, and whatever image files Debian packages put under
/usr/share (icons, wallpapers) when present.
"""
import glob
import math
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from sim.phantom import load_font

WORDS = ("invoice total patient clinic dog cat report date amount paid results normal the of and for with "
         "appointment vaccine weight kg notes history follow up please sign here lorem ipsum dolor").split()


def _text(r, n):
    return " ".join(r.choice(WORDS) for _ in range(n))


def document(r, w, h):
    bg = int(r.uniform(215, 255))
    im = Image.new("RGB", (w, h), (bg, bg, int(bg * r.uniform(0.9, 1))))
    d = ImageDraw.Draw(im)
    sz = int(h * r.uniform(0.015, 0.04))
    f = load_font(sz)
    y = int(h * 0.05)
    while y < h * 0.95:
        d.text((int(w * 0.06), y), _text(r, int(r.integers(3, 12))), fill=(20, 20, 20), font=f)
        y += int(sz * r.uniform(1.3, 2.2))
    if r.random() < 0.5:
        for _ in range(int(r.integers(1, 6))):
            x0, y0 = int(r.uniform(0, w)), int(r.uniform(0, h))
            d.rectangle([x0, y0, x0 + int(r.uniform(20, w / 2)), y0 + int(r.uniform(10, h / 5))], outline=(0, 0, 0))
    return im


def screenshot(r, w, h):
    base = tuple(int(c) for c in r.uniform(30, 250, 3))
    im = Image.new("RGB", (w, h), base)
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, w, int(h * r.uniform(0.04, 0.1))], fill=tuple(int(c) for c in r.uniform(0, 255, 3)))
    for _ in range(int(r.integers(3, 14))):
        x0, y0 = int(r.uniform(0, w)), int(r.uniform(0, h))
        col = tuple(int(c) for c in r.uniform(0, 255, 3))
        d.rectangle([x0, y0, x0 + int(r.uniform(30, w / 2)), y0 + int(r.uniform(15, h / 3))], fill=col)
        d.text((x0 + 4, y0 + 4), _text(r, 3), fill=(0, 0, 0) if sum(col) > 380 else (255, 255, 255),
               font=load_font(h * 0.025))
    return im


def scene(r, w, h):
    gy = np.linspace(0, 1, h)[:, None, None]
    top, bot = r.uniform(0, 255, 3), r.uniform(0, 255, 3)
    arr = (top * (1 - gy) + bot * gy) * np.ones((1, w, 1))
    im = Image.fromarray(arr.astype(np.uint8))
    d = ImageDraw.Draw(im)
    for _ in range(int(r.integers(5, 40))):
        x0, y0 = r.uniform(-0.1, 1) * w, r.uniform(-0.1, 1) * h
        s = r.uniform(0.02, 0.4) * max(w, h)
        col = tuple(int(c) for c in r.uniform(0, 255, 3))
        if r.random() < 0.5:
            d.ellipse([x0, y0, x0 + s, y0 + s * r.uniform(0.4, 1.5)], fill=col)
        else:
            d.polygon([(x0 + r.uniform(-s, s), y0 + r.uniform(-s, s)) for _ in range(int(r.integers(3, 7)))], fill=col)
    return im.filter(ImageFilter.GaussianBlur(r.uniform(0, 3)))


def texture(r, w, h, color=False):
    """Fractal noise: clouds, fur, fabric, stone. Gray ones are hard negatives."""
    acc = np.zeros((h, w), np.float32)
    for octave in range(1, 7):
        n = 2 ** octave
        small = r.random((n + 1, n + 1)).astype(np.float32)
        acc += np.asarray(Image.fromarray(small).resize((w, h), Image.BICUBIC)) / octave ** r.uniform(0.6, 1.4)
    acc = (acc - acc.min()) / max(acc.max() - acc.min(), 1e-6)
    if r.random() < 0.4:
        acc = np.abs(np.sin(acc * r.uniform(5, 30)))
    if color:
        a, b = r.uniform(0, 255, 3), r.uniform(0, 255, 3)
        arr = a * acc[..., None] + b * (1 - acc[..., None])
    else:
        arr = np.repeat(acc[..., None] * 255, 3, 2)
    return Image.fromarray(arr.astype(np.uint8))


def gray_blobs(r, w, h):
    """Gray scenes with bright blobs and lines on black: resembles an X-ray only loosely."""
    im = Image.new("L", (w, h), int(r.uniform(0, 60)))
    d = ImageDraw.Draw(im)
    for _ in range(int(r.integers(3, 25))):
        x0, y0 = r.uniform(0, w), r.uniform(0, h)
        s = r.uniform(0.03, 0.5) * max(w, h)
        v = int(r.uniform(60, 255))
        if r.random() < 0.6:
            d.ellipse([x0, y0, x0 + s, y0 + s * r.uniform(0.3, 1.5)], fill=v)
        else:
            d.line([(x0, y0), (x0 + r.uniform(-s, s), y0 + r.uniform(-s, s))], fill=v, width=int(r.uniform(2, 15)))
    return im.filter(ImageFilter.GaussianBlur(r.uniform(0, 6))).convert("RGB")


def plain(r, w, h):
    col = tuple(int(c) for c in r.uniform(0, 255, 3))
    if r.random() < 0.5:
        v = int(r.uniform(0, 255))
        col = (v, v, v)
    return Image.new("RGB", (w, h), col)


_SYSTEM = None


def system_image(r, w, h):
    """An image file shipped by a Debian package, if any are installed."""
    global _SYSTEM
    if _SYSTEM is None:
        pats = ["/usr/share/pixmaps/*.png", "/usr/share/icons/*/*/*/*.png", "/usr/share/backgrounds/*/*",
                "/usr/share/images/*/*", "/usr/share/wallpapers/*/*/*/*.png"]
        _SYSTEM = [p for pat in pats for p in glob.glob(pat) if p.lower().endswith((".png", ".jpg", ".jpeg"))]
    if not _SYSTEM:
        return scene(r, w, h)
    try:
        im = Image.open(_SYSTEM[int(r.integers(len(_SYSTEM)))]).convert("RGB")
    except Exception:
        return scene(r, w, h)
    return im.resize((w, h), Image.BILINEAR)


KINDS = [document, screenshot, scene, lambda r, w, h: texture(r, w, h, True), texture, gray_blobs, plain, system_image]


def spreadsheet(r, w, h):
    """A spreadsheet window: header bar, column letters, a grid of cells with
    numbers and words, a selected cell. Held out: never in training."""
    im = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(im)
    bar = int(h * r.uniform(0.05, 0.12))
    d.rectangle([0, 0, w, bar], fill=tuple(int(c) for c in r.uniform(180, 240, 3)))
    ch = int(r.uniform(14, 30) * max(w, h) / 600)
    cw = int(ch * r.uniform(3, 6))
    f = load_font(max(8, int(ch * 0.6)))
    grid = tuple(int(c) for c in np.full(3, r.uniform(170, 225)))
    for x in range(0, w, cw):
        d.line([x, bar, x, h], fill=grid)
    for y in range(bar, h, ch):
        d.line([0, y, w, y], fill=grid)
    d.rectangle([0, bar, w, bar + ch], fill=(235, 235, 235))
    for j, x in enumerate(range(cw, w, cw)):
        d.text((x + 4, bar + 2), chr(65 + j % 26), fill=(60, 60, 60), font=f)
    for y in range(bar + ch, h - ch, ch):
        for x in range(0, w - cw, cw):
            if r.random() < 0.7:
                t = f"{r.uniform(0, 500):.{int(r.integers(0, 3))}f}" if r.random() < 0.7 else str(r.choice(WORDS))
                d.text((x + 3, y + 2), t, fill=(10, 10, 10), font=f)
    x0, y0 = int(r.integers(0, max(1, w // cw))) * cw, bar + int(r.integers(1, max(2, (h - bar) // ch))) * ch
    d.rectangle([x0, y0, x0 + cw, y0 + ch], outline=(30, 120, 40), width=2)
    return im


def ultrasound(r, w, h):
    """A B-mode ultrasound frame: a speckled sector on black, bright
    interfaces, a dark cyst, depth marks and text. Held out: never in
    training."""
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    apex = np.array([w * r.uniform(0.4, 0.6), h * r.uniform(-0.05, 0.08)])
    rad = np.hypot(xx - apex[0], yy - apex[1])
    ang = np.arctan2(xx - apex[0], yy - apex[1])
    half = math.radians(r.uniform(25, 45))
    r0, r1 = h * r.uniform(0.03, 0.1), h * r.uniform(0.8, 0.97)
    sector = (np.abs(ang) < half) & (rad > r0) & (rad < r1)
    speckle = r.rayleigh(0.35, (h, w))
    from scipy import ndimage
    speckle = ndimage.gaussian_filter(speckle, (0.8, 2.0))
    tissue = 0.5 + 0.3 * np.sin(rad / h * r.uniform(8, 20) + r.uniform(0, 6))
    for _ in range(int(r.integers(1, 4))):  # bright interfaces
        rr = r.uniform(r0, r1)
        tissue += 1.2 * np.exp(-((rad - rr - 20 * np.sin(ang * 3)) / (h * 0.01)) ** 2)
    c = np.array([apex[0] + r.uniform(-0.2, 0.2) * w, h * r.uniform(0.4, 0.7)])
    cyst = np.hypot((xx - c[0]) / r.uniform(0.05, 0.15) / w, (yy - c[1]) / r.uniform(0.04, 0.1) / h) < 1
    tissue = np.where(cyst, 0.05, tissue)
    img = np.where(sector, np.clip(speckle * tissue * (1 - 0.5 * rad / h), 0, 1), 0.0)
    im = Image.fromarray((img * 255).astype(np.uint8)).convert("RGB")
    d = ImageDraw.Draw(im)
    f = load_font(max(9, int(h * 0.025)))
    for k in range(1, 6):  # depth marks
        y = int(r0 + (r1 - r0) * k / 6)
        d.line([int(w * 0.93), y, int(w * 0.96), y], fill=(200, 200, 200))
    d.text((int(w * 0.02), int(h * 0.02)), f"{r.uniform(2, 12):.1f} MHz  {_text(r, 2)}", fill=(220, 220, 220), font=f)
    return im


def photo_scene(r, w, h):
    """A colour photograph of a room with no screen in it: walls and a
    floor in perspective, framed pictures, a window, a door, a shelf of
    books and clutter, then the camera's look (light falloff, colour
    cast, blur, noise). Its framed rectangles are what a screen finder
    can take for a monitor. Held out: never in training."""
    from scipy import ndimage
    arr = np.zeros((h, w, 3), np.float32)
    horizon = h * r.uniform(0.55, 0.8)
    wall, floor = r.uniform(90, 235, 3), r.uniform(40, 180, 3)
    yy = np.arange(h, dtype=np.float32)[:, None, None]
    arr[:] = np.where(yy < horizon, wall, floor)
    im = Image.fromarray(arr.astype(np.uint8))
    d = ImageDraw.Draw(im)
    tilt = r.uniform(-0.12, 0.12)  # perspective: far side shorter than near side

    def quad(x0, y0, qw, qh):
        k = tilt * qh
        return [(x0, y0 + k), (x0 + qw, y0 - k), (x0 + qw, y0 + qh + k), (x0, y0 + qh - k)]

    for _ in range(int(r.integers(1, 5))):  # framed pictures, a window, a door
        qw, qh = r.uniform(0.12, 0.45) * w, r.uniform(0.12, 0.45) * h
        x0, y0 = r.uniform(-0.05, 0.95) * w - qw / 2, r.uniform(0.05, 0.6) * horizon - qh / 3
        frame = tuple(int(c) for c in r.uniform(0, 255, 3))
        fw = max(2, int(min(qw, qh) * r.uniform(0.02, 0.1)))
        d.polygon(quad(x0, y0, qw, qh), fill=frame)
        inner = quad(x0 + fw, y0 + fw, qw - 2 * fw, qh - 2 * fw)
        what = r.random()
        if what < 0.3:  # a window: bright sky, maybe bars
            d.polygon(inner, fill=tuple(int(c) for c in r.uniform([150, 180, 200], [230, 240, 255])))
            if r.random() < 0.6:
                d.line([(x0 + qw / 2, y0), (x0 + qw / 2, y0 + qh)], fill=frame, width=fw)
        else:  # a painting or poster: colourful blobs and stripes
            d.polygon(inner, fill=tuple(int(c) for c in r.uniform(0, 255, 3)))
            for _ in range(int(r.integers(2, 12))):
                cx, cy = x0 + r.uniform(0.1, 0.9) * qw, y0 + r.uniform(0.1, 0.9) * qh
                s = r.uniform(0.05, 0.3) * min(qw, qh)
                d.ellipse([cx - s, cy - s, cx + s, cy + s * r.uniform(0.5, 1.5)], fill=tuple(int(c) for c in r.uniform(0, 255, 3)))
    if r.random() < 0.6:  # a shelf of books
        sx, sy = r.uniform(0, 0.6) * w, horizon * r.uniform(0.3, 0.8)
        sw = r.uniform(0.2, 0.4) * w
        d.rectangle([sx, sy, sx + sw, sy + h * 0.02], fill=tuple(int(c) for c in r.uniform(60, 160, 3)))
        x = sx
        while x < sx + sw:
            bw, bh = r.uniform(0.008, 0.03) * w, r.uniform(0.06, 0.14) * h
            d.rectangle([x, sy - bh, x + bw, sy], fill=tuple(int(c) for c in r.uniform(0, 255, 3)))
            x += bw + 1
    for _ in range(int(r.integers(3, 15))):  # furniture and clutter on the floor and walls
        x0, y0 = r.uniform(-0.1, 1) * w, r.uniform(0.3, 1) * h
        s = r.uniform(0.03, 0.3) * max(w, h)
        col = tuple(int(c) for c in r.uniform(0, 255, 3))
        if r.random() < 0.5:
            d.ellipse([x0, y0, x0 + s, y0 + s * r.uniform(0.4, 1.5)], fill=col)
        else:
            d.rectangle([x0, y0, x0 + s, y0 + s * r.uniform(0.3, 1.2)], fill=col)
    a = np.asarray(im).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    lx, ly = r.uniform(0, w), r.uniform(0, h * 0.5)
    light = 1 - r.uniform(0.1, 0.5) * np.hypot(xx - lx, yy - ly) / np.hypot(w, h)
    a *= light[..., None] * r.uniform(0.8, 1.2, 3)[None, None, :]
    a = ndimage.gaussian_filter(a, (r.uniform(0.3, 2.0), r.uniform(0.3, 2.0), 0))
    a += r.normal(0, r.uniform(1, 6), a.shape)
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


# Kinds never used to train the validity classifier: judged as held out.
HELDOUT_KINDS = {"spreadsheet": spreadsheet, "ultrasound": ultrasound, "photo": photo_scene}


def generate_heldout(seed, kind, w=None, h=None):
    """A held-out negative of the given kind (HELDOUT_KINDS)."""
    r = np.random.default_rng(seed)
    if w is None and kind == "photo":  # a camera's sizes, landscape or portrait
        w, h = [(1280, 960), (1600, 1200), (1920, 1080), (1280, 720)][int(r.integers(4))]
        if r.random() < 0.3:
            w, h = h, w
    elif w is None:
        w, h = int(r.integers(300, 1000)), int(r.integers(250, 800))
    return HELDOUT_KINDS[kind](r, w, h)


def generate(seed, w=None, h=None):
    r = np.random.default_rng(seed)
    if w is None:
        w, h = int(r.integers(200, 900)), int(r.integers(200, 900))
    kind = KINDS[int(r.integers(len(KINDS)))]
    im = kind(r, w, h)
    if r.random() < 0.3:
        im = im.convert("L").convert("RGB")
    return im
