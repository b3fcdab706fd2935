"""A third way of drawing a canine lateral thorax, for judging only.

SYNTHETIC. Nothing here comes from a real patient, and no model trains on
it: it judges whether what was learned on the simulator (sim/xraysim.py)
and sim/phantom.py carries over to hearts drawn another way
(experiments/2026-11-29-third-generator.md). Built from an anatomical
description, not from either generator's code: the column is a curved chain of vertebrae of varying
length, the heart an outline whose half-widths are drawn as smooth random
profiles along its long axis, and the carina a random depth inside the
heart base. Landmarks follow the spec's convention computed from the
drawn shapes: heart_top the carina (the trachea's end), heart_bottom the
outline point farthest from it, heart_right/heart_left the widest chord
perpendicular to that axis, Vertebra A/B T4's cranial and T9's caudal
endplate midpoints on the bodies' centre line.
"""
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy import ndimage

from sim.phantom import measure

# Held-out seeds (sim/heldout.py --generator family3): the development
# and trial seeds of experiments/2026-11-29-third-generator.md lie below.
HELDOUT_SEED_BASE = 60_000_000
SS = 2  # supersampling of the drawn masks


def _poly_mask(size, polys, width=0, lines=False):
    W, H = size
    im = Image.new("L", (W * SS, H * SS), 0)
    d = ImageDraw.Draw(im)
    for p in polys:
        q = [(float(x) * SS, float(y) * SS) for x, y in p]
        if lines:
            d.line(q, fill=255, width=max(1, int(round(width * SS))), joint="curve")
        else:
            d.polygon(q, fill=255)
    return np.asarray(im.resize((W, H), Image.BOX), np.float32) / 255.0


def generate(seed, long_side=None):
    """(PIL L image, truth {name: (x, y)}, meta) of one thorax: the first
    draw from seed whose landmarks all lie inside the frame. meta holds
    the truth's "vhs" and "vlas" (phantom.measure), the VHS the heart was
    drawn for ("vhs_drawn") and the true vertebral unit "v" in pixels."""
    for k in range(20):
        out = _draw(np.random.default_rng([seed, k]), long_side)
        if out is not None:
            return out
    raise RuntimeError(f"seed {seed}: no thorax fits its frame")


