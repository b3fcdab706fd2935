"""Physically based lateral thoracic radiograph simulator with exact landmarks.

SYNTHETIC DATA. Nothing here comes from a real patient. Unlike sim/phantom.py
(which paints a 2D picture), this module builds a dog or cat in 3D and
projects it: the image is the line integral of the linear attenuation
coefficient along each ray, so overlapping structures add up the way they do
on a detector (ribs over the heart, scapulae over the cranial lungs, the
heart over both lungs, the trachea's air inside the mediastinum).

Frame (head left, before any flip): x runs cranial -> caudal, y dorsal ->
ventral, z is the patient's left-right axis (the beam runs along z). Units
are vertebral lengths (v = 1 = one thoracic vertebra with its disc).

Primitives, each with an analytic chord length along a ray:
  - ellipsoids (torso, fat layer, thoracic cavity, diaphragm dome, heart
    chambers, mediastinum, stomach gas, scapulae, spinous processes, limb
    muscle) -> entry/exit interval per ray, so lung = cavity minus heart minus
    dome is exact interval arithmetic;
  - finite cylinders (vertebral bodies with flat endplates, ribs and costal
    cartilages as chains, sternebrae, trachea, bronchi, aorta, caudal vena
    cava, pulmonary vessels, humeri) -> rendered in batches.
Bone is a cortical shell around a cancellous core (outer primitive with the
cortical coefficient plus an inner one with the cancellous-minus-cortical
difference).

Imaging chain: kVp-dependent coefficients (bone/soft-tissue contrast falls
with kVp), a divergent beam (magnification grows with distance from the
detector, so left and right ribs do not superimpose), rotation about the
long axis, heel effect, scatter (a broad blur of the primary, reduced by a
grid), grid lines, quantum (Poisson) noise, detector blur, then the DR
post-processing clinical images carry: log transform, windowing on the
body's percentiles, multi-scale contrast enhancement (unsharp masks at three
scales) and a sigmoid/gamma LUT.

Presentation (present()): grey exports of any size, blue/green/sepia viewer
tints, crops that cut the neck or abdomen, scanned film, phone photos of a
lightbox, burned-in text, rulers and annotation lines, JPEG artefacts and
small thumbnails.

Landmark truth is computed from the projected anatomy itself:
  heart_top    carina (the projected tracheal bifurcation)
  heart_bottom the silhouette point farthest from the carina (apex)
  heart_right  cranial end of the widest silhouette chord perpendicular to
  heart_left   the long axis (caudal end)
  VLAS         where the dorsal border of the caudal vena cava meets the
               caudal border of the heart (left atrium)
  Vertebra A   midpoint of T4's cranial endplate
  Vertebra B   midpoint of T9's caudal endplate
Assumptions and their sources are listed in models/CARDIAC_MODEL_CARD.md.
"""
import io
import math
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter
from scipy import ndimage

from sim.phantom import LANDMARKS, load_font, measure  # one landmark order, one font loader, one VHS formula

GENERATOR = "xraysim"

# Seeds at or above this are only ever used for held-out evaluation sets.
HELDOUT_SEED_BASE = 20_000_000

# Presentation families. HELDOUT_ONLY families never appear in training
# (generalisation to a condition family the models never saw).
TRAIN_TINTS = ("grey", "blue", "sepia")
HELDOUT_ONLY_TINTS = ("green",)

# Worlds: "xraysim" is the simulator the shipped models trained on;
# "xraysim2" draws the same patient with what a look at real lateral
# radiographs beside the phantoms asked for: vertebral bodies longer than
# tall with thinner discs, pedicles and rib heads over the discs
# (_world2_vertebra), epaxial muscles (_world2_epaxial), the heart resting
# on the sternum (Patient), bulges on its border (_world2_heart_bulges),
# busier lung markings (_world2_vessels), less quantum noise and stronger
# DR range compression (image_chain). A seed gives the same
# patient, pose and presentation in both worlds; world 2's own draws come
# from a second stream (_world_rng), so world 1's images are unchanged.
# "xraysim3" is world 2's patient with the carina where the image must be
# read to find it: drawn over a wider range along and below the spine
# (phantom.py and realref put it deeper and further caudal than worlds 1
# and 2 do), and a trachea as plain as a real dog's (a soft-tissue sleeve
# around a wider air column), and the heart moved from the carina by up
# to 0.15 of its long axis and 0.3 of its short, so that its base does not
# tell where the carina is. Its own draws come from a third stream, so
# a seed's world-2 image is unchanged (experiments/2026-11-28-carina-world3.md).
WORLDS = ("xraysim", "xraysim2", "xraysim3")

def _rot(axis, ang):
    """3x3 rotation about a coordinate axis (0=x, 1=y, 2=z)."""
    c, s = math.cos(ang), math.sin(ang)
    if axis == 0:
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == 1:
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


# ---------------------------------------------------------------------------
# Patient: anatomy in 3D
# ---------------------------------------------------------------------------


class Patient:
    """Random anatomy of one dog or cat; all lengths in vertebral units."""

    def __init__(self, r, heldout=False, r2=None, r3=None):
        self.r = r
        kind = r.choice(["normal", "deep", "barrel", "toy", "giant", "cat"], p=[0.3, 0.18, 0.16, 0.1, 0.1, 0.16])
        self.kind = kind
        self.cat = kind == "cat"
        # Thoracic depth (spine to sternum at T7) and half-width.
        depth = {"normal": (8.4, 9.8), "deep": (9.4, 11.0), "barrel": (7.4, 8.8), "toy": (7.4, 9.0),
                 "giant": (8.4, 10.0), "cat": (6.8, 8.2)}[kind]
        width = {"normal": (0.55, 0.7), "deep": (0.42, 0.55), "barrel": (0.75, 0.95), "toy": (0.6, 0.8),
                 "giant": (0.5, 0.65), "cat": (0.5, 0.62)}[kind]
        self.depth = depth_drawn = r.uniform(*depth)
        self.half_w = self.depth * r.uniform(*width)
        self.vlen = 1.0 + r.normal(0, 0.025, 16)
        self.body_h = r.uniform(0.6, 0.78) * (0.9 if self.cat else 1.0)
        self.curve = r.uniform(-0.035, 0.03)
        self.neck_flex = r.uniform(-0.3, 0.9) if r.random() < 0.3 else r.uniform(0.0, 0.35)
        self.fat = r.uniform(0.15, 1.3) if r.random() < 0.8 else r.uniform(1.3, 2.2)
        self.resp = r.uniform(0, 1)  # 0 expiration .. 1 deep inspiration
        self.limbs_forward = r.random() < 0.7
        # Heart size: normal breeds VHS 8.5-10.8, cardiomegaly to 14, cats 6.8-8.3.
        if self.cat:
            vhs = r.uniform(6.6, 8.6) if r.random() < 0.8 else r.uniform(8.6, 10.5)
        elif r.random() < 0.55:
            vhs = r.uniform(8.4, 10.9)
        else:
            vhs = r.uniform(10.5, 14.0)
        pattern = r.choice(["plain", "la", "right", "globoid"], p=[0.45, 0.25, 0.15, 0.15])
        if vhs < 10.3 and pattern != "la":
            pattern = "plain" if r.random() < 0.7 else pattern
        self.pattern = pattern
        ratio = {"plain": r.uniform(1.15, 1.45), "la": r.uniform(1.15, 1.45),
                 "right": r.uniform(1.05, 1.3), "globoid": r.uniform(0.98, 1.12)}[pattern]
        # The silhouette is a bit wider than the main ellipsoid once the other
        # chambers are added, so aim slightly low.
        self.L = vhs * ratio / (1 + ratio)
        self.S = vhs / (1 + ratio) * 0.93
        self.tilt = math.radians(r.uniform(8, 45) if not self.cat else r.uniform(25, 55))
        self.la = {"plain": r.uniform(0.18, 0.26), "la": r.uniform(0.3, 0.45), "right": r.uniform(0.18, 0.26),
                   "globoid": r.uniform(0.22, 0.36)}[pattern]
        self.ra = {"plain": r.uniform(0.0, 0.2), "la": r.uniform(0.0, 0.2), "right": r.uniform(0.35, 0.55),
                   "globoid": r.uniform(0.3, 0.5)}[pattern]
        self.rot_long = math.radians(r.normal(0, 5) if r.random() < 0.7 else r.uniform(-18, 18))
        self.heldout = heldout
        # World 2 (r2 given): its own draws come from r2, so r's stream, and
        # with it everything else about the patient, stays as in world 1.
        self.r2 = r2
        self.r3 = None
        if r2 is not None:
            # Thoracic vertebral bodies are longer than tall (centrum height
            # about half to two thirds of its length with the disc).
            self.body_h = r2.uniform(0.46, 0.62) * (0.92 if self.cat else 1.0)
            # The heart rests on the sternum: its apex reaches the ventral
            # thorax (a little lung between them in deep chests, none where
            # it is enlarged), so the chest's depth follows the heart's
            # height (the carina sits about 1.5 v below the column).
            reach = 1.5 + self.L * math.cos(self.tilt)
            gap = r2.uniform(0.3, 1.4) if kind == "deep" else r2.uniform(-0.2, 0.8)
            # World 3 (r3 given; it is world 2's patient, so r3 without r2
            # draws world 1): the carina's own place, the heart's offset
            # from it, and the chest deep enough for the heart below it.
            self.r3 = r3
            if r3 is not None:
                self.carina_dx = r3.uniform(-0.4, 1.8)   # caudal of T4's cranial endplate
                self.carina_dy = r3.uniform(1.0, 3.0)    # ventral of the column
                self.heart_da = r3.uniform(-0.15, 0.1)   # the heart moved from the carina, along its axis (x L)
                self.heart_db = r3.uniform(-0.3, 0.3)    # and across it (x S)
                reach = self.carina_dy + self.L * math.cos(self.tilt)
            self.depth = max(reach + gap, 6.0)
            self.half_w *= self.depth / depth_drawn  # the same chest shape, scaled
        self._spine()

    # -- spine --------------------------------------------------------------
    def _spine(self):
        # 16 bodies: C6, C7, T1..T13, L1 (index 2 = T1). Endplate i of the
        # thoracic spine: T_k cranial endplate is index k-1 (T1 -> 0).
        xs = np.concatenate([[0.0], np.cumsum(self.vlen[2:15])])  # T1 cranial .. T13 caudal
        self.endplate_x = xs

    def spine_y(self, x):
        """Ventral border of the vertebral bodies at x (y grows ventrally)."""
        x = np.asarray(x, dtype=float)
        y = self.curve * (x - 6.5) ** 2 - self.curve * 6.5 ** 2
        drop = 0.25 + 0.5 * self.neck_flex
        return y + drop * np.clip(2.5 - x, 0, None) ** 1.4 / 2.5 ** 0.4

    def sternum_y(self, x):
        """Dorsal border of the sternum at x."""
        x = np.asarray(x, dtype=float)
        base = self.spine_y(6.5) + self.depth
        cran = np.clip((4.0 - x) / 5.0, 0, 1) ** 1.2 * self.depth * 0.38
        return base - cran + np.clip(x - 6.5, 0, None) * 0.08

    def body_axis_point(self, x, frac):
        """Point at x, `frac` of the vertebral body height dorsal of its ventral border."""
        return np.array([x, float(self.spine_y(x)) - frac * self.body_h, 0.0])


