"""Procedural canine lateral thoracic radiograph phantoms with exact landmarks.

SYNTHETIC DATA. Nothing here comes from a real patient. The phantom is built
anatomy first, in vertebral units (v = 1 = one thoracic vertebra with its
disc), then imaged: attenuation -> exposure -> scatter -> blur -> noise ->
collimation, markers and burned-in text.

Anatomical frame (head left before any flip): x runs cranial -> caudal, y runs
dorsal -> ventral, origin at the cranial endplate of T1 on the spine's ventral
body line. Landmark truth (see DEVELOPERS.md):
  heart_top    carina, the long axis start
  heart_bottom cardiac apex
  heart_right  cranial end of the short axis (widest, perpendicular to long axis)
  heart_left   caudal end of the short axis
  VLAS         caudal border of the left atrium where it meets the caudal vena cava
  Vertebra A   midpoint of T4's cranial endplate
  Vertebra B   midpoint of T9's caudal endplate
VHS = (|top-bottom| + |right-left|) / v and VLAS = |top-VLAS| / v with
v = |A-B| / 6, computed from the truth points after every transform.
"""
import math
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from scipy import ndimage

LANDMARKS = ["heart_top", "heart_bottom", "heart_right", "heart_left", "VLAS", "Vertebra A", "Vertebra B"]

# Parameter ranges. TRAIN is what the models see; HELDOUT is wider and is
# only ever drawn with seeds >= HELDOUT_SEED_BASE.
TRAIN = dict(vhs=(8.0, 13.5), vlas=(1.3, 3.6), rot=12.0, fill=(0.62, 1.0), aspect=(0.7, 1.6),
             axis_ratio=(1.05, 1.4), tilt=(12.0, 42.0), depth=(6.2, 9.4))
HELDOUT = dict(vhs=(7.6, 14.0), vlas=(1.1, 3.9), rot=16.0, fill=(0.55, 1.05), aspect=(0.6, 1.8),
               axis_ratio=(1.0, 1.45), tilt=(8.0, 46.0), depth=(5.8, 9.8))
HELDOUT_SEED_BASE = 10_000_000

FONT_DIR = "/usr/share/fonts/truetype/dejavu"


def load_font(size):
    """The DejaVu font at size px (PIL's default when DejaVu is missing):
    the one font loader of the phantom, negative and simulator text."""
    for name in ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf"):
        p = os.path.join(FONT_DIR, name)
        if os.path.exists(p):
            return ImageFont.truetype(p, max(6, int(size)))
    return ImageFont.load_default()




def _u(rng, lo_hi):
    return float(rng.uniform(lo_hi[0], lo_hi[1]))


class Anatomy:
    """Geometry of one dog in vertebral units (head left, unflipped)."""

    def __init__(self, rng, ranges):
        r = rng
        self.vlen = np.array([1.0 + r.normal(0, 0.025) for _ in range(13)])  # T1..T13 lengths
        self.body_h = _u(r, (0.62, 0.8))                   # vertebral body height
        self.curve = _u(r, (-0.04, 0.03))                  # spine curvature (per v^2)
        self.cran_drop = _u(r, (0.15, 0.45))               # T1-T3 slope ventrally toward the neck
        self.depth = _u(r, ranges["depth"])                # spine to sternum at T6
        # Vertebral column: cumulative endplates along x.
        xs = np.concatenate([[0.0], np.cumsum(self.vlen)])
        self.endplate_x = xs                               # 14 endplates: T1 cranial .. T13 caudal
        # Heart.
        target_vhs = _u(r, ranges["vhs"])
        ratio = _u(r, ranges["axis_ratio"])
        self.L = target_vhs * ratio / (1 + ratio)
        self.S = target_vhs / (1 + ratio)
        self.tilt = math.radians(_u(r, ranges["tilt"]))
        self.target_vlas = _u(r, ranges["vlas"])
        self.cran_share = _u(r, (0.5, 0.62))               # share of the short axis cranial of the long axis
        self.u_peak = _u(r, (0.42, 0.56))                  # where along the long axis the heart is widest
        self.apex_round = _u(r, (0.45, 0.75))
        self.base_blunt = _u(r, (0.45, 0.7))
        self.lung_dark = _u(r, (0.55, 0.85))
        self.fat = _u(r, (0.6, 1.6))                        # soft tissue thickness factor
        self.n_vessels = int(r.integers(10, 26))

    def spine_y(self, x):
        """Ventral body line of the spine at x (y grows ventrally)."""
        x = np.asarray(x, dtype=float)
        y = self.curve * (x - 6.5) ** 2 - self.curve * 6.5 ** 2
        y = y + self.cran_drop * np.clip(3.0 - x, 0, None) ** 1.3 / 3.0 ** 0.3
        return y

    def endplate_mid(self, i):
        """Midpoint of endplate i (0 = T1 cranial, 3 = T4 cranial, 9 = T9 caudal)."""
        x = self.endplate_x[i]
        return np.array([x, self.spine_y(x) - self.body_h / 2])


