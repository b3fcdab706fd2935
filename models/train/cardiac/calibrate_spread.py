#!/usr/bin/env python3
"""Choose the spread cut above which no VHS is returned (MaxSpreadForVHS).

Reads per-image dumps written by `go run ./bench/evalcardiac --dump FILE`
(one JSON line per radiograph: truth vhs, pred_vhs, code, spread) for a
validation set of the generalisation world (sim/phantom.py --validation seeds,
never the reported held-out seeds), and prints, for each candidate cut, how
many measurements would be withheld and the error of those returned. The
chosen cut is the largest one under which no returned VHS is off by more
than --max-err vertebrae, provided it withholds at most --max-withheld of the
measurements; experiments/2026-cardiac-journal.md records the choice (the span route's guard 7).

    python3 -m cardiac.calibrate_spread --max-err 1.5 dump-validation.jsonl
"""
import argparse
import json

import numpy as np


def load(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    return rows


def table(rows, cuts):
    """(cut, returned, withheld share, MAE, max error) for each cut, over rows that had a VHS
    (pred_vhs set) or were withheld only by the spread guard's bound."""
    meas = [r for r in rows if r.get("pred_vhs") is not None]
    err = np.array([abs(r["pred_vhs"] - r["vhs"]) for r in meas])
    spread = np.array([r["spread"] for r in meas])
    out = []
    for c in cuts:
        keep = spread <= c
        n = int(keep.sum())
        out.append((c, n, 1 - n / max(1, len(meas)), float(err[keep].mean()) if n else float("nan"),
                    float(err[keep].max()) if n else float("nan")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--max-err", type=float, default=1.5)
    ap.add_argument("--max-withheld", type=float, default=0.05)
    a = ap.parse_args()
    rows = load(a.dumps)
    spreads = sorted(r["spread"] for r in rows if r.get("pred_vhs") is not None)
    cuts = sorted(set(np.round(np.quantile(spreads, np.linspace(0.5, 1.0, 26)), 5)))
    print(f"{len(rows)} radiographs, {len(spreads)} with a VHS; spread median {np.median(spreads):.5f}, "
          f"p95 {np.quantile(spreads, 0.95):.5f}, max {max(spreads):.5f}")
    print("cut      returned  withheld  MAE     max err")
    best = None
    for c, n, wh, mae, mx in table(rows, cuts):
        print(f"{c:.5f}  {n:8d}  {wh:7.1%}  {mae:.3f}   {mx:.3f}")
        if mx <= a.max_err and wh <= a.max_withheld:
            best = c
    print("chosen cut:", best)


if __name__ == "__main__":
    main()
