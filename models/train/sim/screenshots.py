#!/usr/bin/env python3
"""Viewer screenshots of a held-out set's radiographs.

A clinician may open in VetLens a screenshot of a PACS or DICOM viewer
rather than an export: the radiograph sits in a viewport inside the
application's chrome. This script turns every image of a held-out folder
(sim/heldout.py's truth.json) into such a screenshot and writes a folder of
the same layout, landmarks moved into the screenshot's pixels, so
`bench/evalcardiac` measures it like any held-out set
(docs/cardiac.md, "Viewer screenshots"). Negatives are copied through as
they are, to check that screenshots of other things stay rejected.

Chrome, drawn at random per image: a dark, grey or light theme; a toolbar
of icons and labels (0-70 px); a thumbnail strip of small copies of
radiographs (left or right, or none); an information panel of text lines;
a status bar; a viewport larger than the image, with bars of the
viewport's own black or grey; patient text overlaid in the viewport's
corners; PNG, or JPEG at quality 70-95. SYNTHETIC.

    python3 -m sim.screenshots SRC OUT [--seed N]
"""
import argparse
import json
import os

import numpy as np
from PIL import Image, ImageDraw

from sim.phantom import load_font

THEMES = {  # background, panel, text
    "dark": ((28, 30, 34), (48, 51, 58), (210, 210, 210)),
    "grey": ((72, 74, 78), (96, 98, 104), (235, 235, 235)),
    "light": ((236, 236, 238), (214, 216, 220), (30, 30, 30)),
}


def _text(r, n):
    words = ["PATIENT", "DOG", "REX", "THORAX", "LAT", "R", "kVp 70", "mAs 8", "W 2048", "L 1024", "1/1", "SE 2", "IM 1",
             "2026-11-25", "ID 4471", "CLINIC", "Zoom 100%", "DX", "CANINE", "F/S"]
    return " ".join(str(r.choice(words)) for _ in range(n))


def screenshot(im, r, thumbs):
    """im: the radiograph (PIL, any mode). Returns (screenshot RGB, (ox, oy, scale), meta)."""
    theme = str(r.choice(list(THEMES)))
    bg, panel, fg = THEMES[theme]
    w, h = im.size
    # The viewport holds the image fitted, with bars; chrome around it.
    vw, vh = int(w * r.uniform(1.0, 1.25)), int(h * r.uniform(1.0, 1.25))
    tool = int(r.choice([0, 32, 48, 70]))
    status = int(r.choice([0, 0, 22]))
    strip = str(r.choice(["none", "left", "right"]))
    sw = int(r.uniform(90, 200)) if strip != "none" else 0
    info = int(r.uniform(120, 240)) if r.random() < 0.4 else 0
    gap = int(r.integers(0, 12))
    W = vw + sw + info + 2 * gap + (gap if sw else 0) + (gap if info else 0)
    H = vh + tool + status + 2 * gap
    canvas = Image.new("RGB", (W, H), bg)
    d = ImageDraw.Draw(canvas)
    font = load_font(max(10, 0.018 * H))
    if tool:
        d.rectangle([0, 0, W, tool - 1], fill=panel)
        x = 8
        while x < W - 60:
            s = tool - 14
            d.rectangle([x, 7, x + s, 7 + s], fill=tuple(int(c) for c in r.uniform(60, 220, 3)))
            x += s + int(r.integers(6, 14))
            if r.random() < 0.2:
                d.text((x, tool // 2 - 6), _text(r, 1), fill=fg, font=font)
                x += 80
    if status:
        d.rectangle([0, H - status, W, H], fill=panel)
        d.text((8, H - status + 4), _text(r, 5), fill=fg, font=font)
    x0 = gap
    if strip == "left":
        x0 += sw + gap
    vy = tool + gap
    if sw:
        sx = gap if strip == "left" else x0 + vw + gap + (info + gap if info else 0)
        ty = vy
        for t in thumbs:
            tw = sw - 12
            th = int(tw * t.size[1] / t.size[0])
            if ty + th > vy + vh:
                break
            d.rectangle([sx, ty, sx + sw - 1, ty + th + 11], fill=panel)
            canvas.paste(t.convert("RGB").resize((tw, th)), (sx + 6, ty + 6))
            ty += th + 20
    if info:
        ix = x0 + vw + gap
        d.rectangle([ix, vy, ix + info - 1, vy + vh - 1], fill=panel)
        for k in range(int(r.integers(4, 14))):
            d.text((ix + 8, vy + 8 + 18 * k), _text(r, 2), fill=fg, font=font)
    vbg = (0, 0, 0) if r.random() < 0.7 else (40, 40, 40)
    d.rectangle([x0, vy, x0 + vw - 1, vy + vh - 1], fill=vbg)
    ox, oy = x0 + (vw - w) // 2, vy + (vh - h) // 2
    canvas.paste(im.convert("RGB"), (ox, oy))
    if r.random() < 0.6:
        for cx, cy in ((x0 + 6, vy + 4), (x0 + vw - 160, vy + 4), (x0 + 6, vy + vh - 40)):
            d.text((cx, cy), _text(r, 3), fill=(230, 230, 230), font=font)
    return canvas, (ox, oy), {"theme": theme, "strip": strip, "tool": tool, "info": info}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=61_000_000)
    a = ap.parse_args()
    with open(os.path.join(a.src, "truth.json")) as f:
        truth = json.load(f)
    os.makedirs(a.out, exist_ok=True)
    items = []
    pos = [it for it in truth["items"] if it.get("radiograph")]
    for i, it in enumerate(truth["items"]):
        r = np.random.default_rng(a.seed + i)
        im = Image.open(os.path.join(a.src, it["file"]))
        im.load()
        if not it.get("radiograph"):
            name = "neg_" + it["file"]
            im.save(os.path.join(a.out, name))
            items.append(dict(it, file=name))
            continue
        others = [pos[int(k)] for k in r.choice(len(pos), size=min(3, len(pos)), replace=False)]
        thumbs = [im] + [Image.open(os.path.join(a.src, o["file"])) for o in others]
        shot, (ox, oy), meta = screenshot(im, r, thumbs)
        name = "shot_%04d.%s" % (i, "png" if r.random() < 0.5 else "jpg")
        if name.endswith("jpg"):
            shot.save(os.path.join(a.out, name), quality=int(r.integers(70, 96)))
        else:
            shot.save(os.path.join(a.out, name))
        lm = {k: [v[0] + ox, v[1] + oy] for k, v in it["landmarks"].items()}
        items.append(dict(it, file=name, width=shot.size[0], height=shot.size[1], landmarks=lm, screenshot=meta))
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump({"generator": truth.get("generator", "") + ", as viewer screenshots (screenshots.py)", "items": items}, f, indent=1)
    print(f"{len(items)} items ({len(pos)} screenshots) in {a.out}")


if __name__ == "__main__":
    main()
