#!/usr/bin/python3
"""Pack and unpack PoP models trained away from this machine (issue 14).

  python3 -m pop.unpack pack POP.pt PART.pt...   one file from pop/train.py --pack parts
  python3 -m pop.unpack export POP.pt --out DIR [--models viewport,corners_a,...] [--version V]
                                         ONNX files, sidecars (NAME.meta.json) and
                                         export references (DIR/reference/) exactly
                                         as pop/train.py's own export writes them,
                                         and the state dicts to --checkpoints
                                         (default checkpoints/, as pop/train.py)
  python3 -m pop.unpack list POP.pt              what the file holds

train_pop_gpu.sh packs; the export runs on any machine with PyTorch (CPU).
SYNTHETIC DATA ONLY.
"""
import argparse
import os

import torch

from pop import train as pt


def load(path):
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # PyTorch before weights_only
        return torch.load(path, map_location="cpu")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("out")
    p.add_argument("parts", nargs="+")
    e = sub.add_parser("export")
    e.add_argument("pack")
    e.add_argument("--out", required=True, help="models directory to write into")
    e.add_argument("--models", default="", help="comma-separated roles (default: every model in the file)")
    e.add_argument("--checkpoints", default="checkpoints", help="where the state dicts go (default checkpoints/)")
    e.add_argument("--version", default=pt.VERSION, help=f"sidecar version (default {pt.VERSION})")
    ls = sub.add_parser("list")
    ls.add_argument("pack")
    a = ap.parse_args()
    if a.cmd == "pack":
        packs = {}
        for path in a.parts:
            d = load(path)
            packs[d["model"]] = d
        torch.save(packs, a.out)
        print(f"packed {', '.join(sorted(packs))} into {a.out}")
        return
    packs = load(a.pack)
    if a.cmd == "list":
        for role, d in sorted(packs.items()):
            print(role, d["name"], d["params"])
        return
    roles = [r for r in a.models.split(",") if r] or sorted(packs)
    missing = [r for r in roles if r not in packs]
    if missing:
        raise SystemExit(f"{a.pack} holds {sorted(packs)}, not {missing}")
    pt.VERSION = a.version
    os.makedirs(a.checkpoints, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    for role in roles:
        d = packs[role]
        spec = pt.SPECS[role]
        model = pt.build(spec)
        model.load_state_dict(d["state_dict"])
        model.eval()
        torch.save(model.state_dict(), os.path.join(a.checkpoints, d["name"] + ".pt"))
        pt.export(a.out, spec, model, d["name"], d["xref"].float(), d["params"])


if __name__ == "__main__":
    main()