def _heart_profile(a, u):
    """Half-width factor 0..1 along the long axis (u in 0..1), peak at a.u_peak."""
    u = np.clip(u, 0, 1)
    p = a.u_peak
    # u^m (1-u)^n with its maximum at p, normalised to 1 there.
    n = 0.5 * a.apex_round + 0.2
    m = n * p / (1 - p)
    m = max(m, 0.15) * (a.base_blunt / 0.55)
    n = m * (1 - p) / p
    f = (u ** m) * ((1 - u) ** n)
    return f / ((p ** m) * ((1 - p) ** n))


def build(rng, ranges):
    """Return (anatomy, shapes, truth) in vertebral units."""
    for _ in range(50):
        a = Anatomy(rng, ranges)
        ok, shapes, truth = _build_once(rng, a)
        if ok:
            return a, shapes, truth
    raise RuntimeError("phantom: could not place a heart")


def _build_once(rng, a):
    r = rng
    A = a.endplate_mid(3)
    B = a.endplate_mid(9)
    v = np.linalg.norm(B - A) / 6.0
    # Scale heart axes so truth VHS is the sampled one in this dog's v.
    L, S = a.L * v, a.S * v
    sternum_y = a.depth
    # Carina: caudal to T4, ventral to the spine; the apex points ventro-caudally.
    apex_gap = _u(r, (0.2, 0.9))
    ca = math.cos(a.tilt)
    top_y = sternum_y - apex_gap - L * ca
    spine_at = float(a.spine_y(a.endplate_x[4] + 0.7))
    if top_y - spine_at < 1.0 or top_y - spine_at > 3.6:
        return False, None, None
    top = np.array([a.endplate_x[4] + _u(r, (0.0, 1.4)), top_y])
    axis = np.array([math.sin(a.tilt), ca])                 # top -> apex
    perp = np.array([-axis[1], axis[0]])                    # points cranially (x decreasing) when tilt small
    if perp[0] > 0:
        perp = -perp
    bottom = top + L * axis
    # Outline: cranial side +perp, caudal side -perp.
    us = np.linspace(0, 1, 120)
    f = _heart_profile(a, us)
    wr = a.cran_share * S * f
    wl = (1 - a.cran_share) * S * f
    # Left atrium: a bump on the caudal border passing through the VLAS point.
    vl = a.target_vlas * v
    placed = False
    for th in np.linspace(math.radians(62), math.radians(28), 18):
        up = vl * math.cos(th) / L
        if up <= 0.08 or up >= 0.45:
            continue
        need = vl * math.sin(th)
        base = (1 - a.cran_share) * S * float(_heart_profile(a, np.array([up]))[0])
        amp = need - base
        if -0.25 * base <= amp <= 0.6 * (1 - a.cran_share) * S:
            placed = True
            break
    if not placed:
        return False, None, None
    sig = _u(r, (0.09, 0.16))
    bump = amp * np.exp(-0.5 * ((us - up) / sig) ** 2)
    bump *= np.clip(us / max(up, 1e-3), 0, 1) ** 0.5  # keep the bump off the carina
    wl = wl + bump
    # Exact VLAS point: on the caudal border at u = up.
    wl_up = float(np.interp(up, us, wl))
    vlas_pt = top + up * L * axis - wl_up * perp
    # Short axis: widest chord perpendicular to the long axis, central region.
    width = wr + wl
    central = (us > 0.3) & (us < 0.75)
    k = int(np.argmax(np.where(central, width, -1)))
    uk = us[k]
    right = top + uk * L * axis + wr[k] * perp
    left = top + uk * L * axis - wl[k] * perp
    # Silhouette polygon: the base extends a little dorsal to the carina.
    ext = np.linspace(-0.12, 0, 8)
    cran = [top + u * L * axis + w * perp for u, w in zip(us, wr)]
    caud = [top + u * L * axis - w * perp for u, w in zip(us, wl)]
    base_arc = [top + e * L * axis for e in ext]
    outline = np.array(cran + caud[::-1] + base_arc)
    truth = {"heart_top": top, "heart_bottom": bottom, "heart_right": right, "heart_left": left,
             "VLAS": vlas_pt, "Vertebra A": A, "Vertebra B": B}
    shapes = {"heart": outline, "axis": axis, "perp": perp, "L": L, "S": S, "vlas_u": up,
              "sternum_y": sternum_y, "wl_up": wl_up}
    return True, shapes, truth


