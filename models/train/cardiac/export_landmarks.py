#!/usr/bin/env python3
"""Export trained landmark checkpoints to ONNX with sidecars and reference outputs.

For each checkpoint: models/cardiac_landmark_K.onnx (or, with --role
refine, the refinement stage's models/cardiac_refine_K.onnx), its .meta.json
sidecar, and reference outputs on a fixed input (models/reference/) that the
Go test replays through ONNX Runtime. Exporting refinement models also
records the crop margin (refine.MARGIN) in models/cardiac.family.json, where
the engine reads it. With --version, the sidecars carry that version and
the family's model_version (what the engine reports) becomes it too.
"""
import argparse
import json
import os

import numpy as np
import torch

from cardiac import train_landmarks as T
from cardiac.version import CARDIAC_VERSION


ROLES = {"landmark": "cardiac_landmark", "refine": "cardiac_refine"}


def reference_input(S, role="landmark", seed=424242):
    """A fixed phantom, letterboxed (for the refinement stage: its crop
    around the true landmarks): the reference the Go test replays."""
    from cardiac import dataset
    from sim import phantom
    from cardiac import refine

    im, truth, _ = phantom.generate(seed, 640, 480)
    if role == "refine":
        pts = np.array([truth[k] for k in phantom.LANDMARKS])
        x, _ = refine.crop_sample(im, pts, refine.refine_box(pts, 640, 480), S)
        return (x.astype(np.float32) / 255.0)[None, None]
    lb, _ = dataset.letterbox(im, S)
    return (np.asarray(lb, np.float32) / 255.0)[None, None]


def update_family(models_dir, change):
    """Read models_dir/cardiac.family.json (empty when missing), let change
    edit the dict in place, and write it back."""
    path = os.path.join(models_dir, "cardiac.family.json")
    fam = {}
    if os.path.exists(path):
        with open(path) as f:
            fam = json.load(f)
    change(fam)
    with open(path, "w") as f:
        json.dump(fam, f)


def record_margin(models_dir):
    """Write refine.MARGIN into the cardiac family's params."""
    from cardiac import refine

    update_family(models_dir, lambda fam: fam.setdefault("params", {}).update(refine_margin=refine.MARGIN))


def require_synthetic(version):
    """Raise ValueError unless the model_version says the training data was
    synthetic (every VetLens version must)."""
    if "synthetic" not in version:
        raise ValueError(f"model_version {version!r} must say the training data is synthetic")


def set_family_version(models_dir, version):
    """Make version the cardiac family's model_version (what the engine and
    the API report). It must say the models are synthetic-trained."""
    require_synthetic(version)

    def change(fam):
        fam["model_version"] = version
        fam.setdefault("params", {})

    update_family(models_dir, change)


def export_model(model, S, name, models_dir, meta, role="landmark"):
    """Write models_dir/NAME.onnx from an Exported model (eval mode), its
    sidecar NAME.meta.json (meta) and its export reference in
    models_dir/reference/ (the fixed input and PyTorch's outputs on it)."""
    path = os.path.join(models_dir, name + ".onnx")
    dummy = torch.zeros(1, 1, S, S)
    torch.onnx.export(model, dummy, path, opset_version=13, input_names=["image"],
                      output_names=["landmarks", "peak"],
                      dynamic_axes={"image": {0: "n"}, "landmarks": {0: "n"}, "peak": {0: "n"}})
    with open(os.path.join(models_dir, name + ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    ref_dir = os.path.join(models_dir, "reference")
    os.makedirs(ref_dir, exist_ok=True)
    x = reference_input(S, role)
    inp = os.path.join(ref_dir, f"{role}_input_{S}.f32")
    x.astype("<f4").tofile(inp)
    with torch.no_grad():
        c, p = model(torch.from_numpy(x))
    with open(os.path.join(ref_dir, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": os.path.basename(inp), "input_shape": [1, 1, S, S],
                   "outputs": {"landmarks": c.numpy().ravel().tolist(), "peak": p.numpy().ravel().tolist()}}, f)
    return path


def export(ckpt_path, index, models_dir, flip_tta=False, role="landmark", version=CARDIAC_VERSION):
    ck = torch.load(ckpt_path, map_location="cpu")
    S = ck["size"]
    net = T.build_net(ck.get("arch", "unet"), ck["width"])
    net.load_state_dict(ck["state"])
    net.eval()
    model = T.Exported(net, flip_tta).eval()
    name = f"{ROLES[role]}_{index}"
    meta = {"role": ROLES[role], "input_size": [1, S, S], "inputs": ["image"],
            "outputs": ["landmarks", "peak"], "version": version,
            "params": {"arch": ck.get("arch", "unet"), "width": ck["width"], "seed": ck["seed"], "steps": ck["total"], "val_err_px": round(ck["val_err_px"], 4),
                       "flip_tta": flip_tta}}
    path = export_model(model, S, name, models_dir, meta, role)
    print("exported", path)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--flip-tta", action="store_true", help="average each model with its mirrored run")
    ap.add_argument("--role", choices=sorted(ROLES), default="landmark")
    ap.add_argument("--version", default="", help="new model_version for the sidecars and the cardiac family (must say synthetic)")
    ap.add_argument("checkpoints", nargs="+")
    a = ap.parse_args()
    if a.version:
        try:
            require_synthetic(a.version)
        except ValueError as e:
            ap.error(str(e))
    for i, c in enumerate(a.checkpoints, 1):
        export(c, i, a.models, a.flip_tta, a.role, a.version or CARDIAC_VERSION)
    if a.version:
        set_family_version(a.models, a.version)
    if a.role == "refine":
        record_margin(a.models)
