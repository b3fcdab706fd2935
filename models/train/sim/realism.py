#!/usr/bin/python3
"""Compare two folders of radiographs region by region (e.g. real against phantoms).

    python3 -m sim.realism REAL_DIR PHANTOM_DIR [--names real phantom] [--json OUT|-] [--recursive]

For each folder it prints the mean and the spread (standard deviation over
images) of a few statistics, the two folders side by side, their difference
(second minus first) and that difference over the pooled spread (z). It
needs no labels, so a clinic can point it at its own images: PNG, JPEG,
TIFF or BMP, grey or colour, 8 or 16 bit (DICOM is not read; export it
first).

Per image, all on one working copy:

1. Grey: colour is removed by luminance (0.299 R + 0.587 G + 0.114 B), so a
   viewer's display tint does not matter; an alpha channel is composited
   on black. Resized to a long side of 512 px (--size), since edge density
   and the spectrum depend on resolution, then stretched to [0, 1] by its
   0.5th and 99.5th percentiles.
2. Body (no labels, a heuristic): pixels are candidates for exclusion when
   they are near black (< 0.06: air around the patient), near white
   (> 0.94: collimation, a light border) or flat (standard deviation
   under 0.01 in a 5 x 5 window: a digital border, padding); candidate
   regions that touch the image edge are excluded. The body is the
   largest connected component of the rest after a 3 x 3 opening (two
   passes), holes filled. Its intensities are stretched again to [0, 1]
   by the body's own 1st and 99th percentiles: every statistic below is
   on the body's scale, so window and level matter little.
3. Regions, on a copy smoothed with a Gaussian of 1.5 px:
   lung = the darkest 22 % of body pixels (air-filled lung is the darkest
   tissue inside the body; where the frame shows the body's outline, the
   thin tissue along it and gas in the gut fall into this class too); bone = the body pixels (not lung) in the top
   10 % of the white top-hat response (the image minus its grey opening
   with a 15 px disc): thin bright ridges such as ribs, vertebral
   cortices and the sternum; heart / soft tissue = the rest of the body
   between the 35th and 85th percentiles of its intensities (the middle
   band: heart, vessels, mediastinum, diaphragm, soft tissue). These are
   intensity classes, not anatomy: "heart" also holds the other soft
   tissue, "bone" the brightest thin structures wherever they are.
4. Statistics: the 5th, 25th, 50th, 75th and 95th percentiles of the
   (body-stretched, unsmoothed) intensity in each region; edge density,
   the share of body pixels whose gradient magnitude (Sobel over 8 on a
   copy smoothed with a Gaussian of 1 px, intensity per pixel) exceeds
   0.05; and the slope of the radially averaged power spectrum on log-log
   axes, fitted between 0.01 and 0.25 cycles per pixel on the body's
   bounding box (pixels outside the body set to the body's mean, mean
   removed, Hann window). Natural images have slopes near -2; smoother
   images have steeper (more negative) slopes, noisier ones flatter.

--json OUT writes the per-folder means and spreads, the differences and
the per-image values (OUT "-": to standard output instead of the table).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
from PIL import Image
from scipy import ndimage

EXTENSIONS = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")
WORK_SIDE = 512
DARK, LIGHT = 0.06, 0.94          # near black / near white, after the first stretch
FLAT_STD = 0.01                   # a digital border's local standard deviation (5 x 5)
LUNG_SHARE = 0.22                 # darkest share of body pixels
BONE_SHARE = 0.10                 # top share of the white top-hat response
TOPHAT_DISC = 15                  # px, the opening's disc diameter
SOFT_BAND = (0.35, 0.85)          # percentiles of the body: the middle band
EDGE_THRESHOLD = 0.05             # gradient magnitude, body intensity per pixel
SPECTRUM_BAND = (0.01, 0.25)      # cycles per pixel
PERCENTILES = (5, 25, 50, 75, 95)
REGIONS = ("lung", "heart", "bone")


def load_grey(path):
    """Luminance of an image file as float64 (any bit depth), not rescaled."""
    with Image.open(path) as f:
        f.load()
        im = f.copy()
    if im.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        return np.asarray(im, np.float64)
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        im = im.convert("RGBA")
        bg = Image.new("RGBA", im.size, (0, 0, 0, 255))
        im = Image.alpha_composite(bg, im)
    a = np.asarray(im.convert("RGB"), np.float64)
    return 0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]


def working_copy(g, size=WORK_SIDE):
    """Resize so the long side is `size` (area average when shrinking) and
    stretch to [0, 1] by the 0.5th and 99.5th percentiles."""
    h, w = g.shape
    s = size / max(w, h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    im = Image.fromarray(g.astype(np.float32), "F")
    im = im.resize((nw, nh), Image.BOX if s < 1 else Image.BILINEAR)
    a = np.asarray(im, np.float64)
    lo, hi = np.percentile(a, [0.5, 99.5])
    return np.clip((a - lo) / max(hi - lo, 1e-9), 0, 1)


def body_mask(g):
    """The body (see the module docstring, step 2) of a [0, 1] image."""
    m = ndimage.uniform_filter(g, 5)
    sd = np.sqrt(np.clip(ndimage.uniform_filter(g * g, 5) - m * m, 0, None))
    cand = (g < DARK) | (g > LIGHT) | (sd < FLAT_STD)
    lab, n = ndimage.label(cand)
    edge = np.unique(np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]]))
    excluded = np.isin(lab, edge[edge > 0])
    keep = ndimage.binary_opening(~excluded, np.ones((3, 3), bool), iterations=2)
    lab, n = ndimage.label(keep)
    if n == 0:
        return np.zeros_like(g, bool)
    sizes = ndimage.sum(keep, lab, index=range(1, n + 1))
    body = lab == (1 + int(np.argmax(sizes)))
    return ndimage.binary_fill_holes(body)


def _disc(d):
    r = (d - 1) / 2
    y, x = np.mgrid[:d, :d]
    return (x - r) ** 2 + (y - r) ** 2 <= r * r + 0.5


def regions(gn, body):
    """Lung, heart (soft tissue) and bone masks of the body-stretched image."""
    gs = ndimage.gaussian_filter(gn, 1.5)
    vals = gs[body]
    lung = body & (gs <= np.quantile(vals, LUNG_SHARE))
    filled = np.where(body, gn, gn[body].mean())
    tophat = filled - ndimage.grey_opening(filled, footprint=_disc(TOPHAT_DISC))
    bone = body & ~lung & (tophat >= np.quantile(tophat[body], 1 - BONE_SHARE))
    lo, hi = np.quantile(vals, SOFT_BAND)
    heart = body & ~lung & ~bone & (gs >= lo) & (gs <= hi)
    return {"lung": lung, "heart": heart, "bone": bone}


def edge_density(gn, body, threshold=EDGE_THRESHOLD):
    gs = ndimage.gaussian_filter(gn, 1.0)
    mag = np.hypot(ndimage.sobel(gs, 1), ndimage.sobel(gs, 0)) / 8
    return float((mag[body] > threshold).mean())


def spectral_slope(gn, body, band=SPECTRUM_BAND):
    """Log-log slope of the radially averaged power spectrum over `band`."""
    ys, xs = np.nonzero(body)
    a = gn[ys.min():ys.max() + 1, xs.min():xs.max() + 1].copy()
    m = body[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    mean = a[m].mean()
    a[~m] = mean
    a -= mean
    h, w = a.shape
    a *= np.outer(np.hanning(h), np.hanning(w))
    p = np.abs(np.fft.fft2(a)) ** 2
    fy, fx = np.fft.fftfreq(h)[:, None], np.fft.fftfreq(w)[None, :]
    f = np.hypot(fy, fx).ravel()
    p = p.ravel()
    edges = np.geomspace(band[0], band[1], 25)
    lf, lp = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (f >= lo) & (f < hi)
        if sel.sum() >= 4:
            lf.append(math.log10(math.sqrt(lo * hi)))
            lp.append(math.log10(p[sel].mean() + 1e-30))
    if len(lf) < 3:
        return float("nan")
    return float(np.polyfit(lf, lp, 1)[0])


def image_stats(g, size=WORK_SIDE):
    """All statistics of one grey image (float array, any range)."""
    w = working_copy(g, size)
    body = body_mask(w)
    if body.sum() < 0.05 * body.size:
        raise ValueError("no body found (under 5 % of the image)")
    lo, hi = np.percentile(w[body], [1, 99])
    gn = np.clip((w - lo) / max(hi - lo, 1e-9), 0, 1)
    out = {"body_share": float(body.mean())}
    for name, m in regions(gn, body).items():
        v = gn[m] if m.any() else np.array([np.nan])
        for q, x in zip(PERCENTILES, np.percentile(v, PERCENTILES)):
            out[f"{name}_p{q:02d}"] = float(x)
    out["edge_density"] = edge_density(gn, body)
    out["spectrum_slope"] = spectral_slope(gn, body)
    return out


def list_images(folder, recursive=False):
    paths = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        paths += [os.path.join(root, f) for f in sorted(files) if f.lower().endswith(EXTENSIONS)]
        if not recursive:
            break
    return paths


def folder_stats(folder, size=WORK_SIDE, recursive=False, log=None):
    """Per-image statistics of every readable image in a folder; files that
    cannot be read (or show no body) are skipped with a line on log
    (standard error)."""
    log = log or sys.stderr
    rows = []
    for p in list_images(folder, recursive):
        try:
            s = image_stats(load_grey(p), size)
        except Exception as e:  # unreadable file, no body: skip it, say so
            print(f"realism: skipped {p}: {e}", file=log)
            continue
        s["file"] = os.path.relpath(p, folder)
        rows.append(s)
    return rows


def keys():
    ks = [f"{r}_p{q:02d}" for r in REGIONS for q in PERCENTILES]
    return ks + ["edge_density", "spectrum_slope", "body_share"]


def summarise(rows):
    out = {"n": len(rows), "mean": {}, "sd": {}}
    for k in keys():
        v = np.array([r[k] for r in rows], float)
        v = v[np.isfinite(v)]
        out["mean"][k] = float(v.mean()) if len(v) else float("nan")
        out["sd"][k] = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return out


def compare(a, b):
    """Differences b - a and z = difference over the pooled spread."""
    diff, z = {}, {}
    for k in keys():
        d = b["mean"][k] - a["mean"][k]
        pooled = math.sqrt((a["sd"][k] ** 2 + b["sd"][k] ** 2) / 2)
        diff[k] = d
        z[k] = d / pooled if pooled > 0 else float("nan")
    return diff, z


def table(names, sa, sb, diff, z):
    label = {"edge_density": "edge density", "spectrum_slope": "spectrum slope (log-log)",
             "body_share": "body share of image"}
    ca = f"{names[0]} (n={sa['n']})"
    cb = f"{names[1]} (n={sb['n']})"
    lines = [f"{'statistic':<26} {ca:>18} {cb:>18} {'diff (2nd-1st)':>15} {'z':>6}"]
    prev = None
    for k in keys():
        region = k.split("_p")[0] if "_p" in k else None
        if prev is not None and (region or "") != prev:
            lines.append("")
        prev = region or ""
        name = f"{region} p{k.split('_p')[1]}" if region else label[k]
        cell = lambda s: f"{s['mean'][k]:.3f} ± {s['sd'][k]:.3f}"
        lines.append(f"{name:<26} {cell(sa):>18} {cell(sb):>18} {diff[k]:>+15.3f} {z[k]:>+6.1f}")
    lines.append("")
    lines.append("intensities: body-stretched [0, 1] (1st-99th percentile of the body); ± is the spread over images;")
    lines.append("z: difference over the pooled spread. Regions are intensity classes, not anatomy (realism.py docstring).")
    return "\n".join(lines)


def main(argv=None, out=sys.stdout):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("first", help="folder of images, e.g. real radiographs")
    ap.add_argument("second", help="folder of images, e.g. phantoms")
    ap.add_argument("--names", nargs=2, metavar=("FIRST", "SECOND"), help="column names (default: folder names)")
    ap.add_argument("--json", metavar="OUT", help="write the figures as JSON to OUT ('-': standard output, no table)")
    ap.add_argument("--size", type=int, default=WORK_SIDE, help="working long side in pixels (default %(default)s)")
    ap.add_argument("--recursive", action="store_true", help="include subfolders")
    a = ap.parse_args(argv)
    names = a.names or [os.path.basename(os.path.normpath(p)) or p for p in (a.first, a.second)]
    rows = [folder_stats(p, a.size, a.recursive) for p in (a.first, a.second)]
    for p, r in zip((a.first, a.second), rows):
        if not r:
            ap.error(f"no readable images in {p}")
    sa, sb = summarise(rows[0]), summarise(rows[1])
    diff, z = compare(sa, sb)
    if a.json:
        doc = {"names": names, "folders": {names[0]: sa, names[1]: sb}, "diff": diff, "z": z,
               "images": {names[0]: rows[0], names[1]: rows[1]}, "work_side": a.size}
        text = json.dumps(doc, indent=1, allow_nan=True)
        if a.json == "-":
            print(text, file=out)
            return 0
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(table(names, sa, sb, diff, z), file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