# ---------------------------------------------------------------------------
# Scene: primitives in the view frame
# ---------------------------------------------------------------------------


class Scene:
    """Collects primitives and projects them: rotation about the long axis
    (through the thorax centre) and a divergent beam (magnification per
    point, 1 + k z, z toward the source)."""

    def __init__(self, rot_long, k_mag, centre):
        self.R = _rot(0, rot_long)
        self.k = k_mag
        self.c = np.asarray(centre, float)
        self.ell = []      # big ellipsoids, rendered on the full grid: (name, c, M, mu)
        self.small = []    # small ellipsoids (batched): (c, M, mu)
        self.cyl = []      # cylinders: (p0, p1, r, mu)

    def view(self, p):
        """Body point(s) [...,3] -> view frame (rotated, then magnified about the centre)."""
        p = np.asarray(p, float)
        q = (p - self.c) @ self.R.T
        m = 1.0 + self.k * q[..., 2:3]
        out = q.copy()
        out[..., :2] = q[..., :2] * m
        return out + self.c

    def _ell_view(self, c, axes, Rb):
        q = (np.asarray(c, float) - self.c) @ self.R.T
        m = 1.0 + self.k * q[2]
        cv = np.concatenate([q[:2] * m, q[2:]]) + self.c
        Rv = self.R @ Rb
        a = np.asarray(axes, float) * np.array([m, m, 1.0])
        M = Rv @ np.diag(a ** 2) @ Rv.T  # inverse quadratic form
        return cv, M

    def ellipsoid(self, c, axes, mu, Rb=None, name=None):
        Rb = np.eye(3) if Rb is None else Rb
        cv, M = self._ell_view(c, axes, Rb)
        if name is not None:
            self.ell.append((name, cv, M, mu))
        else:
            self.small.append((cv, M, mu))

    def cylinder(self, p0, p1, r, mu):
        self.cyl.append((self.view(p0), self.view(p1), r * (1.0 + self.k * float(((np.asarray(p0) - self.c) @ self.R.T)[2])), mu))

    def tube(self, pts, r, mu):
        pts = np.asarray(pts, float)
        rr = np.broadcast_to(np.asarray(r, float), (len(pts),))
        for i in range(len(pts) - 1):
            self.cylinder(pts[i], pts[i + 1], 0.5 * (rr[i] + rr[i + 1]), mu)


def _ell_interval(cv, M, X, Y):
    """Entry/exit z of rays (X, Y) through the ellipsoid; t0 == t1 where missed."""
    Q = np.linalg.inv(M)
    dx, dy = X - cv[0], Y - cv[1]
    A = Q[2, 2]
    B = Q[0, 2] * dx + Q[1, 2] * dy
    C = Q[0, 0] * dx * dx + 2 * Q[0, 1] * dx * dy + Q[1, 1] * dy * dy - 1.0
    disc = B * B - A * C
    s = np.sqrt(np.clip(disc, 0, None))
    t0 = cv[2] + (-B - s) / A
    t1 = cv[2] + (-B + s) / A
    miss = disc <= 0
    t0 = np.where(miss, 0.0, t0)
    t1 = np.where(miss, 0.0, t1)
    return t0, t1


def _overlap(a, b):
    return np.clip(np.minimum(a[1], b[1]) - np.maximum(a[0], b[0]), 0, None)


def _inter(a, b):
    lo, hi = np.maximum(a[0], b[0]), np.minimum(a[1], b[1])
    hi = np.maximum(hi, lo)
    return lo, hi


def _hull(ivs):
    """Union of (mostly overlapping) intervals, as their hull over the hit ones."""
    lo = np.full(ivs[0][0].shape, np.inf)
    hi = np.full(ivs[0][0].shape, -np.inf)
    for t0, t1 in ivs:
        hit = t1 > t0
        lo = np.where(hit, np.minimum(lo, t0), lo)
        hi = np.where(hit, np.maximum(hi, t1), hi)
    none = ~np.isfinite(lo)
    return np.where(none, 0.0, lo), np.where(none, 0.0, hi)