def measure(truth):
    """VHS and VLAS from landmark coordinates (pixels or any unit)."""
    p = {k: np.asarray(truth[k], dtype=float) for k in LANDMARKS}
    v = np.linalg.norm(p["Vertebra A"] - p["Vertebra B"]) / 6.0
    vhs = (np.linalg.norm(p["heart_top"] - p["heart_bottom"]) + np.linalg.norm(p["heart_right"] - p["heart_left"])) / v
    vlas = np.linalg.norm(p["heart_top"] - p["VLAS"]) / v
    return float(vhs), float(vlas)


class Canvas:
    """Float attenuation canvas with an anatomy->pixel similarity transform."""

    def __init__(self, w, h, M):
        self.w, self.h, self.M = w, h, M
        self.scale = math.sqrt(abs(np.linalg.det(M[:, :2])))

    def tx(self, pts):
        pts = np.atleast_2d(np.asarray(pts, dtype=float))
        return pts @ self.M[:, :2].T + self.M[:, 2]

    def layer(self):
        return Image.new("F", (self.w, self.h), 0.0)

    def poly(self, img, pts, val):
        ImageDraw.Draw(img).polygon([tuple(p) for p in self.tx(pts)], fill=float(val))

    def line(self, img, pts, val, width_v):
        wpx = max(1, int(round(width_v * self.scale)))
        ImageDraw.Draw(img).line([tuple(p) for p in self.tx(pts)], fill=float(val), width=wpx, joint="curve")

    def ellipse(self, img, c, rx, ry, ang, val, n=28):
        t = np.linspace(0, 2 * math.pi, n, endpoint=False)
        ca, sa = math.cos(ang), math.sin(ang)
        pts = np.stack([c[0] + rx * np.cos(t) * ca - ry * np.sin(t) * sa,
                        c[1] + rx * np.cos(t) * sa + ry * np.sin(t) * ca], 1)
        self.poly(img, pts, val)


