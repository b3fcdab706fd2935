"""Tests for sim/realism.py on small images generated here."""
import io
import json
import os
import sys
import tempfile
import unittest

import numpy as np
from PIL import Image
from scipy import ndimage

from sim import realism


def fake_radiograph(seed=0, w=300, h=240, border=8, blur=1.0):
    """A radiograph-like grey image in [0, 1]: black air around a body
    (soft tissue 0.55), a dark lung field (0.2), a mid-grey heart (0.6) over
    it, thin bright ribs (0.9) and a spine band, detector noise, and a white
    border (a viewer's frame)."""
    r = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(float)
    g = np.full((h, w), 0.02)
    body = ((x - w / 2) / (0.46 * w)) ** 2 + ((y - h / 2) / (0.40 * h)) ** 2 <= 1
    g[body] = 0.55
    lung = ((x - 0.55 * w) / (0.26 * w)) ** 2 + ((y - 0.5 * h) / (0.22 * h)) ** 2 <= 1
    g[lung] = 0.2
    heart = ((x - 0.42 * w) / (0.12 * w)) ** 2 + ((y - 0.58 * h) / (0.14 * h)) ** 2 <= 1
    g[heart] = 0.6
    g[body & (np.abs(y - 0.25 * h) < 0.04 * h)] = 0.8          # spine
    for k in range(7):                                       # ribs: thin bright arcs
        cx = 0.25 * w + k * 0.08 * w
        rib = np.abs(np.hypot(x - cx, (y - 0.9 * h) * 0.8) - 0.55 * h) < 1.5
        g[body & rib & (y > 0.28 * h)] = 0.9
    g = ndimage.gaussian_filter(g, blur) + r.normal(0, 0.02, g.shape)
    g = np.clip(g, 0, 1)
    if border:
        g[:border], g[-border:], g[:, :border], g[:, -border:] = 1, 1, 1, 1
    return g, body, lung, heart


def save(path, g, tint=False):
    a = (np.clip(g, 0, 1) * 255).round().astype(np.uint8)
    if tint:  # a blue display tint: a per-channel colour ramp
        lo, hi = np.array([8, 12, 26]), np.array([226, 234, 255])
        rgb = lo + (hi - lo) * (a[..., None] / 255.0)
        Image.fromarray(rgb.round().astype(np.uint8), "RGB").save(path)
    else:
        Image.fromarray(a, "L").save(path)


def power_law_noise(n, beta, seed=0):
    """An n x n image whose power spectrum falls as f^-beta."""
    r = np.random.default_rng(seed)
    fy, fx = np.fft.fftfreq(n)[:, None], np.fft.fftfreq(n)[None, :]
    f = np.hypot(fy, fx)
    f[0, 0] = 1
    amp = f ** (-beta / 2)
    amp[0, 0] = 0
    z = np.fft.ifft2(amp * np.exp(2j * np.pi * r.random((n, n)))).real
    return 0.2 + 0.6 * (z - z.min()) / (z.max() - z.min())


