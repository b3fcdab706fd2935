#!/usr/bin/env python3
"""Choose the column route's two bounds (docs/cardiac.md, "The column route").

Reads per-image dumps written by `go run ./bench/evalcardiac --route column --dump FILE` for
validation sets (never the reported held-out seeds) and prints, for each candidate pair of
bounds, how many VHS the column route would return and their error. A result counts when the
engine returned a VHS or withheld it only by one of the two bounds (heart_points_disagree,
column_weak); its VHS is then `column_vhs` (the reported heart points over the column's v) and the
heart's agreement `heart_vhs_sd` (the members' VHS over the column's v, standard deviation).

The rule, written before the tables were read (docs/cardiac.md):
  * MinColumnScore is the smallest 0.05 step at and above which the validation sets of the
    simulator's two worlds, with the models' landmarks as the prior (bench/columncal --dump),
    hold no column whose v is off by more than 10 %: the column's own failure (a harmonic, a
    band beside the spine), free of the heart. --columns DUMP=TRUTH_DIR (evalcardiac's `column`
    field against truth.json's exact v) prints the table and the choice; --score passes the
    bound the heart rule is read with.
  * MaxHeartVHSSD is the largest cut (0.01 v steps) under which no returned VHS of the
    generalisation world's validation set (sim/phantom.py, --gen) errs by more than --max-err v, with
    MinColumnScore in place: the rule guard 7 of the span route was chosen by. (Round 1 of
    session 29 bounded the heart points' pixel spread instead, by the same rule: 0.005; the members'
    VHS returned more numbers on all three validation sets at the same or lower MAE.)

    python3 -m cardiac.calibrate_column --gen dump-phantom.jsonl --own dump-sim.jsonl [--own dump-world2.jsonl]
"""
import argparse
import json
import os

import numpy as np

from cardiac.calibrate_spread import load

COUNTED_GUARDS = ("", "heart_points_disagree", "column_weak")


def measurable(rows):
    """(abs error, members' VHS sd, column score) of radiographs the two bounds decide."""
    out = []
    for r in rows:
        if r.get("negative") or r.get("guard", "") not in COUNTED_GUARDS:
            continue
        if r.get("column_vhs") is None or r.get("heart_vhs_sd") is None:
            continue
        out.append((abs(r["column_vhs"] - r["vhs"]), r["heart_vhs_sd"], r["column"]["Score"]))
    return np.array(out).reshape(-1, 3)


def returned(m, cut, score):
    keep = (m[:, 1] <= cut) & (m[:, 2] >= score)
    return m[keep, 0]


CUTS = np.round(np.arange(0.02, 0.601, 0.01), 2)
SCORE_STEPS = np.round(np.arange(0.30, 0.951, 0.05), 2)


def column_errors(rows, truth):
    """(score, v / exact v) of every radiograph whose column was found; truth is truth.json's
    items by file."""
    out = []
    for r in rows:
        if r.get("negative") or not r.get("column"):
            continue
        t = truth[r["file"]]["landmarks"]
        v = np.hypot(*np.subtract(t["Vertebra A"], t["Vertebra B"])) / 6
        out.append((r["column"]["Score"], r["column"]["V"] / v))
    return np.array(out).reshape(-1, 2)


def choose_score(cols, max_rel=0.10, steps=SCORE_STEPS):
    """The smallest step at and above which no column's v is off by more than max_rel."""
    for s in steps:
        keep = cols[:, 0] >= s
        if not np.any(np.abs(cols[keep, 1] - 1) > max_rel):
            return s
    return None


def choose(m, score, max_err, cuts=CUTS):
    """The largest cut (None if none) below which, cut by cut, no returned VHS errs by more than
    max_err: the first cut that returns such an error ends the search."""
    chosen = None
    for c in cuts:
        e = returned(m, c, score)
        if len(e) and e.max() > max_err:
            break
        chosen = c
    return chosen


def table(name, m, cuts, score):
    print(f"{name}: {len(m)} radiographs decided by the two bounds (column score >= {score})")
    print("  sd cut      returned  MAE    within 0.5  max err  >1.5 v")
    for c in cuts:
        e = returned(m, c, score)
        if len(e):
            print(f"  {c:.2f}       {len(e):8d}  {e.mean():.3f}  {np.mean(e <= 0.5):9.1%}  {e.max():.2f}     {int((e > 1.5).sum())}")
        else:
            print(f"  {c:.2f}       {0:8d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", nargs="+", required=True, help="dumps of the generalisation world's validation set")
    ap.add_argument("--own", nargs="*", default=[], help="dumps of the simulator's validation sets (reported only)")
    ap.add_argument("--score", type=float, required=True, help="MinColumnScore (chosen by --columns)")
    ap.add_argument("--columns", nargs="*", default=[], metavar="DUMP=TRUTH_DIR",
                    help="the simulator's validation dumps with their folders: the MinColumnScore rule")
    ap.add_argument("--max-err", type=float, default=1.5)
    a = ap.parse_args()
    gen = measurable(load(a.gen))
    chosen = choose(gen, a.score, a.max_err)
    table("generalisation world", gen, CUTS, a.score)
    for p in a.own:
        table(p, measurable(load([p])), CUTS, a.score)
    print(f"MaxHeartVHSSD by the rule: {chosen}")
    if a.columns:
        cols = []
        for spec in a.columns:
            dump, folder = spec.split("=", 1)
            with open(os.path.join(folder, "truth.json")) as f:
                truth = {it["file"]: it for it in json.load(f)["items"]}
            cols.append(column_errors(load([dump]), truth))
        cols = np.concatenate(cols)
        print(f"columns found: {len(cols)}")
        for s in SCORE_STEPS:
            keep = cols[:, 0] >= s
            print(f"  score >= {s:.2f}: {int(keep.sum()):4d} columns, v off by more than 10 %: "
                  f"{int(np.sum(np.abs(cols[keep, 1] - 1) > 0.10))}")
        print(f"MinColumnScore by the rule: {choose_score(cols)}")


if __name__ == "__main__":
    main()