def _draw(r, long_side):
    u = lambda a, b: float(r.uniform(a, b))
    if long_side is None:
        long_side = int(r.integers(300, 480))
    asp = u(1.0, 1.55)
    W, H = long_side, int(long_side / asp)
    # --- the frame: x cranial->caudal, y dorsal->ventral (before the flip) ---
    v = H / u(10.5, 13.0)  # one thoracic vertebra, pixels: the thorax fits the frame
    spine_y0 = u(0.08, 0.2) * H
    slope = math.tan(math.radians(u(-9, 9)))
    bend = u(-1.0, 1.5) * 0.002  # a gentle curve: about 0.5 v off the chord over 15 v
    x_t1 = u(0.02, 0.2) * W
    def spine(x):  # y of the bodies' centre line at x
        return spine_y0 + slope * (x - x_t1) + bend * (x - x_t1) ** 2 / v
    # vertebrae C5..L3 as lengths in v (cervical and lumbar longer)
    names = [f"C{i}" for i in range(5, 8)] + [f"T{i}" for i in range(1, 14)] + [f"L{i}" for i in range(1, 4)]
    lens = []
    for n in names:
        base = 1.25 if n[0] == "C" else (1.2 if n[0] == "L" else 1.0)
        if n[0] == "T":
            i = int(n[1:])
            base *= 1.0 + 0.015 * (i - 6) * u(-1, 1)  # gentle gradient along the thorax
        lens.append(base * u(0.96, 1.04))
    # start of T1 at x_t1; cervical before it
    starts = {}
    x = x_t1 - sum(lens[:3]) * v
    ends = {}
    for n, L in zip(names, lens):
        starts[n] = x
        x += L * v
        ends[n] = x
    # arc-length-ish: place along x (the curve is gentle); a vertebra's
    # cranial endplate midpoint at (x, spine(x))
    A = np.array([starts["T4"], spine(starts["T4"])])
    B = np.array([ends["T9"], spine(ends["T9"])])
    v_true = np.linalg.norm(A - B) / 6
    body_h = u(0.55, 0.75) * v
    disc = u(0.12, 0.2)
    # --- the heart (the sternum is placed below it) ---------------------------
    carina = np.array([starts["T5"] + u(0.0, 1.3) * v, 0.0])
    carina[1] = spine(carina[0]) + body_h / 2 + u(1.3, 2.3) * v
    vhs = u(8.2, 12.8)
    Lax = vhs * v_true * u(0.52, 0.6)  # long axis, px
    ang = math.radians(u(55, 82))  # from the caudal direction, turning ventrally
    d = np.array([math.cos(ang), math.sin(ang)])
    d_spine = np.array([1.0, slope]) / math.hypot(1, slope)
    c, s = d_spine
    d = np.array([c * d[0] - s * d[1], s * d[0] + c * d[1]])
    nrm = np.array([-d[1], d[0]])
    if nrm[0] > 0:
        nrm = -nrm  # the heart's normal points cranially
    base_depth = u(-0.04, 0.14) * Lax  # how far the outline reaches dorsal of the carina
    wmax = (vhs * v_true - Lax) / 2 * u(0.97, 1.03)
    kc = u(0.85, 1.15)  # cranial share of the width
    peak = u(0.38, 0.58)
    def prof(tt, pk, sh):
        # a half-width profile 0 at both ends, rounder at the base
        z = np.clip(tt, 0, 1)
        f = np.where(z < pk, np.clip(1 - (1 - np.minimum(z / pk, 1)) ** 2, 0, 1) ** (0.5 * sh),
                     np.clip(np.cos(0.5 * math.pi * np.clip((z - pk) / (1 - pk), 0, 1)), 0, 1) ** 0.7)
        return f
    ts = np.linspace(0, 1, 90)
    ax_len = Lax + base_depth
    wc = wmax * kc * prof(ts, peak + u(-0.06, 0.06), u(0.7, 1.3)) * (1 + 0.05 * np.sin(ts * u(4, 9) + u(0, 6)))
    wk = wmax * (2 - kc) * prof(ts, peak + u(-0.06, 0.06), u(0.7, 1.3)) * (1 + 0.05 * np.sin(ts * u(4, 9) + u(0, 6)))
    start = carina - d * base_depth
    cran = [start + d * t * ax_len + nrm * w for t, w in zip(ts, wc)]
    caud = [start + d * t * ax_len - nrm * w for t, w in zip(ts, wk)]
    outline = np.array(cran + caud[::-1])
    apex_y = max(p[1] for p in outline)
    ventral_y = apex_y + u(0.3, 1.3) * v  # the sternum's level at the carina, below the apex
    ster_slope = math.tan(math.radians(u(-8, 14)))
    def sternum(xx):
        return ventral_y + ster_slope * (xx - carina[0])
    # thorax cavity: from T1 to the diaphragm
    x_cr = starts["T1"] - u(0.0, 0.8) * v
    dia_x_dorsal = ends["T11"] + u(-0.5, 1.5) * v
    dia_x_ventral = starts["T8"] + u(-0.3, 1.5) * v
    cav = []
    for t in np.linspace(0, 1, 24):
        xx = x_cr + t * (dia_x_dorsal - x_cr)
        cav.append((xx, spine(xx) + body_h * 0.6))
    for t in np.linspace(0, 1, 16):  # diaphragm, a dome bulging cranially
        xx = dia_x_dorsal + t * (dia_x_ventral - dia_x_dorsal)
        yy = spine(dia_x_dorsal) + body_h + t * (sternum(dia_x_ventral) - spine(dia_x_dorsal) - body_h)
        xx -= math.sin(math.pi * t) * u(0.9, 1.1) * 1.2 * v
        cav.append((xx, yy))
    for t in np.linspace(1, 0, 16):
        xx = x_cr + 0.5 * v + t * (dia_x_ventral - x_cr - 0.5 * v)
        cav.append((xx, sternum(xx) - 0.3 * v))
    cavity = _poly_mask((W, H), [cav])
    # body: soft tissue thickness, the thorax's outline widened
    body_poly = []
    for t in np.linspace(0, 1, 30):
        xx = -0.1 * W + t * 1.2 * W
        body_poly.append((xx, spine(min(max(xx, 0), W)) - u(1.6, 1.7) * v))
    for t in np.linspace(1, 0, 30):
        xx = -0.1 * W + t * 1.2 * W
        body_poly.append((xx, sternum(min(max(xx, 0), W)) + u(0.8, 1.0) * v))
    body = ndimage.gaussian_filter(_poly_mask((W, H), [body_poly]), v * 0.6)
    heart = _poly_mask((W, H), [outline])
    # truth from the drawn outline (dense)
    dense = np.concatenate([np.linspace(outline[i], outline[(i + 1) % len(outline)], 6, endpoint=False)
                            for i in range(len(outline))])
    apex = dense[np.argmax(np.linalg.norm(dense - carina, axis=1))]
    la = (apex - carina) / np.linalg.norm(apex - carina)
    ln = np.array([-la[1], la[0]])
    best = (0, None, None)
    proj = (dense - carina) @ la
    side = (dense - carina) @ ln
    for tt in np.linspace(proj.min(), proj.max(), 200):
        sel = np.abs(proj - tt) < 0.6
        if sel.sum() < 2:
            continue
        lo, hi = side[sel].min(), side[sel].max()
        if hi - lo > best[0]:
            best = (hi - lo, carina + la * tt + ln * lo, carina + la * tt + ln * hi)
    p1, p2 = best[1], best[2]
    right, left = (p1, p2) if p1[0] < p2[0] else (p2, p1)  # right = cranial end
    vl = carina + la * 0.38 * np.linalg.norm(apex - carina) - nrm * (wk[int(0.38 * 89)])
    # --- trachea: air tube from the neck to the carina ---------------------------
    t_in = np.array([-0.05 * W, spine(0) + body_h / 2 + u(0.9, 1.6) * v])
    mid = (t_in + carina) / 2 + np.array([0, u(-0.2, 0.3) * v])
    tw = u(0.45, 0.7) * v
    trachea = _poly_mask((W, H), [[tuple(t_in), tuple(mid), tuple(carina)]], width=tw, lines=True)
    bron = _poly_mask((W, H), [[tuple(carina), tuple(carina + np.array([0.9, 0.6]) * v)],
                               [tuple(carina), tuple(carina + np.array([0.4, 0.9]) * v)]], width=tw * 0.6, lines=True)
    # --- bones ----------------------------------------------------------------
    bodies, plates, spin, ribs = [], [], [], []
    for n in names:
        x0, x1 = starts[n] + disc * v / 2, ends[n] - disc * v / 2
        y0, y1 = spine(x0), spine(x1)
        hh = body_h / 2 * (1.1 if n[0] != "T" else 1.0)
        bodies.append([(x0, y0 - hh), (x1, y1 - hh), (x1, y1 + hh), (x0, y0 + hh)])
        plates.append([(x0, y0 - hh), (x0, y0 + hh)])
        plates.append([(x1, y1 - hh), (x1, y1 + hh)])
        xm = (x0 + x1) / 2
        if n[0] == "T":
            i = int(n[1:])
            sl = (2.2 - 0.09 * i) * v * u(0.85, 1.1)
            lean = math.radians(25 + 3 * i) if i < 11 else math.radians(5)
            spin.append([(xm, spine(xm) - hh), (xm + math.sin(lean) * sl, spine(xm) - hh - math.cos(lean) * sl)])
            # a rib from the junction caudal of the body, curving to the sternum
            xs = ends[n]
            rx = [xs, xs + u(0.5, 1.0) * v * (1 + i / 10), xs + (0.6 + 0.25 * i) * v]
            ry = [spine(xs), spine(xs) + 0.45 * (sternum(xs) - spine(xs)), sternum(xs) - 0.2 * v]
            ribs.append(list(zip(rx, ry)))
    bone = 0.9 * _poly_mask((W, H), bodies)
    bone += 0.6 * _poly_mask((W, H), plates, width=0.12 * v, lines=True)
    bone += 0.5 * _poly_mask((W, H), spin, width=0.22 * v, lines=True)
    rib_w = u(0.18, 0.3) * v
    ribm = _poly_mask((W, H), ribs, width=rib_w, lines=True)
    ribc = ribm - ndimage.grey_erosion(ribm, size=(3, 3))
    bone += 0.35 * ribm + 0.3 * ribc
    sts = []
    x = starts["T1"] + 0.5 * v
    while x < dia_x_ventral + v:
        L = u(0.8, 1.1) * v
        sts.append([(x, sternum(x)), (x + L, sternum(x + L)), (x + L, sternum(x + L) + 0.5 * v), (x, sternum(x) + 0.5 * v)])
        x += L + 0.2 * v
    bone += 0.7 * _poly_mask((W, H), sts)
    # --- attenuation and imaging --------------------------------------------------
    lung = np.clip(cavity - heart, 0, 1)
    vessels = ndimage.gaussian_filter(r.normal(0, 1, (H, W)).astype(np.float32), v * 0.35)
    vessels = np.clip(vessels / (vessels.std() + 1e-6), 0, None) * 0.06
    mu = (u(0.8, 1.1) * body
          - u(0.45, 0.6) * lung * (1 - vessels)
          + u(0.25, 0.4) * heart * cavity
          - u(0.25, 0.4) * np.clip(trachea + bron - heart * 0.3, 0, 1) * body
          + u(0.6, 0.9) * bone * body)
    mu += u(0.5, 0.8) * np.clip(body - cavity - 0.2, 0, 1) * (np.arange(W)[None, :] > dia_x_ventral)  # abdomen
    mu = ndimage.gaussian_filter(mu, u(0.5, 1.2))
    k = u(0.6, 0.9)
    img = 1 - np.exp(-k * np.clip(mu, 0, None))
    img = img + u(0.05, 0.2) * ndimage.gaussian_filter(img, W / 12)  # scatter
    img = img / max(np.percentile(img, 99.5), 1e-6)
    img = img ** u(0.7, 1.4)
    img += r.normal(0, u(0.01, 0.04), img.shape)
    img = np.clip((img - u(0.0, 0.08)) / u(0.85, 1.0), 0, 1)
    out = Image.fromarray((img * 255).astype(np.uint8), "L")
    truth = {"heart_top": carina, "heart_bottom": apex, "heart_right": right, "heart_left": left,
             "VLAS": vl, "Vertebra A": A, "Vertebra B": B}
    if any(not (0.03 * W < p[0] < 0.97 * W and 0.03 * H < p[1] < 0.97 * H) for p in truth.values()):
        return None
    # flips and rotation
    rot = u(-10, 10)
    if r.random() < 0.5:
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
        truth = {kk: np.array([W - 1 - p[0], p[1]]) for kk, p in truth.items()}
    out = out.rotate(rot, resample=Image.BILINEAR, center=(W / 2, H / 2))
    a = math.radians(-rot)
    R = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    ctr = np.array([W / 2, H / 2])
    truth = {kk: (R @ (np.asarray(p) - ctr) + ctr).tolist() for kk, p in truth.items()}
    if r.random() < 0.5:
        out = out.filter(ImageFilter.UnsharpMask(radius=u(1, 4), percent=int(u(40, 150))))
    vhs_t, vlas_t = measure(truth)
    return out, truth, {"vhs": vhs_t, "vlas": vlas_t, "vhs_drawn": vhs, "v": v_true}