def _blur(img, px):
    """Gaussian blur of a PIL F image or an array, as a float32 array."""
    a = np.asarray(img, dtype=np.float32)
    if px <= 0.3:
        return a
    if px <= 4:
        return ndimage.gaussian_filter(a, px, truncate=3.0)
    # Wide blurs: blur a downsampled copy and upsample; same result, far cheaper.
    f = int(px // 2)
    h, w = a.shape
    small = Image.fromarray(a).resize((max(1, w // f), max(1, h // f)), Image.BOX)
    small = ndimage.gaussian_filter(np.asarray(small, dtype=np.float32), px / f, truncate=3.0)
    return np.asarray(Image.fromarray(small).resize((w, h), Image.BILINEAR), dtype=np.float32)


def _arr(a):
    return a


def render(rng, a, shapes, truth, w, h, ranges, flip=None):
    """Image the anatomy at w x h pixels. Returns (uint8 image, truth in pixels)."""
    r = rng
    # Field of view: the region from the neck (-3) to the cranial abdomen (~16).
    x0, x1 = -_u(r, (1.5, 4.0)), 13.5 + _u(r, (1.0, 4.0))
    y0, y1 = -_u(r, (3.0, 4.2)), a.depth + _u(r, (1.0, 2.5))
    fill = _u(r, ranges["fill"])
    s = fill * min(w / (x1 - x0), h / (y1 - y0))
    rot = math.radians(r.uniform(-ranges["rot"], ranges["rot"]))
    if flip is None:
        flip = bool(r.random() < 0.5)
    sx = -s if flip else s
    R = np.array([[sx * math.cos(rot), -s * math.sin(rot)], [sx * math.sin(rot), s * math.cos(rot)]])
    c_anat = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    c_img = np.array([w / 2 + r.uniform(-0.08, 0.08) * w, h / 2 + r.uniform(-0.08, 0.08) * h])
    M = np.zeros((2, 3))
    M[:, :2] = R
    M[:, 2] = c_img - R @ c_anat
    cv = Canvas(w, h, M)
    truth_px = {k: cv.tx(p)[0] for k, p in truth.items()}
    margin = 0.02
    for p in truth_px.values():
        if not (margin * w < p[0] < (1 - margin) * w and margin * h < p[1] < (1 - margin) * h):
            return None, None
    px_per_v = cv.scale

    att = np.zeros((h, w), np.float32)
    spine = lambda x: a.spine_y(x)

    # --- soft tissue envelope ------------------------------------------------
    body = cv.layer()
    xs = np.linspace(-6, 22, 60)
    dorsal = spine(np.clip(xs, -2, 16)) - 2.6 - 0.6 * a.fat - 0.3 * np.cos(xs / 5)
    ster = a.depth + 0.5 + 0.35 * a.fat
    ventral = np.where(xs < 1, ster - 1.2 + 0.25 * (xs - 1), ster + 0.12 * np.clip(xs - 9, 0, None))
    cv.poly(body, np.concatenate([np.stack([xs, dorsal], 1), np.stack([xs[::-1], ventral[::-1]], 1)]), 1.0)
    tissue = 0.55 * (1.0 + 0.15 * a.fat)
    att += _arr(_blur(body, 0.9 * px_per_v)) * tissue

    # --- forelimbs (scapula, humerus, muscle), cranioventral ---------------
    limb = cv.layer()
    lx = r.uniform(-1.5, 1.0)
    cv.ellipse(limb, (lx + 0.5, a.depth * 0.55), 2.3, a.depth * 0.55, math.radians(r.uniform(-25, 5)), 0.35)
    att += _arr(_blur(limb, 0.6 * px_per_v))
    bone = cv.layer()
    hum_top = np.array([lx + 1.0, a.depth * 0.45])
    hum_bot = hum_top + np.array([r.uniform(-2.5, -1.0), a.depth * 0.6])
    cv.line(bone, [hum_top, hum_bot], 0.7, 0.55)
    scap = [np.array([lx + 2.2, 0.3]), np.array([lx + 1.2, a.depth * 0.42])]
    cv.line(bone, scap, 0.45, 0.9)
    att += _arr(_blur(bone, 0.08 * px_per_v))

    # --- lungs ----------------------------------------------------------------
    lung = cv.layer()
    dome_top = r.uniform(9.0, 10.5)  # cranial-most point of the diaphragm at mid depth
    ys = np.linspace(0, 1, 30)
    dia_x = dome_top + 2.7 * (ys - 0.45) ** 2 * 4 * np.where(ys < 0.45, 0.55, 1.0) * 0.45 + 1.2 * (1 - ys)
    dia_y = spine(dia_x) + 0.55 + ys * (a.depth - 0.6)
    cran_x = 0.8 + 0.6 * np.sin(ys * math.pi) * -1 + 0.4
    cran_y = spine(cran_x) + 0.55 + ys * (a.depth - 1.3)
    lung_pts = np.concatenate([np.stack([cran_x, cran_y], 1), np.stack([dia_x[::-1], dia_y[::-1]], 1)])
    cv.poly(lung, lung_pts, 1.0)
    lung_a = _arr(_blur(lung, 0.35 * px_per_v))
    att -= lung_a * a.lung_dark * tissue

    # --- heart, great vessels, caudal vena cava --------------------------------
    heart = cv.layer()
    cv.poly(heart, shapes["heart"], 1.0)
    top = truth["heart_top"]
    # aorta: from the base arching dorsally and caudally along the spine
    arch = [top + np.array([-0.3, 0.3]), top + np.array([0.2, -0.9]), np.array([top[0] + 1.2, spine(top[0] + 1.2) + 0.5]),
            np.array([dome_top + 1.5, spine(dome_top + 1.5) + 0.55])]
    cv.line(heart, arch, 0.75, r.uniform(0.55, 0.8))
    # cranial vena cava / mediastinum toward the thoracic inlet
    cv.line(heart, [top + np.array([-0.5, 0.8]), np.array([0.8, a.depth * 0.45])], 0.55, r.uniform(0.8, 1.4))
    # caudal vena cava: dorsal border meets the left atrium at the VLAS point
    vp = truth["VLAS"]
    cvc_w = r.uniform(0.45, 0.7)
    cvc_dir = np.array([1.0, r.uniform(0.05, 0.25)])
    cvc_dir /= np.linalg.norm(cvc_dir)
    nrm = np.array([-cvc_dir[1], cvc_dir[0]])
    c0 = vp + nrm * cvc_w / 2 - cvc_dir * 0.3
    cv.line(heart, [c0, c0 + cvc_dir * 4.5], 0.75, cvc_w)
    heart_a = _arr(_blur(heart, r.uniform(0.03, 0.1) * px_per_v))
    att += np.minimum(heart_a, 1.0) * (lung_a * a.lung_dark + r.uniform(0.05, 0.15)) * tissue

    # --- pulmonary vessels: branching lines from the hilum -----------------------
    ves = cv.layer()
    hilum = top + shapes["axis"] * shapes["L"] * 0.25
    for _ in range(a.n_vessels):
        ang = r.uniform(-math.pi, math.pi)
        p = hilum.copy()
        wv = r.uniform(0.12, 0.3)
        for _seg in range(4):
            ang += r.normal(0, 0.3)
            q = p + r.uniform(0.8, 2.0) * np.array([math.cos(ang), math.sin(ang)])
            cv.line(ves, [p, q], 0.22, wv)
            p, wv = q, wv * 0.7
    att += _arr(_blur(ves, 0.06 * px_per_v)) * lung_a * tissue

    # --- trachea to the carina, main bronchi ------------------------------------
    tr = cv.layer()
    inlet = np.array([x0 - 0.5, spine(x0 - 0.5) + r.uniform(1.2, 2.2)])
    mid = (inlet + top) / 2 + np.array([0, r.uniform(-0.3, 0.2)])
    carina_in = top - np.array([0.0, 0.15])
    cv.line(tr, [inlet, mid, carina_in], 1.0, r.uniform(0.6, 0.85))
    bro = carina_in + np.array([0.9, 0.5])
    cv.line(tr, [carina_in, bro], 0.8, 0.35)
    cv.line(tr, [carina_in, carina_in + np.array([0.6, 0.8])], 0.8, 0.3)
    att -= _arr(_blur(tr, 0.06 * px_per_v)) * tissue * r.uniform(0.35, 0.55)

    # --- ribs and costal cartilages -------------------------------------------------
    ribs = cv.layer()
    for i in range(13):
        for side in (0, 1):
            xr = a.endplate_x[i] + 0.5 + side * r.uniform(0.15, 0.45)
            yr = spine(xr) - a.body_h * 0.6
            reach = a.depth * (0.97 if i < 8 else 0.97 - 0.07 * (i - 7))
            caud = 0.9 + 0.12 * i                  # how far caudally the rib bows
            pts = []
            for t in np.linspace(0, 1, 16):
                x = xr + caud * math.sin(math.pi * t * 0.85) * 1.6 - (0.9 if i < 9 else 0.0) * t ** 2
                pts.append((x + side * 0.1, yr + reach * t + 0.15 * side))
            wid = 0.17 + 0.03 * (i < 9)
            cv.line(ribs, pts[:12], 0.2 + 0.06 * side, wid)
            cv.line(ribs, pts[11:], 0.08, wid * 0.8)   # costal cartilage
    att += _arr(_blur(ribs, 0.05 * px_per_v)) * r.uniform(0.7, 1.1)

    # --- sternebrae --------------------------------------------------------------------
    st = cv.layer()
    sx0 = r.uniform(0.0, 1.0)
    for i in range(8):
        cx = sx0 + i * 1.35
        cy = a.depth + 0.15 - 0.6 * max(0, 2 - i) * 0.5
        cv.ellipse(st, (cx, cy), 0.5, 0.22, 0.05, 0.8)
    att += _arr(_blur(st, 0.06 * px_per_v))

    # --- vertebral column (C7..L2), spinous processes, endplates and discs ---------
    vert = cv.layer()
    edges = np.concatenate([[-1.0], a.endplate_x, a.endplate_x[-1] + np.array([1.05, 2.1])])
    for i in range(len(edges) - 1):
        xa, xb = edges[i] + 0.06, edges[i + 1] - 0.06
        ya, yb = spine(xa), spine(xb)
        bh = a.body_h
        pinch = 0.06
        body_pts = [(xa, ya - bh), ((xa + xb) / 2, (ya + yb) / 2 - bh + pinch), (xb, yb - bh), (xb, yb),
                    ((xa + xb) / 2, (ya + yb) / 2 - pinch), (xa, ya)]
        cv.poly(vert, body_pts, 0.32)
        cv.line(vert, [(xa, ya - bh), (xa, ya)], 0.4, 0.09)   # endplates
        cv.line(vert, [(xb, yb - bh), (xb, yb)], 0.4, 0.09)
        cv.line(vert, [(xa, ya), ((xa + xb) / 2, (ya + yb) / 2 - pinch), (xb, yb)], 0.25, 0.07)  # ventral cortex
        cv.line(vert, [(xa, ya - bh), ((xa + xb) / 2, (ya + yb) / 2 - bh + pinch), (xb, yb - bh)], 0.2, 0.07)
        # arch and spinous process
        ti = i - 1  # thoracic index (0 = T1)
        sp_len = 2.6 - 0.12 * ti if 0 <= ti < 10 else 1.2
        sp_len *= r.uniform(0.85, 1.1)
        base = np.array([(xa + xb) / 2, (ya + yb) / 2 - bh - 0.45])
        lean = 0.45 if ti < 10 else -0.2
        cv.line(vert, [(xa + 0.15, ya - bh - 0.2), (xb - 0.15, yb - bh - 0.2)], 0.22, 0.3)
        cv.line(vert, [base, base + np.array([lean * sp_len * 0.5, -sp_len])], 0.3, 0.2)
    att += _arr(_blur(vert, 0.05 * px_per_v))

    # --- abdomen: liver and a gastric gas bubble --------------------------------------
    if r.random() < 0.6:
        gas = cv.layer()
        gx = dome_top + r.uniform(2.0, 4.0)
        cv.ellipse(gas, (gx, spine(gx) + r.uniform(1.5, 3.5)), r.uniform(0.6, 1.6), r.uniform(0.5, 1.2), r.uniform(0, 3), 1.0)
        att -= _arr(_blur(gas, 0.4 * px_per_v)) * r.uniform(0.2, 0.5)

    # ================== imaging ==================
    k = r.uniform(1.0, 2.0)
    img = 1.0 - np.exp(-k * np.clip(att, 0, None))
    # heel effect / uneven exposure
    gy, gx = np.mgrid[0:h, 0:w].astype(np.float32)
    g = 1.0 + r.uniform(-0.12, 0.12) * (gx / w - 0.5) + r.uniform(-0.12, 0.12) * (gy / h - 0.5)
    img = img * g
    # scatter: low-frequency veil
    scat = r.uniform(0.0, 0.25)
    img = (1 - scat) * img + scat * _blur(img, max(w, h) * 0.05)
    # window / level and gamma
    lo = np.percentile(img, r.uniform(0.5, 5))
    hi = np.percentile(img, r.uniform(97, 99.9))
    img = np.clip((img - lo) / max(hi - lo, 1e-3), 0, 1) ** r.uniform(0.7, 1.4)
    # detector blur and noise
    img = _blur(img, r.uniform(0.0, 1.2) * max(w, h) / 512)
    img = img + r.normal(0, r.uniform(0.005, 0.04), img.shape).astype(np.float32)
    img = img + np.sqrt(np.clip(img, 0, 1)) * r.normal(0, r.uniform(0.0, 0.03), img.shape).astype(np.float32)
    # collimation: unexposed borders
    if r.random() < 0.55:
        cval = 1.0 if r.random() < 0.6 else 0.0
        m = int(r.uniform(0, 0.08) * w), int(r.uniform(0, 0.08) * w), int(r.uniform(0, 0.08) * h), int(r.uniform(0, 0.08) * h)
        img[:, : m[0]] = cval * r.uniform(0.75, 1)
        if m[1]:
            img[:, w - m[1]:] = cval * r.uniform(0.75, 1)
        img[: m[2], :] = cval * r.uniform(0.75, 1)
        if m[3]:
            img[h - m[3]:, :] = cval * r.uniform(0.75, 1)
    out = Image.fromarray((np.clip(img, 0, 1) * 255).astype(np.uint8))
    _annotate(r, out)
    return out, truth_px


def _annotate(r, im):
    """Lead side markers and burned-in text, as on clinic radiographs."""
    w, h = im.size
    d = ImageDraw.Draw(im)
    if r.random() < 0.8:
        sz = int(max(w, h) * r.uniform(0.03, 0.06))
        f = load_font(sz)
        x, y = int(r.uniform(0.02, 0.85) * w), int(r.uniform(0.02, 0.85) * h)
        txt = r.choice(["L", "R", "LT", "RT", "R LAT", "L LAT"])
        if r.random() < 0.6:
            d.rectangle([x - 2, y - 2, x + sz * len(txt) * 0.7 + 2, y + sz + 4], outline=255, width=max(1, sz // 12))
        d.text((x, y), txt, fill=255, font=f)
    if r.random() < 0.7:
        sz = int(max(w, h) * r.uniform(0.012, 0.025))
        f = load_font(sz)
        lines = [r.choice(["VETERINARY HOSPITAL", "ANIMAL CLINIC", "PET CARE CENTER", "VET REFERRAL"]),
                 f"PATIENT {r.integers(1000, 99999)}  {r.choice(['CANINE', 'K9', 'DOG'])}",
                 f"20{r.integers(18, 27)}-{r.integers(1, 13):02d}-{r.integers(1, 29):02d} {r.integers(0, 24):02d}:{r.integers(0, 60):02d}"]
        x = int(r.choice([0.02, 0.6]) * w)
        y = int(r.choice([0.02, 0.85]) * h)
        col = int(r.uniform(180, 255))
        for i, t in enumerate(lines[: int(r.integers(1, 4))]):
            d.text((x, y + i * (sz + 2)), t, fill=col, font=f)


def generate(seed, w=None, h=None, heldout=False, flip=None):
    """One phantom: (PIL L image, truth dict in pixels, meta dict)."""
    rng = np.random.default_rng(seed)
    ranges = HELDOUT if heldout else TRAIN
    if w is None or h is None:
        long_side = int(rng.integers(320, 1600))
        asp = rng.uniform(*ranges["aspect"])
        w, h = (long_side, int(long_side / asp)) if asp >= 1 else (int(long_side * asp), long_side)
    for _ in range(40):
        a, shapes, truth = build(rng, ranges)
        img, truth_px = render(rng, a, shapes, truth, w, h, ranges, flip=flip)
        if img is not None:
            vhs, vlas = measure(truth_px)
            return img, truth_px, {"vhs": vhs, "vlas": vlas, "seed": seed, "width": w, "height": h}
    raise RuntimeError(f"phantom seed {seed}: landmarks never fit the field of view")


if __name__ == "__main__":
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/phantoms"
    os.makedirs(out, exist_ok=True)
    for s in range(int(sys.argv[2]) if len(sys.argv) > 2 else 6):
        im, t, m = generate(s)
        im.save(os.path.join(out, f"p{s}.png"))
        print(s, im.size, round(m["vhs"], 2), round(m["vlas"], 2))
