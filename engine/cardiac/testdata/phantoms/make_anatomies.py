#!/usr/bin/python3
"""Writes anatomies.json: the generator's exact landmarks of many phantom
anatomies, in vertebral units and its anatomical frame (head left, y
ventral), without rendering images. guards_test.go checks that no
plausibility guard fires on any of them (valid anatomy by construction).

Uses models/train/sim/phantom.build with the held-out ranges (seeds 9300001..)
and the training ranges (seeds 9400001..), and models/train/sim/xraysim.anatomy
(the physically based simulator's patients, dogs of every chest shape,
cats and cardiomegaly patterns; seeds 9500001..). Run from anywhere:
    /usr/bin/python3 -B engine/cardiac/testdata/phantoms/make_anatomies.py
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "models", "train"))
from sim import phantom  # noqa: E402
from sim import xraysim  # noqa: E402

SETS = [("heldout", phantom.HELDOUT, 9300001, 500), ("train", phantom.TRAIN, 9400001, 300)]


def main():
    out = []
    for name, ranges, seed0, n in SETS:
        for seed in range(seed0, seed0 + n):
            _, _, truth = phantom.build(np.random.default_rng(seed), ranges)
            out.append({"set": name, "seed": seed,
                        "landmarks": [[round(float(truth[k][0]), 4), round(float(truth[k][1]), 4)] for k in phantom.LANDMARKS]})
    for seed in range(9500001, 9500001 + 300):
        truth, _ = xraysim.anatomy(seed)
        out.append({"set": "xraysim", "seed": seed,
                    "landmarks": [[round(float(truth[k][0]), 4), round(float(truth[k][1]), 4)] for k in phantom.LANDMARKS]})
    with open(os.path.join(HERE, "anatomies.json"), "w") as f:
        json.dump({"source": "models/train/sim/phantom.py build(default_rng(seed), HELDOUT or TRAIN) and "
                             "models/train/sim/xraysim.py anatomy(seed), landmarks in "
                             + ", ".join(phantom.LANDMARKS) + " order, vertebral units",
                   "anatomies": out}, f, separators=(",", ":"))
        f.write("\n")
    print(len(out), "anatomies")


if __name__ == "__main__":
    main()