class RealismTest(unittest.TestCase):
    def test_body_excludes_border_and_background(self):
        g, body, _, _ = fake_radiograph()
        w = realism.working_copy(g * 255, 300)
        m = realism.body_mask(w)
        self.assertFalse(m[:8].any() or m[:, :8].any() or m[-8:].any() or m[:, -8:].any())
        self.assertFalse(m[12, 12])                      # black air in the corner
        self.assertTrue(m[120, 150])                     # inside the body
        # The body found agrees with the drawn one.
        inter = (m & body).sum() / (m | body).sum()
        self.assertGreater(inter, 0.9)

    def test_regions_ordered(self):
        g, _, lung, heart = fake_radiograph()
        s = realism.image_stats(g * 255, 300)
        self.assertLess(s["lung_p50"], s["heart_p50"])
        self.assertLess(s["heart_p50"], s["bone_p50"])
        for r in realism.REGIONS:
            vals = [s[f"{r}_p{q:02d}"] for q in realism.PERCENTILES]
            self.assertEqual(vals, sorted(vals))
        # The darkest class lies mostly in the drawn lung (the rest is the
        # body's blurred outline), the middle band mostly outside it.
        w = realism.working_copy(g * 255, 300)
        body = realism.body_mask(w)
        lo, hi = np.percentile(w[body], [1, 99])
        rg = realism.regions(np.clip((w - lo) / (hi - lo), 0, 1), body)
        self.assertGreater((rg["lung"] & lung).sum() / rg["lung"].sum(), 0.7)
        self.assertLess((rg["heart"] & lung).sum() / rg["heart"].sum(), 0.2)

    def test_tint_does_not_matter(self):
        g, _, _, _ = fake_radiograph(seed=1)
        with tempfile.TemporaryDirectory() as d:
            save(os.path.join(d, "grey.png"), g)
            save(os.path.join(d, "tinted.png"), g, tint=True)
            a = realism.image_stats(realism.load_grey(os.path.join(d, "grey.png")))
            b = realism.image_stats(realism.load_grey(os.path.join(d, "tinted.png")))
        for k in realism.keys():
            tol = 0.15 if k == "spectrum_slope" else 0.03
            self.assertAlmostEqual(a[k], b[k], delta=tol, msg=k)

    def test_spectrum_slope(self):
        body = np.ones((256, 256), bool)
        for beta in (2.0, 3.0):
            s = realism.spectral_slope(power_law_noise(256, beta), body)
            self.assertAlmostEqual(s, -beta, delta=0.3)

    def test_edge_density_falls_with_blur(self):
        sharp = realism.image_stats(fake_radiograph(blur=0.5)[0] * 255, 300)
        soft = realism.image_stats(fake_radiograph(blur=3.0)[0] * 255, 300)
        self.assertGreater(sharp["edge_density"], soft["edge_density"])
        self.assertGreater(sharp["spectrum_slope"], soft["spectrum_slope"])
        self.assertTrue(0 <= soft["edge_density"] <= 1)

    def test_cli_table_and_json(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "real"), os.path.join(d, "phantom")
            os.makedirs(a)
            os.makedirs(b)
            for i in range(3):
                save(os.path.join(a, f"r{i}.png"), fake_radiograph(seed=i, blur=0.7)[0], tint=True)
                save(os.path.join(b, f"p{i}.jpg"), fake_radiograph(seed=10 + i, blur=2.0)[0])
            with open(os.path.join(b, "notes.txt"), "w") as f:
                f.write("not an image")
            with open(os.path.join(b, "broken.png"), "wb") as f:
                f.write(b"\x89PNG broken")
            out = io.StringIO()
            js = os.path.join(d, "stats.json")
            err = io.StringIO()
            stderr, sys.stderr = sys.stderr, err
            try:
                self.assertEqual(realism.main([a, b, "--json", js], out=out), 0)
                out2 = io.StringIO()
                realism.main([a, b, "--json", "-", "--names", "A", "B"], out=out2)
            finally:
                sys.stderr = stderr
            text = out.getvalue()
            self.assertIn("real (n=3)", text)
            self.assertIn("phantom (n=3)", text)
            for row in ("lung p50", "heart p95", "bone p05", "edge density", "spectrum slope"):
                self.assertIn(row, text)
            self.assertIn("broken.png", err.getvalue())
            with open(js) as f:
                doc = json.load(f)
            self.assertEqual(doc["names"], ["real", "phantom"])
            self.assertEqual(doc["folders"]["real"]["n"], 3)
            k = "edge_density"
            self.assertAlmostEqual(doc["diff"][k], doc["folders"]["phantom"]["mean"][k] - doc["folders"]["real"]["mean"][k])
            self.assertEqual(len(doc["images"]["phantom"]), 3)
            self.assertEqual(json.loads(out2.getvalue())["names"], ["A", "B"])


if __name__ == "__main__":
    unittest.main()