def _render_small_ellipsoids(items, X0, Y0, s, H, W, out):
    """Batched chord lengths of small ellipsoids, accumulated into out (H, W)."""
    if not items:
        return
    ext = np.array([[math.sqrt(M[0, 0]), math.sqrt(M[1, 1])] for _, M, _ in items]) * s
    order = np.argsort(ext.max(1))
    for chunk in np.array_split(order, max(1, len(order) // 24)):
        if len(chunk) == 0:
            continue
        half = int(math.ceil(ext[chunk].max())) + 1
        off = np.arange(-half, half + 1)
        for i in chunk:
            cv, M, mu = items[i]
            ci, cj = (cv[1] - Y0) * s - 0.5, (cv[0] - X0) * s - 0.5
            ii = np.clip(np.round(ci).astype(int) + off, 0, H - 1)
            jj = np.clip(np.round(cj).astype(int) + off, 0, W - 1)
            ii, jj = np.unique(ii), np.unique(jj)
            Yg = Y0 + (ii[:, None] + 0.5) / s
            Xg = X0 + (jj[None, :] + 0.5) / s
            t0, t1 = _ell_interval(cv, M, Xg, Yg)
            out[np.ix_(ii, jj)] += mu * (t1 - t0)


def _render_cylinders(items, X0, Y0, s, H, W, out):
    """Finite cylinders (flat ends), batched in groups of similar footprint."""
    if not items:
        return
    P0 = np.array([c[0] for c in items])
    P1 = np.array([c[1] for c in items])
    R = np.array([c[2] for c in items])
    MU = np.array([c[3] for c in items])
    lo = np.minimum(P0[:, :2], P1[:, :2]) - R[:, None]
    hi = np.maximum(P0[:, :2], P1[:, :2]) + R[:, None]
    size = ((hi - lo) * s).max(1)
    order = np.argsort(size)
    flat = out.reshape(-1)
    for chunk in np.array_split(order, max(1, len(order) // 64)):
        if len(chunk) == 0:
            continue
        n = int(math.ceil(size[chunk].max())) + 2
        j0 = np.floor((lo[chunk, 0] - X0) * s).astype(int) - 1
        i0 = np.floor((lo[chunk, 1] - Y0) * s).astype(int) - 1
        off = np.arange(n)
        jj = j0[:, None] + off[None, :]          # [N, n]
        ii = i0[:, None] + off[None, :]
        Xg = X0 + (jj[:, None, :] + 0.5) / s       # [N,1,n]
        Yg = Y0 + (ii[:, :, None] + 0.5) / s       # [N,n,1]
        p0, p1, r, mu = P0[chunk], P1[chunk], R[chunk], MU[chunk]
        d = p1 - p0
        ln = np.linalg.norm(d, axis=1).clip(1e-6)
        t = d / ln[:, None]
        tx, ty, tz = (t[:, k][:, None, None] for k in range(3))
        wx = Xg - p0[:, 0][:, None, None]
        wy = Yg - p0[:, 1][:, None, None]
        wz = -p0[:, 2][:, None, None]
        wt = wx * tx + wy * ty + wz * tz
        A = np.clip(1 - tz * tz, 1e-6, None)
        B = wz - wt * tz
        C = wx * wx + wy * wy + wz * wz - wt * wt - (r * r)[:, None, None]
        disc = B * B - A * C
        sq = np.sqrt(np.clip(disc, 0, None))
        a0, a1 = (-B - sq) / A, (-B + sq) / A
        # slab 0 <= (p - p0).t <= len along the ray: wt + z tz
        tzs = np.where(np.abs(tz) < 1e-6, 1e-6, tz)
        b0 = (0 - wt) / tzs
        b1 = (ln[:, None, None] - wt) / tzs
        blo, bhi = np.minimum(b0, b1), np.maximum(b0, b1)
        ins = (np.abs(tz) >= 1e-6) | ((wt >= 0) & (wt <= ln[:, None, None]))
        blo = np.where(np.abs(tz) < 1e-6, -1e9, blo)
        bhi = np.where(np.abs(tz) < 1e-6, 1e9, bhi)
        L = np.clip(np.minimum(a1, bhi) - np.maximum(a0, blo), 0, None) * (disc > 0) * ins
        val = L * mu[:, None, None]
        I = np.broadcast_to(ii[:, :, None], val.shape)
        J = np.broadcast_to(jj[:, None, :], val.shape)
        ok = (I >= 0) & (I < H) & (J >= 0) & (J < W) & (val != 0)
        np.add.at(flat, (I[ok] * W + J[ok]), val[ok])


# ---------------------------------------------------------------------------
# Building the patient into a scene
# ---------------------------------------------------------------------------


def _shell(scene, p0, p1, r, mu_cort, mu_canc, cort=0.25):
    """Bone: a cortical shell around a cancellous core (as two cylinders)."""
    scene.cylinder(p0, p1, r, mu_cort)
    d = np.asarray(p1, float) - np.asarray(p0, float)
    ln = np.linalg.norm(d)
    e = d / max(ln, 1e-6) * min(cort * r, 0.2 * ln)
    scene.cylinder(np.asarray(p0) + e, np.asarray(p1) - e, r * (1 - cort), mu_canc - mu_cort)


def _world2_vertebra(scene, pt, x0, x1, rad, mid, cort, canc):
    """World 2's additions to one vertebra: the pedicles and laminae that
    join body to arch (bone over the dorsal half of the body and the top of
    the canal), and the rib heads of both sides, which articulate across the
    disc space, so that a disc is no clean dark gap through the column and
    the column does not read as a train of separate boxes."""
    r2 = pt.r2
    ln = x1 - x0
    scene.ellipsoid(mid + [0, -rad * 0.9, 0], [0.4 * ln, rad * 0.45, r2.uniform(0.35, 0.5)], canc * 0.7)
    for side in (-1, 1):
        head = pt.body_axis_point(x0, r2.uniform(0.55, 0.8))
        scene.ellipsoid(head + [0, 0, side * r2.uniform(0.35, 0.55)],
                        [r2.uniform(0.12, 0.2), r2.uniform(0.12, 0.18), 0.14], cort * 0.8)


def _world2_heart_bulges(r2, carina, axis, cran, L, S, zoff, Rb):
    """World 2's heart outline: one to three bulges on the cranial or
    caudal border (a rounded right ventricle, the pulmonary trunk or an
    auricle, a flattened caudal border), so that the silhouette is no
    union of smooth ellipsoids. They are heart parts: the landmark truth
    follows them."""
    out = []
    for _ in range(int(r2.integers(1, 4))):
        side = 1 if r2.random() < 0.6 else -1  # cranial border more often
        # Between base and apex only, so that the apex (the silhouette's
        # point farthest from the carina) stays the apex.
        c = carina + axis * r2.uniform(0.2, 0.7) * L + cran * side * r2.uniform(0.3, 0.42) * S
        rad = r2.uniform(0.1, 0.2) * S
        out.append((c + [0, 0, zoff], np.array([rad * r2.uniform(1.0, 1.6), rad, rad]), Rb))
    return out


def _vessel_tree(scene, r, hil, mu, count, ang, dz, start, rad, segments, turn, step, taper):
    """Pulmonary vessels branching from the hilum: count (a range) random
    walks, each starting in a direction at an angle in ang (radians, in the
    view plane) with a z component up to dz, start from the hilum, of
    radius rad narrowing to taper of it over segments steps of length step,
    turning by turn (SD) a step; attenuation mu. Every argument but scene,
    r, hil, mu, turn and taper is a (low, high) range drawn from r."""
    for _ in range(int(r.integers(*count))):
        a = r.uniform(*ang)
        d = np.array([math.cos(a), math.sin(a) * 0.8, r.uniform(-dz, dz)])
        d /= np.linalg.norm(d)
        p = hil + d * r.uniform(*start)
        rr = r.uniform(*rad)
        pts = [p]
        for _ in range(int(r.integers(*segments))):
            d = d + r.normal(0, turn, 3)
            d /= np.linalg.norm(d)
            p = p + d * r.uniform(*step)
            pts.append(p)
        scene.tube(pts, np.linspace(rr, rr * taper, len(pts)), mu)


def _world2_vessels(scene, r2, hil, st, lung):
    """World 2's lung markings: more and finer vessels reaching the
    periphery, as the busy lung fields of real radiographs show."""
    _vessel_tree(scene, r2, hil, (st - lung) * 0.85, count=(40, 120), ang=(-math.pi, math.pi * 0.3), dz=0.8,
                 start=(0.5, 1.5), rad=(0.03, 0.1), segments=(5, 12), turn=0.3, step=(0.4, 0.9), taper=0.3)


def _world2_epaxial(scene, pt, st, fat):
    """World 2's epaxial muscles: the thick soft tissue on both sides of the
    spinous processes, from the neck to the loin. The torso ellipsoid thins
    dorsally as an ellipse does; a real back is square in cross-section, so
    the band dorsal to the vertebral bodies is as thick from side to side as
    the chest and about as bright on the image as the heart."""
    r2 = pt.r2
    top = float(pt.spine_y(6.5)) - pt.body_h
    h = r2.uniform(0.9, 1.5)
    for xc, ax in ((r2.uniform(5.0, 8.0), r2.uniform(11, 14)), (r2.uniform(-3.0, 0.0), r2.uniform(3, 5))):
        scene.ellipsoid([xc, top - h * 0.85, 0.0], [ax, h, pt.half_w * r2.uniform(0.5, 0.75)],
                        (st - fat) + st * r2.uniform(0.25, 0.5), name="epaxial")


def build(pt, r, mu):
    """Return (scene, heart parts in body frame, carina, cvc line, meta)."""
    st, fat, cort, canc, lung = mu["soft"], mu["fat"], mu["cort"], mu["canc"], mu["lung"]
    depth = pt.depth
    yc_thorax = float(pt.spine_y(6.5)) + depth * 0.5
    scene = Scene(pt.rot_long, r.uniform(0.012, 0.03), (7.0, yc_thorax, 0.0))
    hw = pt.half_w

    # Torso with a fat layer, neck and abdomen beyond the frame.
    dorsal = float(pt.spine_y(6.5)) - pt.body_h - r.uniform(1.4, 2.4) - 0.4 * pt.fat
    ventral = float(pt.sternum_y(6.5)) + 0.35 + 0.5 * pt.fat
    tc = np.array([7.5, 0.5 * (dorsal + ventral), 0.0])
    tax = np.array([r.uniform(22, 30), 0.5 * (ventral - dorsal), hw + 0.5 + 0.6 * pt.fat])
    scene.ellipsoid(tc, tax, fat, name="torso")
    inner = tax - np.array([0.4, 0.45 * pt.fat + 0.1, 0.5 * pt.fat + 0.1])
    scene.ellipsoid(tc + [0, 0.05 * pt.fat, 0], inner, st - fat, name="muscle")

    # Thoracic cavity (lungs live here minus heart, mediastinum and dome).
    cav_c = np.array([6.0 + r.uniform(-0.3, 0.5), float(pt.spine_y(6.5)) + depth * 0.47, 0.0])
    cav_ax = np.array([r.uniform(7.0, 7.8), depth * 0.56, hw * 0.93])
    cav_R = _rot(2, math.radians(r.uniform(-12, -3)))  # deeper caudally
    scene.ellipsoid(cav_c, cav_ax, 0.0, Rb=cav_R, name="cavity")
    # Diaphragm dome + liver; inspiration moves it caudally.
    dome_x = 8.3 + 2.2 * pt.resp + r.uniform(-0.4, 0.4)
    dome_ax = np.array([r.uniform(3.8, 5.0), depth * r.uniform(0.62, 0.75), hw * 1.05])
    dome_c = np.array([dome_x + dome_ax[0], float(pt.spine_y(10)) + depth * 0.55, 0.0])
    dome_R = _rot(2, math.radians(r.uniform(15, 35)))  # ventral part more cranial
    scene.ellipsoid(dome_c, dome_ax, 0.0, Rb=dome_R, name="dome")

    # Heart: carina and long axis.
    T = pt.endplate_x
    carina = np.array([T[4] + r.uniform(-0.1, 0.8), 0.0, 0.0])
    carina[1] = float(pt.spine_y(carina[0])) + r.uniform(1.1, 1.9)
    if pt.r3 is not None:  # world 3: r's draws above are kept, so the rest of the patient is world 2's
        carina[0] = T[4] + pt.carina_dx
        carina[1] = float(pt.spine_y(carina[0])) + pt.carina_dy
    axis = np.array([math.sin(pt.tilt), math.cos(pt.tilt), 0.0])
    cran = np.array([-math.cos(pt.tilt), math.sin(pt.tilt), 0.0])  # perpendicular, pointing cranioventrally
    L, S = pt.L, pt.S
    zoff = r.uniform(-0.3, 0.3)
    # The heart hangs from hb: the carina in worlds 1 and 2; in world 3 a
    # point moved from it, so the heart's base does not tell where the
    # carina is and the trachea's end must.
    hb = carina if pt.r3 is None else carina + axis * pt.heart_da * L + cran * pt.heart_db * S
    parts = []
    mc = hb + axis * (0.52 * L) + cran * r.uniform(-0.05, 0.12) * S + [0, 0, zoff]
    Rb = np.column_stack([axis, cran, [0, 0, 1]])
    parts.append((mc, np.array([0.5 * L, 0.5 * S, 0.48 * S * r.uniform(0.85, 1.05)]), Rb))
    # Left atrium: caudodorsal at the base.
    lac = hb + axis * r.uniform(0.08, 0.2) * L - cran * r.uniform(0.12, 0.25) * S
    lr = pt.la * S
    parts.append((lac + [0, 0, zoff - 0.2], np.array([lr * 1.15, lr, lr]), Rb))
    # Right atrium / right ventricle: cranial border.
    if pt.ra > 0.05:
        rac = hb + axis * r.uniform(0.35, 0.55) * L + cran * r.uniform(0.12, 0.3) * S
        rr_ = pt.ra * S
        parts.append((rac + [0, 0, zoff + 0.2], np.array([rr_ * 1.3, rr_, rr_]), Rb))
    # Base: atria/great-vessel mass just ventral of the carina.
    parts.append((hb + axis * 0.2 * L + [0, 0, zoff], np.array([0.22 * L, 0.3 * S, 0.3 * S]), Rb))
    if pt.r2 is not None:
        parts += _world2_heart_bulges(pt.r2, hb, axis, cran, L, S, zoff, Rb)
    for i, (c, ax, Rb_) in enumerate(parts):
        scene.ellipsoid(c, ax, 0.0, Rb=Rb_, name=f"heart{i}")

    # Mediastinum cranial to the heart (soft tissue between the lungs).
    med_c = np.array([carina[0] - 2.6, carina[1] + 0.3, 0.0])
    scene.ellipsoid(med_c, [3.0, 1.6, r.uniform(0.9, 1.4)], st - lung, Rb=_rot(2, math.radians(-12)))

    # Vertebrae C6..L2: bodies (shell + core), arches, spinous processes.
    bx = np.concatenate([[-2.0, -1.0], T, [T[-1] + 1.0, T[-1] + 2.0, T[-1] + 3.05]])
    for k in range(len(bx) - 1):
        x0, x1 = bx[k], bx[k + 1]
        gap = r.uniform(0.12, 0.18) * (x1 - x0)
        if pt.r2 is not None:  # discs are thinner than a sixth of the length
            gap = pt.r2.uniform(0.06, 0.11) * (x1 - x0)
        a = pt.body_axis_point(x0 + gap / 2, 0.5)
        b = pt.body_axis_point(x1 - gap / 2, 0.5)
        if k >= len(bx) - 4:  # lumbar bodies are longer
            b = pt.body_axis_point(x1 - gap / 2, 0.5)
        rad = pt.body_h / 2 * (1.0 if 2 <= k < 15 else 0.92)
        _shell(scene, a, b, rad, cort, canc, cort=r.uniform(0.15, 0.25))
        mid = 0.5 * (a + b)
        arch = mid + [0, -rad - 0.28, 0]
        scene.ellipsoid(arch, [0.42 * (x1 - x0), 0.2, 0.34], cort * 0.8)
        # Spinous process: tall cranial thoracic, shorter caudally, caudal tilt.
        ti = k - 2
        hgt = (2.0 if 0 <= ti < 6 else 1.4 if 6 <= ti < 10 else 0.9) * r.uniform(0.8, 1.15)
        if ti < 0:
            hgt = 0.5
        tilt = math.radians(35 if ti < 10 else -10 if ti >= 11 else 5)
        sp_dir = np.array([math.sin(tilt), -math.cos(tilt), 0])
        spc = arch + sp_dir * (0.5 * hgt + 0.1)
        scene.ellipsoid(spc, [0.5 * hgt, 0.14, r.uniform(0.14, 0.24)], cort, Rb=np.column_stack([sp_dir, [-sp_dir[1], sp_dir[0], 0], [0, 0, 1]]))
        # Transverse/rib-head bulk superimposed on the body.
        scene.ellipsoid(mid + [0, -0.1, 0], [0.2, 0.18, 0.7], canc * 0.6)
        if pt.r2 is not None:
            _world2_vertebra(scene, pt, x0, x1, rad, mid, cort, canc)

    if pt.r2 is not None:
        _world2_epaxial(scene, pt, st, fat)

    # Ribs 1..13, both sides.
    rib_r = r.uniform(0.08, 0.13) * (0.85 if pt.cat else 1.0)
    sweep0 = r.uniform(2.4, 4.2)
    for i in range(13):
        hx = T[i] + 0.05
        head = pt.body_axis_point(hx, 0.55)
        ysp = float(pt.spine_y(hx))
        yst = float(pt.sternum_y(hx + 1.5))
        ryc = 0.5 * (ysp - 0.4 + yst)
        ry = 0.5 * (yst - ysp + 0.4)
        rz = hw * (0.62 + 0.38 * min(1.0, (i + 2) / 7.0))
        sweep = sweep0 * (0.7 + 0.03 * i)
        asternal = i >= 9
        psi_end = math.radians(r.uniform(128, 145) if not asternal else r.uniform(110, 130) - 4 * (i - 9))
        for side in (-1, 1):
            psis = np.linspace(math.radians(12), psi_end, 11)
            prog = (psis - psis[0]) / (psis[-1] - psis[0])
            # caudoventral from the spine, curving back cranially toward the
            # costochondral junction
            bend = r.uniform(0.5, 0.65) * math.pi
            pts = np.stack([hx + sweep * np.sin(prog * bend) / math.sin(bend) * (1.0 + 0.15 * (i > 8)),
                            ryc - ry * np.cos(psis),
                            side * rz * np.sin(psis)], 1)
            pts = np.vstack([head + [0.1, 0.0, side * 0.45], pts])
            for j in range(len(pts) - 1):
                _shell(scene, pts[j], pts[j + 1], rib_r, cort, canc, cort=0.2)
            # Costal cartilage to the sternum (sternal ribs) or the arch.
            end = pts[-1]
            if not asternal:
                tgt = np.array([min(hx + 0.8, 8.8), float(pt.sternum_y(min(hx + 0.8, 8.8))) + 0.1, side * 0.2])
            else:
                tgt = end + np.array([1.4, 0.8 + 0.1 * (12 - i), -side * 0.5 * rz])
            mid = 0.5 * (end + tgt) + np.array([0.3, 0.3, side * 0.3 * rz])
            carti = mu.get("cart", st * 1.25)
            scene.tube([end, mid, tgt], rib_r * 0.9, carti - st)

    # Sternebrae.
    sx = np.linspace(-0.6, 8.4 + r.uniform(-0.5, 0.5), 9)
    for k in range(8):
        x0, x1 = sx[k] + 0.12, sx[k + 1] - 0.12
        a = np.array([x0, float(pt.sternum_y(x0)) + 0.3, 0.0])
        b = np.array([x1, float(pt.sternum_y(x1)) + 0.3, 0.0])
        _shell(scene, a, b, r.uniform(0.22, 0.3), cort * 0.9, canc, cort=0.3)

    # Trachea (air inside mediastinal soft tissue) to the carina; main bronchi.
    tr_r = r.uniform(0.38, 0.55) * (0.75 if pt.kind in ("barrel",) and r.random() < 0.5 else 1.0)
    neck_pts = []
    for x in np.linspace(-3.5, carina[0], 9):
        f = (carina[0] - x) / (carina[0] + 3.5)
        y = carina[1] - f * (carina[1] - float(pt.spine_y(x)) - 0.9 - 0.4 * pt.neck_flex * f)
        neck_pts.append([x, y, 0.0])
    neck_pts = np.array(neck_pts)
    if pt.r3 is not None:  # world 3: a plain trachea, an air column in a soft-tissue sleeve
        tr_r *= pt.r3.uniform(1.0, 1.25)
        scene.tube(neck_pts, tr_r + pt.r3.uniform(0.25, 0.5), st - lung)
    scene.tube(neck_pts, tr_r, -st)
    for side in (-1, 1):
        scene.tube([carina, carina + [0.9, 0.45, side * 0.5], carina + [1.9, 0.8, side * 0.9]],
                   [tr_r * 0.7, tr_r * 0.55, tr_r * 0.4], -(lung * 0.6))

    # Aorta: from the base, arching dorsally, then caudally under the spine.
    ao_r = r.uniform(0.3, 0.42)
    a0 = hb + axis * 0.15 * L + cran * 0.25 * S
    arch_top = np.array([carina[0] + 0.2, float(pt.spine_y(carina[0])) + 0.55, 0.0])
    ao = [a0, 0.5 * (a0 + arch_top) + [-0.4, -0.2, 0], arch_top]
    for x in np.linspace(carina[0] + 1.2, 14.0, 7):
        ao.append([x, float(pt.spine_y(x)) + 0.5 + ao_r * 0.5, 0.0])
    scene.tube(ao, ao_r, st - lung)

    # Pulmonary vessels: branching from the hilum into the lungs.
    hil = carina + axis * 0.1 * L
    _vessel_tree(scene, r, hil, (st - lung) * 0.9, count=(60, 110), ang=(-math.pi * 0.95, math.pi * 0.25), dz=0.6,
                 start=(0.3, 1.0), rad=(0.05, 0.16), segments=(3, 9), turn=0.25, step=(0.5, 1.0), taper=0.35)
    if pt.r2 is not None:
        _world2_vessels(scene, pt.r2, hil, st, lung)

    # Scapulae and forelimbs.
    limb_dx = -r.uniform(2.5, 4.5) if pt.limbs_forward else r.uniform(-0.8, 1.2)
    for side in (-1, 1):
        sc = np.array([r.uniform(0.2, 1.6), float(pt.spine_y(1.0)) + r.uniform(0.2, 1.2), side * hw * 0.95])
        sang = math.radians(r.uniform(-30, -12))
        sdir = np.array([math.sin(sang), math.cos(sang), 0.0])
        Rb = np.column_stack([sdir, [-sdir[1], sdir[0], 0], [0, 0, 1]])
        scene.ellipsoid(sc, [r.uniform(2.0, 2.8), r.uniform(0.9, 1.3), 0.07], cort * 0.9, Rb=Rb)
        scene.ellipsoid(sc + [0.2, 0, side * 0.05], [2.0, 0.08, 0.18], cort * 0.7, Rb=Rb)  # scapular spine
        shoulder = sc + sdir * 2.4
        elbow = shoulder + np.array([limb_dx * 0.5 + r.uniform(-0.3, 0.6), r.uniform(2.4, 3.4), 0])
        _shell(scene, shoulder, elbow, r.uniform(0.3, 0.42), cort, canc, cort=0.3)
        paw = elbow + np.array([limb_dx * 0.6, r.uniform(2.5, 3.5), 0])
        _shell(scene, elbow, paw, r.uniform(0.22, 0.3), cort, canc, cort=0.3)
        scene.ellipsoid(0.5 * (shoulder + elbow) + [0, 0, side * 0.3], [1.4, 2.0, 0.8], st)
        scene.ellipsoid(0.5 * (elbow + paw) + [0, 0, side * 0.3], [0.6, 1.8, 0.45], st)
    # Triceps/pectoral bulk over the cranioventral thorax.
    scene.ellipsoid([r.uniform(0.0, 2.0), float(pt.sternum_y(1.0)) - 0.5, 0],
                    [2.0, 1.6 + 0.3 * pt.fat, hw * 0.9], st * 0.2)

    # Stomach gas and abdominal fat.
    if r.random() < 0.85:
        gc = np.array([dome_x + r.uniform(1.2, 2.6), float(pt.spine_y(12)) + r.uniform(1.2, 3.0), r.uniform(-1, 1)])
        scene.ellipsoid(gc, [r.uniform(0.6, 1.6), r.uniform(0.5, 1.2), r.uniform(0.5, 1.2)], -st)
    scene.ellipsoid([dome_x + 4.5, float(pt.sternum_y(12)) - 0.8, 0], [3.0, 1.2 + pt.fat, hw * 0.8], (fat - st) * 0.8)

    # Caudal vena cava: its dorsal border line meets the heart at the VLAS point.
    cvc_y = lac[1] + r.uniform(-0.2, 0.3) * lr
    meta = dict(dome_x=dome_x, cvc_y=cvc_y, mu=mu)
    return scene, parts, carina, meta


# ---------------------------------------------------------------------------
# Landmark truth from the projected heart
# ---------------------------------------------------------------------------


def heart_landmarks(scene, parts, carina, cvc_y, res=0.02):
    """Landmarks from the projected union of heart chambers, on a fine grid.

    Returns (top, bottom, right, left, vlas) in view-frame (x, y) units, or
    None when the silhouette is degenerate.
    """
    cs = [scene._ell_view(c, ax, Rb) for c, ax, Rb in parts]
    ext = np.array([[cv[0] - math.sqrt(M[0, 0]), cv[1] - math.sqrt(M[1, 1]), cv[0] + math.sqrt(M[0, 0]),
                     cv[1] + math.sqrt(M[1, 1])] for cv, M in cs])
    x0, y0 = ext[:, 0].min() - 0.1, ext[:, 1].min() - 0.1
    x1, y1 = ext[:, 2].max() + 0.1, ext[:, 3].max() + 0.1
    xs = np.arange(x0, x1, res)
    ys = np.arange(y0, y1, res)
    X, Y = np.meshgrid(xs, ys)
    mask = np.zeros(X.shape, bool)
    for cv, M in cs:
        t0, t1 = _ell_interval(cv, M, X, Y)
        mask |= t1 > t0
    top = scene.view(carina)[:2]
    px, py = X[mask], Y[mask]
    if len(px) < 100:
        return None
    d2 = (px - top[0]) ** 2 + (py - top[1]) ** 2
    k = int(np.argmax(d2))
    bottom = np.array([px[k], py[k]])
    u = bottom - top
    Lax = np.linalg.norm(u)
    u /= Lax
    n = np.array([-u[1], u[0]])
    if n[0] > 0:  # n points cranially (x decreasing)
        n = -n
    a = (px - top[0]) * u[0] + (py - top[1]) * u[1]
    b = (px - top[0]) * n[0] + (py - top[1]) * n[1]
    bins = np.floor(a / res).astype(int)
    sel = (a > 0.25 * Lax) & (a < 0.8 * Lax)
    if sel.sum() < 50:
        return None
    bb, bv = bins[sel], b[sel]
    order = np.argsort(bb)
    bb, bv = bb[order], bv[order]
    uniq, idx = np.unique(bb, return_index=True)
    bmax = np.maximum.reduceat(bv, idx)
    bmin = np.minimum.reduceat(bv, idx)
    w = bmax - bmin
    j = int(np.argmax(w))
    am = (uniq[j] + 0.5) * res
    right = top + u * am + n * bmax[j]
    left = top + u * am + n * bmin[j]
    # VLAS: the caudal-most heart point on the CVC's dorsal border line.
    cvc_v = scene.view(np.array([carina[0], cvc_y, 0.0]))[1]
    row = np.abs(py - cvc_v) < res * 0.75
    cand = row & (b < 0)
    if cand.sum() < 2:
        return None
    kk = np.argmax(np.where(cand, px * (-n[0]) + py * (-n[1]), -np.inf))  # most caudal along -n
    vl = np.array([px[kk], cvc_v])
    return top, bottom, right, left, vl


# ---------------------------------------------------------------------------
# Projection and the imaging chain
# ---------------------------------------------------------------------------


def attenuation_coefficients(r):
    """Linear attenuation coefficients per vertebral length at a random kVp.

    Soft tissue ~0.2/cm at 60-90 kVp and one canine vertebra ~1.5-2.5 cm;
    bone/soft contrast falls with kVp (cortical 2.3-4.2x soft tissue);
    inflated lung ~0.2-0.35 of soft tissue by density, more on expiration.
    """
    kvp = r.uniform(55, 100)
    f = (kvp - 55) / 45
    soft = r.uniform(0.28, 0.42) * (1.1 - 0.25 * f)
    return {"kvp": kvp, "soft": soft, "fat": soft * r.uniform(0.8, 0.9),
            "cort": soft * (4.2 - 1.9 * f) * r.uniform(0.9, 1.1),
            "canc": soft * (1.9 - 0.5 * f) * r.uniform(0.9, 1.1), "lung": 0.0, "cart": soft * r.uniform(1.05, 1.3)}


def project(scene, X0, Y0, s, H, W, lung_mu):
    """Line integrals of attenuation on an H x W grid (pixel size 1/s)."""
    X = X0 + (np.arange(W) + 0.5) / s
    Y = Y0 + (np.arange(H) + 0.5) / s
    Xg, Yg = np.meshgrid(X, Y)
    A = np.zeros((H, W))
    iv = {}
    for name, cv, M, mu in scene.ell:
        iv[name] = _ell_interval(cv, M, Xg, Yg)
        if mu:
            A += mu * (iv[name][1] - iv[name][0])
    cav = iv["cavity"]
    heart = _hull([iv[k] for k in iv if k.startswith("heart")])
    dome = iv["dome"]
    ch = _inter(cav, heart)
    lung_len = (cav[1] - cav[0]) - _overlap(cav, heart) - _overlap(cav, dome) + _overlap(ch, dome)
    A += (lung_mu - scene.mu_soft) * np.clip(lung_len, 0, None)
    _render_small_ellipsoids(scene.small, X0, Y0, s, H, W, A)
    _render_cylinders(scene.cyl, X0, Y0, s, H, W, A)
    return A


def _gblur(a, sigma):
    return ndimage.gaussian_filter(a, sigma, mode="nearest") if sigma > 0.05 else a


def image_chain(A, r, s, r2=None):
    """Attenuation line integrals -> processed DR image in 0..1 (bone bright).

    With r2 (world 2): more dose (less quantum noise) and the strong
    dynamic-range compression of clinical DR processing (the image minus a
    share of its own large-scale mean), which lifts the lungs and flattens
    the body so that the thorax fills the grey range the way exported
    clinical images do."""
    H, W = A.shape
    A = np.clip(A, 0, None)
    # Heel effect: intensity falls ~10-25 % across the anode-cathode axis.
    ramp = np.linspace(-0.5, 0.5, W if r.random() < 0.5 else H)
    heel = 1 - r.uniform(0.0, 0.25) * (ramp + 0.5)
    heel = heel[None, :] if len(heel) == W else heel[:, None]
    I = np.exp(-A) * heel
    # Scatter: a broad blur of the primary; a grid removes most of it.
    grid = r.random() < 0.7
    spr = r.uniform(0.1, 0.45) if grid else r.uniform(0.5, 1.6)
    I = I + spr * _gblur(I, max(H, W) * r.uniform(0.04, 0.1)) * float(np.mean(np.exp(-A)))
    if grid and r.random() < 0.35:
        f = r.uniform(0.25, 0.48)
        gl = 1 - r.uniform(0.01, 0.05) * 0.5 * (1 + np.sin(2 * math.pi * f * np.arange(W if r.random() < 0.5 else H)))
        I = I * (gl[None, :] if len(gl) == W else gl[:, None])
    # Quantum noise (Poisson, Gaussian approximation) then detector blur.
    n0 = r.uniform(300, 6000)
    if r2 is not None:
        n0 = r2.uniform(1500, 20000)
    I = I + np.sqrt(np.clip(I, 1e-6, None) / n0) * r.standard_normal(I.shape)
    I = _gblur(I, r.uniform(0.3, 1.2))
    # DR post-processing: log, window on the body, multi-scale enhancement, LUT.
    P = -np.log(np.clip(I, 1e-4, None))
    lo, hi = np.percentile(P, [r.uniform(0.5, 8), r.uniform(98.5, 99.95)])
    P = (P - lo) / max(hi - lo, 1e-3)
    if r2 is not None:
        k = r2.uniform(0.25, 0.7)
        P = P - k * (_gblur(P, max(H, W) * r2.uniform(0.04, 0.1)) - float(np.mean(P)))
        lo2, hi2 = np.percentile(P, [r2.uniform(0.5, 5), r2.uniform(99, 99.95)])
        P = (P - lo2) / max(hi2 - lo2, 1e-3)
    for sig, amt in ((r.uniform(1, 2.5), r.uniform(0, 0.5)), (r.uniform(4, 10), r.uniform(0, 0.6)),
                     (r.uniform(15, 40), r.uniform(0, 0.9))):
        sig = sig * max(H, W) / 512
        P = P + amt * (P - _gblur(P, sig))
    lut = r.choice(["sigmoid", "gamma", "linear"])
    if lut == "sigmoid":
        k = r.uniform(3, 8)
        c = r.uniform(0.4, 0.6)
        P = 1 / (1 + np.exp(-k * (P - c)))
        P = (P - 1 / (1 + math.exp(k * c))) / (1 / (1 + math.exp(-k * (1 - c))) - 1 / (1 + math.exp(k * c)))
    elif lut == "gamma":
        P = np.clip(P, 0, 1) ** r.uniform(0.6, 1.6)
    return np.clip(P, 0, 1)


# ---------------------------------------------------------------------------
# Presentation
# ---------------------------------------------------------------------------


def _tint(g, name, r):
    """Grey 0..1 -> RGB uint8 with a viewer's colour tint."""
    if name == "grey":
        rgb = np.stack([g, g, g], -1)
    elif name == "blue":
        lift = r.uniform(0.02, 0.1)
        rgb = np.stack([g * r.uniform(0.82, 0.95), g * r.uniform(0.88, 0.98), g * 0.9 + lift + 0.04], -1)
    elif name == "green":
        rgb = np.stack([g * r.uniform(0.8, 0.92), g * 0.95 + r.uniform(0.02, 0.08), g * r.uniform(0.8, 0.92)], -1)
    else:  # sepia
        rgb = np.stack([g * 0.95 + 0.06, g * 0.85 + 0.04, g * 0.68 + 0.02], -1)
    return (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)


def _annotate(im, r, pts_px):
    """Burned-in text, side markers, rulers and reader's annotation lines."""
    w, h = im.size
    d = ImageDraw.Draw(im)
    col = (255, 255, 255) if im.mode == "RGB" else 255
    if r.random() < 0.6:
        sz = int(max(w, h) * r.uniform(0.025, 0.05))
        x, y = int(r.uniform(0.02, 0.9) * w), int(r.uniform(0.02, 0.9) * h)
        txt = str(r.choice(["L", "R", "LT", "RT", "R LAT", "L LAT", "LAT"]))
        d.text((x, y), txt, fill=col, font=load_font(sz))
    if r.random() < 0.5:
        sz = int(max(w, h) * r.uniform(0.012, 0.025))
        lines = [str(r.choice(["VETERINARY HOSPITAL", "ANIMAL CLINIC", "Small Animal", "VET REFERRAL CENTRE"])),
                 f"ID {r.integers(1000, 99999)}  {r.choice(['CANINE', 'FELINE', 'K9', 'DOG', 'CAT'])}",
                 f"{r.integers(60, 100)} kV  {r.uniform(2, 12):.1f} mAs"]
        x, y = int(r.choice([0.02, 0.62]) * w), int(r.choice([0.02, 0.86]) * h)
        for i, t in enumerate(lines[: int(r.integers(1, 4))]):
            d.text((x, y + i * (sz + 2)), t, fill=col, font=load_font(sz))
    if r.random() < 0.2:  # a ruler with ticks
        x0, y0 = int(r.uniform(0.05, 0.6) * w), int(r.uniform(0.05, 0.95) * h)
        ln = int(r.uniform(0.15, 0.35) * w)
        d.line([(x0, y0), (x0 + ln, y0)], fill=col, width=max(1, w // 300))
        for k in range(11):
            xx = x0 + k * ln // 10
            d.line([(xx, y0), (xx, y0 - (8 if k % 5 == 0 else 4) * max(1, w // 400))], fill=col, width=1)
    if r.random() < 0.2:  # a reader's measurement drawn over the anatomy
        c2 = (255, 255, 0) if im.mode == "RGB" and r.random() < 0.5 else col
        a = pts_px["heart_top"] + r.normal(0, 0.01 * w, 2)
        b = pts_px["heart_bottom"] + r.normal(0, 0.01 * w, 2)
        d.line([tuple(a), tuple(b)], fill=c2, width=max(1, w // 250))
        a = pts_px["heart_right"] + r.normal(0, 0.01 * w, 2)
        b = pts_px["heart_left"] + r.normal(0, 0.01 * w, 2)
        d.line([tuple(a), tuple(b)], fill=c2, width=max(1, w // 250))
    if r.random() < 0.1:  # an arrow or circle somewhere
        x, y = r.uniform(0.1, 0.9) * w, r.uniform(0.1, 0.9) * h
        rad = r.uniform(0.02, 0.06) * w
        d.ellipse([x - rad, y - rad, x + rad, y + rad], outline=col, width=max(1, w // 300))


def _film_scan(g, r):
    """Scanned film: grain, uneven backlight, a film edge."""
    H, W = g.shape
    yy, xx = np.mgrid[0:H, 0:W]
    vign = 1 - r.uniform(0.05, 0.25) * (((xx - W / 2) / W) ** 2 + ((yy - H / 2) / H) ** 2) * 2
    g = g * vign + r.normal(0, r.uniform(0.01, 0.03), g.shape)
    return np.clip(g, 0, 1)


def _quad_inverse(quad, w, h, pts):
    """Output pixel of each input point under PIL's QUAD transform (Newton on
    the bilinear map from the output rectangle to the input quadrilateral)."""
    ul, ll, lr, ur = (np.array(quad[i:i + 2], float) for i in range(0, 8, 2))
    out = {}
    for k, p in pts.items():
        u, v = p[0] / w, p[1] / h
        for _ in range(20):
            f = ul * (1 - u) * (1 - v) + ll * (1 - u) * v + lr * u * v + ur * u * (1 - v) - p
            du = -ul * (1 - v) - ll * v + lr * v + ur * (1 - v)
            dv = -ul * (1 - u) + ll * (1 - u) + lr * u - ur * u
            J = np.column_stack([du, dv])
            step = np.linalg.solve(J, f)
            u, v = u - step[0], v - step[1]
        out[k] = np.array([u * w, v * h])
    return out


def _lightbox_photo(rgb, r, truth):
    """A phone photo of a film on a lightbox: mild perspective, cast, glare,
    blur. The truth landmarks follow the perspective (updated in place)."""
    im = Image.fromarray(rgb)
    w, h = im.size
    m = r.uniform(0.0, 0.04, 8) * np.array([w, h] * 4)
    quad = (m[0], m[1], m[2], h - m[3], w - m[4], h - m[5], w - m[6], m[7])
    im = im.transform((w, h), Image.QUAD, quad, Image.BILINEAR)
    truth.update(_quad_inverse(quad, w, h, truth))
    a = np.asarray(im).astype(np.float32) / 255
    cast = r.uniform(0.9, 1.08, 3)
    yy, xx = np.mgrid[0:h, 0:w]
    gx, gy = r.uniform(0, w), r.uniform(0, h)
    glare = r.uniform(0, 0.25) * np.exp(-(((xx - gx) / (0.3 * w)) ** 2 + ((yy - gy) / (0.3 * h)) ** 2))
    a = a * cast + glare[..., None]
    im = Image.fromarray((np.clip(a, 0, 1) * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(r.uniform(0.3, 1.5)))
    return np.asarray(im)


def _collimate(g, r):
    """Collimation borders: black (shuttered) or white (unexposed film) bands."""
    H, W = g.shape
    val = 0.0 if r.random() < 0.6 else 1.0
    out = g.copy()
    for side in range(4):
        if r.random() < 0.35:
            k = int(r.uniform(0.01, 0.06) * (W if side < 2 else H))
            if side == 0:
                out[:, :k] = val
            elif side == 1:
                out[:, W - k:] = val
            elif side == 2:
                out[:k, :] = val
            else:
                out[H - k:, :] = val
    return out


# ---------------------------------------------------------------------------
# generate
# ---------------------------------------------------------------------------


def _field_of_view(pt, r, pts_body):
    """Anatomy window (x0, y0, x1, y1) in body units: neck to abdomen, any crop."""
    lm = np.array(list(pts_body.values()))
    lx0, ly0 = lm.min(0)
    lx1, ly1 = lm.max(0)
    tight = r.random() < 0.6
    if tight:  # cut neck and abdomen, as in tightly cropped exports
        x0 = lx0 - r.uniform(0.6, 2.5)
        x1 = lx1 + r.uniform(0.6, 3.0)
        y0 = ly0 - r.uniform(0.6, 2.0)
        y1 = ly1 + r.uniform(0.5, 2.0)
    else:
        x0 = r.uniform(-4.5, -0.5)
        x1 = r.uniform(max(12.0, lx1 + 1.0), 19.0)
        y0 = float(pt.spine_y(6)) - pt.body_h - r.uniform(2.0, 5.5)
        y1 = float(pt.sternum_y(7)) + r.uniform(0.6, 3.5)
    return x0, y0, x1, y1


def _draw_patient(r, heldout, r2=None, r3=None):
    """Draw a patient until its heart is plausible (VHS 6-15, VLAS 0.8-4.5):
    (patient, coefficients, scene, landmarks in view-frame units, vhs, vlas,
    the heart chambers' ellipsoids (centre, axes, rotation))."""
    for _ in range(30):
        pt = Patient(r, heldout, r2, r3)
        mu = attenuation_coefficients(r)
        mu["lung"] = mu["soft"] * (0.32 - 0.14 * pt.resp)
        scene, parts, carina, meta = build(pt, r, mu)
        scene.mu_soft = mu["soft"]
        lmh = heart_landmarks(scene, parts, carina, meta["cvc_y"])
        if lmh is None:
            continue
        T = pt.endplate_x
        A3 = pt.body_axis_point(T[3] + 0.075 * (T[4] - T[3]), 0.5)
        B3 = pt.body_axis_point(T[9] - 0.075 * (T[9] - T[8]), 0.5)
        pts = dict(zip(LANDMARKS[:5], lmh))
        pts["Vertebra A"], pts["Vertebra B"] = scene.view(A3)[:2], scene.view(B3)[:2]
        vhs, vlas = measure(pts)
        if 6.0 < vhs < 15.0 and 0.8 < vlas < 4.5:
            return pt, mu, scene, pts, vhs, vlas, parts
    raise RuntimeError("xraysim: no plausible heart in 30 draws")


def anatomy(seed, heldout=False):
    """The exact landmarks of one simulated patient, in vertebral units of the
    projected view frame (head left, y ventral), without rendering an image:
    (dict name -> [x, y], meta). The same draw as generate(seed)."""
    pt, _, _, pts, vhs, vlas, _ = _draw_patient(np.random.default_rng(seed), heldout)
    return pts, {"vhs": vhs, "vlas": vlas, "kind": pt.kind, "pattern": pt.pattern}


def _world_rng(seed, world):
    """World 2's own random stream for seed (None in world 1; world 3 is
    world 2's patient, so it has the same stream)."""
    if world not in WORLDS:
        raise ValueError(f"xraysim: unknown world {world!r} (one of {WORLDS})")
    return np.random.default_rng([int(seed), 2]) if world in ("xraysim2", "xraysim3") else None


def _world3_rng(seed, world):
    """World 3's own random stream for seed (None in worlds 1 and 2)."""
    return np.random.default_rng([int(seed), 3]) if world == "xraysim3" else None


def heart_mask(scene, parts, X0, Y0, s, H, W):
    """The projected union of the heart chambers on the output pixel grid
    (float 0/1 [H,W]): the silhouette heart_landmarks measures, sampled at
    pixel centres."""
    X, Y = np.meshgrid(X0 + (np.arange(W) + 0.5) / s, Y0 + (np.arange(H) + 0.5) / s)
    mask = np.zeros((H, W), bool)
    for c, ax, Rb in parts:
        cv, M = scene._ell_view(c, ax, Rb)
        t0, t1 = _ell_interval(cv, M, X, Y)
        mask |= t1 > t0
    return mask.astype(np.float64)


def generate(seed, w=None, h=None, heldout=False, flip=None, present_opts=None, long_side=None, world="xraysim",
             with_mask=False):
    """One simulated radiograph: (PIL image, truth dict in pixels, meta).

    With w and h the output has exactly that size; otherwise the simulator
    picks an aspect that fits its field of view, with the given long side
    (or a random one from 280 to 900 px). The image mode is "L" for grey presentations and "RGB" for
    tinted ones. Truth landmarks are in output pixels. world is one of WORLDS.
    with_mask adds meta["heart_mask"], the heart's silhouette (uint8 0-255,
    the output image's size; None where a lightbox photo warped the image),
    moved with the image; the image itself is the same with or without it.
    """
    r = np.random.default_rng(seed)
    r2 = _world_rng(seed, world)
    pt, mu, scene, pts, vhs, vlas, parts = _draw_patient(r, heldout, r2, _world3_rng(seed, world))
    x0, y0, x1, y1 = _field_of_view(pt, r, pts)
    sized = (w, h) if w is not None and h is not None else None
    if sized is None:
        long_side = long_side or int(r.integers(280, 900))
        asp = (x1 - x0) / (y1 - y0)
        w, h = (long_side, max(64, int(long_side / asp))) if asp >= 1 else (max(64, int(long_side * asp)), long_side)
    # Fit the window into w x h (square pixels), centred.
    s = min(w / (x1 - x0), h / (y1 - y0))
    cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
    X0, Y0 = cx - w / (2 * s), cy - h / (2 * s)
    A = project(scene, X0, Y0, s, h, w, mu["lung"])
    g = image_chain(A, r, s, r2)
    truth = {k: np.array([(p[0] - X0) * s, (p[1] - Y0) * s]) for k, p in pts.items()}
    hm = heart_mask(scene, parts, X0, Y0, s, h, w) if with_mask else None
    g, truth, hm = _geometric(g, truth, r, flip, hm)
    g = _collimate(g, r) if r.random() < 0.3 else g
    im, presentation = _present(g, truth, r, heldout, present_opts or {}, thumbnail_ok=sized is None)
    meta = {"vhs": vhs, "vlas": vlas, "seed": int(seed), "width": im.size[0], "height": im.size[1],
            "kind": pt.kind, "pattern": pt.pattern, "kvp": round(mu["kvp"], 1),
            "rot_long_deg": round(math.degrees(pt.rot_long), 1), "presentation": presentation,
            "generator": world}
    if with_mask:
        if presentation["lightbox"]:
            hm = None
        else:
            hm = Image.fromarray(np.clip(hm * 255 + 0.5, 0, 255).astype(np.uint8), "L")
            hm = np.asarray(hm.resize(im.size, Image.BILINEAR) if hm.size != im.size else hm)
        meta["heart_mask"] = hm
    return im, {k: np.asarray(v, float) for k, v in truth.items()}, meta


def _geometric(g, truth, r, flip, mask=None):
    """Head-right flips and in-plane rotation (canvas kept, corners filled);
    mask (an array of g's shape, or None) moves with the image."""
    H, W = g.shape
    if flip is None:
        flip = r.random() < 0.4
    if flip:
        g = g[:, ::-1]
        mask = None if mask is None else mask[:, ::-1]
        truth = {k: np.array([W - p[0], p[1]]) for k, p in truth.items()}
    ang = r.normal(0, 5) if r.random() < 0.8 else r.uniform(-15, 15)
    if abs(ang) > 0.3:
        fill = 0.0 if r.random() < 0.7 else float(np.median(g[:4, :]))
        g = ndimage.rotate(g, ang, reshape=False, order=1, mode="constant", cval=fill)
        if mask is not None:
            mask = ndimage.rotate(mask, ang, reshape=False, order=1, mode="constant", cval=0.0)
        th = math.radians(ang)
        c, s_ = math.cos(th), math.sin(th)
        cx, cy = W / 2, H / 2
        # ndimage.rotate turns the content by +ang counter-clockwise on screen
        truth = {k: np.array([cx + c * (p[0] - cx) + s_ * (p[1] - cy), cy - s_ * (p[0] - cx) + c * (p[1] - cy)])
                 for k, p in truth.items()}
    return g, truth, mask


def _present(g, truth, r, heldout, opts, thumbnail_ok=True):
    """Grey or tinted export, film scan, lightbox photo, annotations, JPEG, thumbnail."""
    tints = TRAIN_TINTS + (HELDOUT_ONLY_TINTS if heldout else ())
    tint = opts.get("tint") or str(r.choice(tints, p=None if heldout else [0.55, 0.3, 0.15]))
    film = r.random() < 0.08
    if film:
        g = _film_scan(g, r)
    rgb = _tint(g, tint, r)
    lightbox = heldout and r.random() < 0.1 and opts.get("lightbox", True)
    if lightbox:
        rgb = _lightbox_photo(rgb, r, truth)
    im = Image.fromarray(rgb, "RGB")
    if r.random() < 0.7:
        _annotate(im, r, truth)
    if tint == "grey" and not lightbox:
        im = im.convert("L")
    # Thumbnails and JPEG artefacts.
    if r.random() < 0.12 and thumbnail_ok:
        w, h = im.size
        sc = 224 / max(w, h)
        im = im.resize((max(32, int(round(w * sc))), max(32, int(round(h * sc)))), Image.BILINEAR)
        for k in truth:
            truth[k] = truth[k] * np.array([im.size[0] / w, im.size[1] / h])
    if r.random() < 0.5:
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=int(r.integers(25, 95)))
        im = Image.open(io.BytesIO(buf.getvalue()))
        im.load()
    return im, {"tint": tint, "film": film, "lightbox": lightbox}


def other_view(seed, kind=None):
    """A radiograph that is NOT a lateral thorax, for the validity classifier's
    negatives and for evaluation: a VD/DV thorax (the beam along y), a lateral
    abdomen (the window moved caudal of the heart), or a limb.
    Returns (PIL image, kind)."""
    r = np.random.default_rng(seed)
    kind = kind or str(r.choice(["vd_thorax", "abdomen", "limb"]))
    if kind == "limb":
        return _limb(r), kind
    pt = Patient(r)
    mu = attenuation_coefficients(r)
    mu["lung"] = mu["soft"] * 0.25
    scene, parts, carina, meta = build(pt, r, mu)
    scene.mu_soft = mu["soft"]
    side = int(r.integers(280, 700))
    if kind == "vd_thorax":
        # Beam along y: swap y and z of every primitive (a dorsoventral view).
        P = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0]], float)
        scene.ell = [(n, c @ P, P @ M @ P, m) for n, c, M, m in scene.ell]
        scene.small = [(c @ P, P @ M @ P, m) for c, M, m in scene.small]
        scene.cyl = [(a @ P, b @ P, rr, m) for a, b, rr, m in scene.cyl]
        x0, x1 = r.uniform(-4, -1), r.uniform(12, 18)
        y0, y1 = -pt.half_w - r.uniform(1.5, 4), pt.half_w + r.uniform(1.5, 4)
    else:
        x0 = meta["dome_x"] + r.uniform(-1.0, 1.5)
        x1 = x0 + r.uniform(9, 14)
        y0 = float(pt.spine_y(10)) - r.uniform(2, 4)
        y1 = float(pt.sternum_y(10)) + r.uniform(1, 3)
    w = side
    h = max(64, int(side * (y1 - y0) / (x1 - x0)))
    s = min(w / (x1 - x0), h / (y1 - y0))
    X0, Y0 = 0.5 * (x0 + x1) - w / (2 * s), 0.5 * (y0 + y1) - h / (2 * s)
    A = project(scene, X0, Y0, s, h, w, mu["lung"])
    g = image_chain(A, r, s)
    if r.random() < 0.5:
        g = g.T.copy()
    tint = str(r.choice(TRAIN_TINTS))
    return Image.fromarray(_tint(g, tint, r), "RGB").convert("L" if tint == "grey" else "RGB"), kind


def _limb(r):
    """A lateral limb radiograph: long bones with joints in soft tissue."""
    w, h = int(r.integers(200, 500)), int(r.integers(400, 800))
    s = h / 14.0
    scene = Scene(0.0, 0.0, (0, 7, 0))
    mu = attenuation_coefficients(r)
    st = mu["soft"]
    x = r.uniform(-1, 1)
    pts = [np.array([x, -1.0, 0]), np.array([x + r.uniform(-1.5, 1.5), 6.5, 0]),
           np.array([x + r.uniform(-1.5, 1.5), 13.5, 0])]
    for a, b in zip(pts[:-1], pts[1:]):
        _shell(scene, a, b, r.uniform(0.35, 0.6), mu["cort"], mu["canc"], cort=0.35)
        scene.ellipsoid(0.5 * (a + b), [1.6, 4.2, 1.5], st, Rb=np.eye(3))
    for p in pts[1:2]:
        scene.ellipsoid(p, [0.8, 0.6, 0.7], mu["canc"])
    scene.ell = [("cavity", np.array([99.0, 99, 0]), np.eye(3) * 1e-4, 0.0),
                 ("dome", np.array([99.0, 99, 0]), np.eye(3) * 1e-4, 0.0),
                 ("heart0", np.array([99.0, 99, 0]), np.eye(3) * 1e-4, 0.0)] + \
                [("limb%d" % i, c, M, m) for i, (c, M, m) in enumerate(scene.small)]
    scene.small = []
    scene.mu_soft = st
    X0, Y0 = -w / (2 * s), 7 - h / (2 * s)
    A = project(scene, X0, Y0, s, h, w, 0.0)
    g = image_chain(A, r, s)
    return Image.fromarray((g * 255).astype(np.uint8), "L")


if __name__ == "__main__":
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/xraysim"
    os.makedirs(out, exist_ok=True)
    for s_ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 6):
        im, t, m = generate(s_)
        im.save(os.path.join(out, f"x{s_}.png"))
        print(s_, im.size, round(m["vhs"], 2), round(m["vlas"], 2), m["kind"], m["pattern"], m["presentation"])
