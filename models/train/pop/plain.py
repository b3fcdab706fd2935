#!/usr/bin/python3
"""Plain-file negatives for the PoP presence model (issue 14). SYNTHETIC DATA.

A radiograph file, however it was exported, is not a photo of a screen;
neither is a screenshot of a viewer. The first presence model saw few such
files (450 of its 1,000 negatives, grey or tinted by a colour ramp) and
took 14 of the 320 plain files of the cardiac held-out set for screen
photos (tinted exports, several with rotated, filled corners). This script
renders presence negatives in every presentation the generators make:

  xraysim  radiographs rendered here (training seeds 2,000,000+, below
           xraysim.HELDOUT_SEED_BASE) and the PoP radiograph pool, shown
           again through xraysim's own presentation (grey, blue, sepia and
           green tints, scanned film, phone photos of a lightbox, burned-in
           text, rulers, reader's lines, thumbnails, JPEG), or through the
           radiograph_export presentation of pop/composites.py (colour
           ramps, tight crops, thin borders, coloured measurement lines)
  phantom  sim/phantom.py radiographs (training ranges, seeds 2,100,000+) with
           the same presentations
  xraysim2 --world2 N radiographs of the simulator's second world
           (sim/xraysim.py world "xraysim2", seeds 2,400,000+): its epaxial band
           and sternum gave tinted files screen-like candidates (docs/pop.md)
  screenshot  a viewer's screen content saved as a file, no monitor, no
           camera (pop_variety.content: full screen, dark viewer, hanging
           protocol, windowed; the light viewer stays left out, as in the
           screen photos, for the leave-one-family-out check), sometimes
           cropped to a window or scaled down, PNG or JPEG

Each file goes through what engine/pop does to a frame before the presence
model sees it: long side 512 px, then stretched to 160 x 160 (area
averaging). Output: x160 uint8 N x 3 x 160 x 160, present float N (all 0),
kind (str N).

The new renders are cached (--cache) so a second run costs seconds.

The cache remembers how it was made (renders, phantoms, world-2 renders,
seed0) and is rendered again when asked for something else.

Usage: python3 -m pop.plain OUT.npz --n 2000 [--renders 240] [--phantoms 120] [--world2 0] [--seed0 2000000]
"""
import argparse
import io
import os
from multiprocessing import Pool

import numpy as np
from PIL import Image

from sim import phantom
from pop import composites as pc
from pop import variety as pv
from sim import xraysim

WORK, SIDE = 512, 160
XRAYSIM_SEED0 = 2_000_000  # training seeds: below xraysim.HELDOUT_SEED_BASE
PHANTOM_SEED0 = 2_100_000  # below phantom.HELDOUT_SEED_BASE
WORLD2_OFFSET = 400_000  # world-2 renders start at seed0 + this
SCREENSHOT_LAYOUTS = ("fullscreen", "viewer_dark", "multi", "windowed")

_anat = None  # list of (grey uint8 array, truth dict) shared by the workers


def _render(job):
    gen, seed = job
    r = np.random.default_rng(seed + 7)
    if gen in xraysim.WORLDS:
        im, truth, _ = xraysim.generate(seed, long_side=int(r.integers(300, 1400)),
                                        present_opts={"tint": "grey", "lightbox": False}, world=gen)
    else:
        im, truth, _ = phantom.generate(seed)
        s = int(r.integers(300, 1400)) / max(im.size)
        im = im.resize((max(32, int(im.size[0] * s)), max(32, int(im.size[1] * s))), Image.BILINEAR)
        truth = {k: np.asarray(v, float) * s for k, v in truth.items()}
    return np.asarray(im.convert("L")), {k: np.asarray(v, float)[:2] for k, v in truth.items()}


