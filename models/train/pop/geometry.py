"""Plane geometry shared by the screen-photo generators (pop_composites,
pop_variety, pop_scene3d, pop_traindata): homographies, camera rotations,
hand shake and motion blur kernels. A leaf: it imports no other module of
this package, so the generators import it and not each other.

SYNTHETIC DATA: everything here serves the simulated screen photos."""
import math

import numpy as np


def homography(src, dst):
    """3x3 H with dst ~ H @ src for four point pairs (DLT, exact)."""
    A, b = [], []
    for (x, y), (u, v) in zip(src, dst):
        A.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        b.append(u)
        A.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        b.append(v)
    h = np.linalg.solve(np.array(A, float), np.array(b, float))
    return np.append(h, 1.0).reshape(3, 3)


def apply_h(H, pts):
    """Map points through the homography H (N x 2 in, N x 2 out)."""
    pts = np.atleast_2d(np.asarray(pts, float))
    q = np.c_[pts, np.ones(len(pts))] @ H.T
    return q[:, :2] / q[:, 2:3]


def rot(yaw, pitch, roll):
    """The camera rotation Rz(roll) Rx(pitch) Ry(yaw)."""
    cy, sy = math.cos(yaw), math.sin(yaw)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cr, sr = math.cos(roll), math.sin(roll)
    Ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    Rx = np.array([[1, 0, 0], [0, cp, -sp], [0, sp, cp]])
    Rz = np.array([[cr, -sr, 0], [sr, cr, 0], [0, 0, 1]])
    return Rz @ Rx @ Ry


def shaken(pose, rng, amount=1.0):
    """A copy of a camera pose (any object with yaw, pitch, roll, cx, cy and
    share) moved by a hand's shake; amount scales the shake."""
    p = type(pose).__new__(type(pose))
    p.__dict__.update(pose.__dict__)
    p.yaw += math.radians(rng.normal(0, 0.8 * amount))
    p.pitch += math.radians(rng.normal(0, 0.8 * amount))
    p.roll += math.radians(rng.normal(0, 0.6 * amount))
    p.cx += rng.normal(0, 0.008 * amount)
    p.cy += rng.normal(0, 0.008 * amount)
    p.share *= math.exp(rng.normal(0, 0.015 * amount))
    return p


def motion_kernel(length, angle):
    """A normalised line kernel of the given length (pixels) and angle
    (radians): linear motion blur."""
    n = max(3, int(math.ceil(length)) | 1)
    k = np.zeros((n, n), np.float32)
    c = n // 2
    for t in np.linspace(-length / 2, length / 2, 4 * n):
        x, y = c + t * math.cos(angle), c + t * math.sin(angle)
        k[int(round(y)) % n, int(round(x)) % n] += 1
    return k / k.sum()
