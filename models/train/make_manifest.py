#!/usr/bin/env python3
"""Compose models/manifest.json from the sidecar files the trainers write.

Each model file models/NAME.onnx has a sidecar models/NAME.meta.json:
    {"role": ..., "input_size": [...], "inputs": [...], "outputs": [...],
     "version": ..., "params": {...optional...}}
Each family (cardiac, usg, pop) has models/FAMILY.family.json:
    {"model_version": ..., "params": {...optional...}}
The manifest adds each file's SHA-256, so it always matches what is shipped.
Usage: make_manifest.py [MODELS_DIR]
"""
import glob
import hashlib
import json
import os
import sys


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    try:
        out = compose(d)
    except ValueError as e:
        sys.exit(f"make_manifest: {e}")
    print(f"manifest: {len(out['models'])} models, families {sorted(out['families'])}")


def compose(d):
    """Write d/manifest.json from d's sidecars and family files; return it."""
    d = os.path.abspath(d)
    families = {}
    for p in sorted(glob.glob(os.path.join(d, "*.family.json"))):
        name = os.path.basename(p)[: -len(".family.json")]
        with open(p) as f:
            families[name] = json.load(f)
    models = []
    for p in sorted(glob.glob(os.path.join(d, "*.meta.json"))):
        onnx_file = os.path.basename(p)[: -len(".meta.json")] + ".onnx"
        path = os.path.join(d, onnx_file)
        if not os.path.exists(path):
            raise ValueError(f"{p} has no model file {onnx_file}")
        with open(p) as f:
            meta = json.load(f)
        entry = {"file": onnx_file, "sha256": sha256(path)}
        entry.update(meta)
        models.append(entry)
    out = {"families": families, "models": models}
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    return out


if __name__ == "__main__":
    main()
