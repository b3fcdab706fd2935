#!/usr/bin/env python3
"""Export trained landmark checkpoints to ONNX with sidecars and reference outputs.

For each checkpoint: models/cardiac_landmark_K.onnx, its .meta.json sidecar,
and reference outputs on a fixed input (models/reference/) that the Go test
replays through ONNX Runtime.
"""
import argparse
import json
import os

import numpy as np
import torch

import train_landmarks as T
from version import CARDIAC_VERSION


def reference_input(S, seed=424242):
    """A fixed phantom, letterboxed: the reference the Go test replays."""
    import dataset
    import phantom

    im, _, _ = phantom.generate(seed, 640, 480)
    lb, _ = dataset.letterbox(im, S)
    return (np.asarray(lb, np.float32) / 255.0)[None, None]


def export(ckpt_path, index, models_dir, flip_tta=False):
    ck = torch.load(ckpt_path, map_location="cpu")
    S = ck["size"]
    net = T.LandmarkNet(ck["width"])
    net.load_state_dict(ck["state"])
    net.eval()
    model = T.Exported(net, flip_tta).eval()
    name = f"cardiac_landmark_{index}"
    path = os.path.join(models_dir, name + ".onnx")
    dummy = torch.zeros(1, 1, S, S)
    torch.onnx.export(model, dummy, path, opset_version=13, input_names=["image"],
                      output_names=["landmarks", "peak"],
                      dynamic_axes={"image": {0: "n"}, "landmarks": {0: "n"}, "peak": {0: "n"}})
    meta = {"role": "cardiac_landmark", "input_size": [1, S, S], "inputs": ["image"],
            "outputs": ["landmarks", "peak"], "version": CARDIAC_VERSION,
            "params": {"seed": ck["seed"], "steps": ck["total"], "val_err_px": round(ck["val_err_px"], 4),
                       "flip_tta": flip_tta}}
    with open(os.path.join(models_dir, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    ref_dir = os.path.join(models_dir, "reference")
    os.makedirs(ref_dir, exist_ok=True)
    x = reference_input(S)
    inp = os.path.join(ref_dir, f"landmark_input_{S}.f32")
    x.astype("<f4").tofile(inp)
    with torch.no_grad():
        c, p = model(torch.from_numpy(x))
    with open(os.path.join(ref_dir, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": os.path.basename(inp), "input_shape": [1, 1, S, S],
                   "outputs": {"landmarks": c.numpy().ravel().tolist(), "peak": p.numpy().ravel().tolist()}}, f)
    print("exported", path)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--flip-tta", action="store_true", help="average each model with its mirrored run")
    ap.add_argument("checkpoints", nargs="+")
    a = ap.parse_args()
    for i, c in enumerate(a.checkpoints, 1):
        export(c, i, a.models, a.flip_tta)