def load_anatomy(cache, renders, phantoms, pool_path, seed0, workers, world2=0):
    """Grey radiographs with landmark truth: cached renders plus the PoP
    radiograph pool (no truth kept there: heart points are placed in its
    middle, which only matters for where a reader's line is drawn)."""
    spec = np.array([renders, phantoms, world2, seed0])
    items = None
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True)
        # A cache from before the spec was kept holds renders and phantoms only.
        made = z["spec"] if "spec" in z else np.array([len(z["imgs"]) - phantoms, phantoms, 0, seed0])
        if np.array_equal(made, spec):
            items = list(zip(z["imgs"], z["truth"]))
    if items is None:
        jobs = [("xraysim", seed0 + i) for i in range(renders)]
        jobs += [("phantom", PHANTOM_SEED0 + (seed0 - XRAYSIM_SEED0) + i) for i in range(phantoms)]
        jobs += [("xraysim2", seed0 + WORLD2_OFFSET + i) for i in range(world2)]
        with Pool(workers) as p:
            items = p.map(_render, jobs, chunksize=4)
        np.savez_compressed(cache, imgs=np.array([a for a, _ in items], dtype=object),
                            truth=np.array([t for _, t in items], dtype=object), spec=spec, allow_pickle=True)
    if pool_path and os.path.exists(pool_path):
        for a in np.load(pool_path, allow_pickle=True)["imgs"]:
            h, w = a.shape
            fake = {"heart_top": np.array([0.55 * w, 0.3 * h]), "heart_bottom": np.array([0.4 * w, 0.8 * h]),
                    "heart_right": np.array([0.6 * w, 0.6 * h]), "heart_left": np.array([0.35 * w, 0.45 * h])}
            items.append((a, fake))
    return items


def _jpeg(img, rng, lo=25, hi=95):
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "JPEG", quality=int(rng.integers(lo, hi)))
    out = Image.open(io.BytesIO(buf.getvalue()))
    out.load()
    return out


def simulator_presentation(a, truth, rng):
    """xraysim's own presentation (every tint, film, lightbox, annotations,
    thumbnail, JPEG) of grey radiograph a."""
    g = a.astype(np.float32) / 255
    t = {k: v.copy() for k, v in truth.items()}
    im, _ = xraysim._present(g, t, rng, True, {"lightbox": True})
    if rng.random() < 0.25:  # lightbox photos are rare there (10 %)
        im = Image.fromarray(xraysim._lightbox_photo(np.asarray(im.convert("RGB")), rng, t))
    return im


def export_presentation(a, rng):
    """pop_composites.radiograph_export's presentation of grey radiograph a:
    tight crop, colour ramp, thin border, coloured lines, JPEG."""
    a = a.astype(np.float32) / 255
    h, w = a.shape
    if rng.random() < 0.5:
        cw, ch = int(w * rng.uniform(0.7, 0.95)), int(h * rng.uniform(0.7, 0.95))
        x0, y0 = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
        a = a[y0:y0 + ch, x0:x0 + cw]
        h, w = a.shape
    if rng.random() < 0.15:
        a = xraysim._film_scan(a, rng)
    if rng.random() < 0.85:
        lo, hi, gam = rng.uniform(0, 60, 3), rng.uniform(180, 255, 3), rng.uniform(0.8, 1.2, 3)
        rgb = lo + (hi - lo) * a[..., None] ** gam
    else:
        rgb = np.repeat(a[..., None] * 255, 3, -1)
    if rng.random() < 0.7:
        bw = max(1, int(round(rng.uniform(0.002, 0.04) * min(w, h))))
        col = float(rng.choice([rng.uniform(0, 30), rng.uniform(225, 255), rng.uniform(60, 180)]))
        rgb = pc.pad_border(rgb, bw, col, rng)
    img = Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8), "RGB")
    if rng.random() < 0.3:
        pc.draw_measurement_lines(img, rng)
    return _jpeg(img, rng, 60, 96) if rng.random() < 0.6 else img


