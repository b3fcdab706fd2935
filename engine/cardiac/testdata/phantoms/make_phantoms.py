#!/usr/bin/python3
"""Writes the test radiographs phantom_test.go measures, and truth.json.

Two worlds at the same six sizes:
  xraysim_*  the physically based simulator the models train on
             (models/train/sim/xraysim.py), heldout=True, seeds 29100001.. that
             training never uses: the models' own world, where they measure;
  phantom_*  the first, 2D generator (models/train/sim/phantom.py), heldout=True,
             seeds 9100001..: a world the v3.1 models never saw, where they
             must withhold rather than return a wrong number.
Run from anywhere:
    /usr/bin/python3 -B engine/cardiac/testdata/phantoms/make_phantoms.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "models", "train"))
from sim import phantom  # noqa: E402
from sim import xraysim  # noqa: E402

SIZES = [(640, 480), (480, 720), (1024, 1024), (1400, 900), (900, 1300), (2000, 1500)]


def main():
    truth = []
    for i, (w, h) in enumerate(SIZES):
        seed = 9100001 + i
        im, t, m = phantom.generate(seed, w, h, heldout=True)
        name = f"phantom_{i + 1}_{w}x{h}." + ("png" if i == 0 else "jpg")
        if name.endswith("png"):
            im.save(os.path.join(HERE, name))
        else:
            im.save(os.path.join(HERE, name), quality=90)
        truth.append({"file": name, "seed": seed, "width": w, "height": h, "vhs": m["vhs"], "vlas": m["vlas"],
                      "landmarks": {k: [float(v[0]), float(v[1])] for k, v in t.items()}})
        print(name, round(m["vhs"], 2), round(m["vlas"], 2))
    for i, (w, h) in enumerate(SIZES):
        seed = 29100001 + i
        im, t, m = xraysim.generate(seed, w, h, heldout=True, present_opts={"tint": "grey", "lightbox": False} if i == 0 else {"lightbox": False})
        name = f"xraysim_{i + 1}_{w}x{h}." + ("png" if i == 0 else "jpg")
        if name.endswith("png"):
            im.save(os.path.join(HERE, name))
        else:
            im.save(os.path.join(HERE, name), quality=90)
        truth.append({"file": name, "seed": seed, "width": w, "height": h, "vhs": m["vhs"], "vlas": m["vlas"],
                      "generator": "xraysim",
                      "landmarks": {k: [float(v[0]), float(v[1])] for k, v in t.items()}})
        print(name, round(m["vhs"], 2), round(m["vlas"], 2), m["presentation"])
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump({"source": "models/train/sim/phantom.py generate(seed, w, h, heldout=True) for phantom_*, "
                             "models/train/sim/xraysim.py generate(seed, w, h, heldout=True) for xraysim_*",
                   "phantoms": truth}, f, indent=1)


if __name__ == "__main__":
    main()