def screenshot(anat, rng):
    """A viewer's screen content saved as a file (no monitor, no camera)."""
    D = pv.Draw(rng, "train")
    layout = SCREENSHOT_LAYOUTS[int(rng.integers(len(SCREENSHOT_LAYOUTS)))]
    asp = D.choice((16 / 9, 16 / 10, 4 / 3, 5 / 4, 3 / 4, 3 / 2))
    cw = int(rng.uniform(800, 1920))
    ch = int(round(cw / asp))

    def radiograph(w, h):
        a, t = anat[int(rng.integers(len(anat)))]
        im = Image.fromarray(a)
        if rng.random() < 0.3:
            im = simulator_presentation(a, t, rng)
        return im.convert("RGB").resize((max(1, w), max(1, h)), Image.BILINEAR), None, None

    img, _, _, _ = pv.content(D, layout, cw, ch, radiograph)
    if rng.random() < 0.3:  # a window or region capture
        W, H = img.size
        w, h = int(W * rng.uniform(0.5, 0.95)), int(H * rng.uniform(0.5, 0.95))
        x, y = int(rng.integers(0, W - w + 1)), int(rng.integers(0, H - h + 1))
        img = img.crop((x, y, x + w, y + h))
    if rng.random() < 0.3:
        s = rng.uniform(0.3, 0.8)
        img = img.resize((max(32, int(img.size[0] * s)), max(32, int(img.size[1] * s))), Image.BILINEAR)
    return _jpeg(img, rng, 50, 96) if rng.random() < 0.5 else img


def to_x160(img):
    """What engine/pop feeds the presence model: long side WORK (area
    averaging down, bilinear up), then SIDE x SIDE (area averaging), RGB,
    channel-major."""
    img = img.convert("RGB")
    w, h = img.size
    s = WORK / max(w, h)
    img = img.resize((max(1, round(w * s)), max(1, round(h * s))), Image.BOX if s < 1 else Image.BILINEAR)
    return np.asarray(img.resize((SIDE, SIDE), Image.BOX)).transpose(2, 0, 1)


def sample(seed):
    rng = np.random.default_rng(seed)
    k = rng.random()
    if k < 0.25:
        return to_x160(screenshot(_anat, rng)), "screenshot"
    a, t = _anat[int(rng.integers(len(_anat)))]
    if rng.random() < 0.5:
        a, t = a[:, ::-1].copy(), {kk: np.array([a.shape[1] - v[0], v[1]]) for kk, v in t.items()}
    if k < 0.7:
        return to_x160(simulator_presentation(a, t, rng)), "simulator"
    return to_x160(export_presentation(a, rng)), "export"


def _init(items):
    global _anat
    _anat = items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed0", type=int, default=XRAYSIM_SEED0, help="first xraysim render seed (training seeds only)")
    ap.add_argument("--renders", type=int, default=240, help="new xraysim radiographs")
    ap.add_argument("--phantoms", type=int, default=120, help="sim/phantom.py radiographs")
    ap.add_argument("--world2", type=int, default=0, help="radiographs of the simulator's second world (xraysim2)")
    ap.add_argument("--cache", default="data/pop_plain_renders.npz")
    ap.add_argument("--pool-path", default="data/pop_pool.npz", help="the PoP radiograph pool (pop/traindata.py)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    if max(a.seed0 + a.renders, a.seed0 + WORLD2_OFFSET + a.world2) > xraysim.HELDOUT_SEED_BASE:
        raise SystemExit(f"--seed0 {a.seed0}: xraysim seeds from {xraysim.HELDOUT_SEED_BASE} are held out")
    os.makedirs(os.path.dirname(os.path.abspath(a.cache)), exist_ok=True)
    items = load_anatomy(a.cache, a.renders, a.phantoms, a.pool_path, a.seed0, a.workers, a.world2)
    with Pool(a.workers, initializer=_init, initargs=(items,)) as p:
        res = p.map(sample, [a.seed0 + 600_000 + i for i in range(a.n)], chunksize=16)
    x = np.stack([r[0] for r in res]).astype(np.uint8)
    kinds = np.array([r[1] for r in res])
    np.savez(a.out, x160=x, present=np.zeros(len(x), np.float32), kind=kinds)
    print(f"wrote {len(x)} plain-file negatives to {a.out}: " +
          ", ".join(f"{k} {int((kinds == k).sum())}" for k in sorted(set(kinds))))


if __name__ == "__main__":
    main()
