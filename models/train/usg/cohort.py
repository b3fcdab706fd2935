#!/usr/bin/env python3
"""Simulated feline screening cohort for the USG model, and the CSV reader
shared by the trainer and the evaluator.

THE COHORT IS SIMULATED. Every number below is an assumption written down,
with its source, in COHORT.md; change the two together.

Usage (writes the same CSV columns a real clinic export must have):
    cohort.py --patients 20000 --seed 1 --out cohort.csv
"""
import argparse
import csv
import datetime as dt
import math
import os
import sys
import tempfile

import numpy as np

# The model's canonical features, in order (spec usg-v1), and the label cutoff.
FEATURES = ["BUN", "CREATININE", "HGB", "ABSOLUTE LYMPHOCYTES", "age_months"]
ALIASES = {"absolute_lymphocytes": "ABSOLUTE LYMPHOCYTES"}
RANGES = {  # plausible ranges after auto-correction, inclusive (spec usg-v1)
    "BUN": (1.0, 300.0),
    "CREATININE": (0.1, 30.0),
    "HGB": (1.0, 25.0),
    "ABSOLUTE LYMPHOCYTES": (50.0, 50000.0),
    "age_months": (1.0, 360.0),
}
SG_CUTOFF = 1.035

# ---------------------------------------------------------------- assumptions
# Section numbers refer to COHORT.md.
P_YOUNG = 0.15                 # §1 share of adult (1-7 y) cats in the screening mix
SENIOR_AGE = (7.0, 2.0, 2.5)   # §1 senior age = 7 + Gamma(k=2, theta=2.5) years
MAX_AGE_Y = 24.0
P_WET_FOOD = 0.40              # §3 share of cats fed mainly wet food
CKD_LOGIT = (-1.1, 0.30, 12.0) # §2 logit P(CKD) = a + b*(age_y - c)
CKD_STAGE_P = [0.30, 0.45, 0.18, 0.07]                        # §2 IRIS stage mix
CKD_STAGE_G = [(0.80, 1.00), (0.50, 0.80), (0.28, 0.50), (0.12, 0.28)]  # §2 GFR fraction
CKD_DECLINE_PER_Y = (0.04, 0.10)  # §2 loss of GFR fraction per year in CKD
P_HYPERTHYROID_SENIOR = 0.08   # §2 cats >= 10 y
P_DIABETES = 0.01              # §2
P_PRERENAL = 0.05              # §2 per visit: dehydration with concentrated urine
# §3 healthy USG in "points" ((USG-1)*1000): mean, sd by diet; age slope
USG_POINTS = {"dry": (50.0, 9.0), "wet": (41.0, 10.0)}
USG_AGE_SLOPE = -0.5           # points per year above 7 y
REFRACTOMETER_SD = 2.0         # §4 points
# §3 reference intervals -> log-normal setpoints (median, log-sd)
CREAT_MED, CREAT_LSD = 1.40, 0.28
BUN_MED, BUN_LSD = 24.0, 0.21
HGB_MEAN, HGB_SD = 13.0, 1.6
LYMPH_MED, LYMPH_LSD = 2515.0, 0.51
# §4 within-cat biological + analytical noise, per visit (log-sd or sd)
NOISE = {"CREATININE": 0.085, "BUN": 0.11, "HGB": 0.045, "ABSOLUTE LYMPHOCYTES": 0.25}
# §5 missing-lab patterns and unit slips, per visit
P_NO_CBC = {"young": 0.15, "senior": 0.08}
P_NO_LYMPH_ONLY = 0.04
P_NO_CHEM = 0.02
P_NO_AGE = 0.01
P_CREAT_SI = 0.02              # creatinine reported in umol/L
P_LYMPH_THOUSANDS = 0.03       # lymphocytes reported in 10^3/uL


def simulate(n_patients, seed):
    """Return a list of visit dicts (CSV rows) for n_patients simulated cats."""
    rng = np.random.default_rng(seed)
    rows = []
    start = dt.date(2021, 1, 1)
    for i in range(n_patients):
        pid = f"SIM{seed}-{i:06d}"
        young = rng.random() < P_YOUNG
        if young:
            age_y = rng.uniform(1.0, 7.0)
        else:
            age_y = min(SENIOR_AGE[0] + rng.gamma(SENIOR_AGE[1], SENIOR_AGE[2]), MAX_AGE_Y)
        diet = "wet" if rng.random() < P_WET_FOOD else "dry"
        a, b, c = CKD_LOGIT
        ckd = rng.random() < 1.0 / (1.0 + math.exp(-(a + b * (age_y - c))))
        g = 1.0
        if ckd:
            stage = rng.choice(4, p=CKD_STAGE_P)
            g = rng.uniform(*CKD_STAGE_G[stage])
        hyper = age_y >= 10 and rng.random() < P_HYPERTHYROID_SENIOR
        diab = rng.random() < P_DIABETES
        # individual setpoints (correlated creatinine/BUN, r about 0.3)
        e1, e2 = rng.standard_normal(2)
        creat0 = CREAT_MED * math.exp(CREAT_LSD * e1)
        bun0 = BUN_MED * math.exp(BUN_LSD * (0.3 * e1 + math.sqrt(1 - 0.09) * e2))
        hgb0 = rng.normal(HGB_MEAN, HGB_SD)
        lym0 = LYMPH_MED * math.exp(LYMPH_LSD * rng.standard_normal())
        usg_mu, usg_sd = USG_POINTS[diet]
        usg0 = rng.normal(usg_mu, usg_sd)
        n_visits = min(1 + rng.poisson(0.6), 4)
        date = start + dt.timedelta(days=int(rng.integers(0, 4 * 365)))
        for v in range(n_visits):
            if v > 0:
                gap = int(rng.integers(120, 421))
                date += dt.timedelta(days=gap)
                age_y = min(age_y + gap / 365.25, MAX_AGE_Y + 2)
                if ckd:
                    g = max(0.08, g - rng.uniform(*CKD_DECLINE_PER_Y) * gap / 365.25)
            rows.append(_visit(rng, pid, date, age_y, young, g, ckd, hyper, diab,
                               creat0, bun0, hgb0, lym0, usg0))
    return rows


def _visit(rng, pid, date, age_y, young, g, ckd, hyper, diab, creat0, bun0, hgb0, lym0, usg0):
    prerenal = rng.random() < P_PRERENAL
    old = max(0.0, age_y - 10.0)
    # creatinine ~ muscle mass / GFR (§3): muscle loss with age and hyperthyroidism
    creat = creat0 / g * math.exp(-0.012 * old) * (0.75 if hyper else 1.0)
    bun = bun0 / g ** 1.05 * (1.10 if hyper else 1.0) * (1.10 if diab else 1.0)
    hgb = hgb0 * (1.0 - 0.35 * (1.0 - g) ** 1.2) - 0.08 * old + (0.5 if hyper else 0.0)
    lym = lym0 * math.exp(-0.03 * max(0.0, age_y - 3.0)) * (0.75 + 0.25 * g) * (0.8 if hyper else 1.0)
    points = usg0 + USG_AGE_SLOPE * max(0.0, age_y - 7.0)
    points *= 0.2 + 0.8 * g ** 1.3
    if hyper:
        points *= 0.75
    if diab:
        points *= 0.70
    if prerenal:  # dehydration: concentrated urine, prerenal azotemia, haemoconcentration
        points = max(points, 0.0) * 1.15 + 5.0
        bun *= 1.45
        creat *= 1.20
        hgb *= 1.08
    points += rng.normal(0.0, REFRACTOMETER_SD)
    usg = 1.0 + min(max(points, 1.0), 80.0) / 1000.0
    creat *= math.exp(rng.normal(0.0, NOISE["CREATININE"]))
    bun *= math.exp(rng.normal(0.0, NOISE["BUN"]))
    hgb = max(2.0, hgb * math.exp(rng.normal(0.0, NOISE["HGB"])))
    lym *= math.exp(rng.normal(0.0, NOISE["ABSOLUTE LYMPHOCYTES"]))
    row = {
        "patient_id": pid,
        "visit_date": date.isoformat(),
        "BUN": f"{min(bun, 290.0):.0f}",
        "CREATININE": f"{min(creat, 28.0):.1f}",
        "HGB": f"{hgb:.1f}",
        "ABSOLUTE LYMPHOCYTES": f"{max(lym, 60.0):.0f}",
        "age_months": f"{int(age_y * 12)}",
        "USG": f"{usg:.3f}",
        "sim_ckd": "1" if ckd else "0",
        "sim_gfr_fraction": f"{g:.3f}",
        "sim_hyperthyroid": "1" if hyper else "0",
        "sim_diabetes": "1" if diab else "0",
        "sim_prerenal": "1" if prerenal else "0",
    }
    # §5 unit slips a clinic export may contain; the reader corrects them like the engine
    if rng.random() < P_CREAT_SI:
        row["CREATININE"] = f"{float(row['CREATININE']) * 88.4:.0f}"
    if rng.random() < P_LYMPH_THOUSANDS:
        row["ABSOLUTE LYMPHOCYTES"] = f"{float(row['ABSOLUTE LYMPHOCYTES']) / 1000:.2f}"
    # §5 missing-lab patterns
    if rng.random() < P_NO_CBC["young" if young else "senior"]:
        row["HGB"] = row["ABSOLUTE LYMPHOCYTES"] = ""
    elif rng.random() < P_NO_LYMPH_ONLY:
        row["ABSOLUTE LYMPHOCYTES"] = ""
    if rng.random() < P_NO_CHEM:
        row["BUN"] = row["CREATININE"] = ""
    if rng.random() < P_NO_AGE:
        row["age_months"] = ""
    return row


def write_csv(rows, path):
    cols = ["patient_id", "visit_date"] + FEATURES + ["USG"] + sorted(k for k in rows[0] if k.startswith("sim_"))
    f = sys.stdout if path == "-" else open(path, "w", newline="")
    try:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    finally:
        if f is not sys.stdout:
            f.close()


def correct(name, v):
    """The engine's auto-corrections (spec usg-v1 rule 5), applied to CSV data too."""
    if name == "CREATININE" and v > 50:
        return v / 88.4
    if name == "ABSOLUTE LYMPHOCYTES" and 0 < v < 50:
        return v * 1000.0
    return v


def read_cohort(path):
    """Read a cohort CSV: the five features (alias absolute_lymphocytes accepted),
    USG, optional patient_id and visit_date. Rows with a missing or non-numeric
    value, or a value outside the plausible range after auto-correction, or a
    USG outside 1.000-1.100, are dropped (complete-case analysis; counted).

    Returns (X float64 [n,5] raw units, usg float64 [n], patient ids list, stats dict).
    Without patient_id every row counts as its own patient.
    """
    X, usg, pids = [], [], []
    stats = {"rows": 0, "missing": 0, "invalid": 0, "out_of_range": 0, "bad_usg": 0, "corrected": 0}
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        header = [h.strip() for h in (r.fieldnames or [])]
        have = set(header)
        for a, canon in ALIASES.items():
            if a in have:
                have.add(canon)
        missing_cols = [c for c in FEATURES + ["USG"] if c not in have]
        if missing_cols:
            raise SystemExit(f"{path}: missing columns {missing_cols} (need {FEATURES + ['USG']})")
        for i, raw in enumerate(r):
            row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
            for a, canon in ALIASES.items():
                if row.get(canon, "") == "" and row.get(a, "") != "":
                    row[canon] = row[a]
            stats["rows"] += 1
            vals = []
            ok = True
            for name in FEATURES + ["USG"]:
                s = row.get(name, "")
                if s == "":
                    stats["missing"] += 1
                    ok = False
                    break
                try:
                    v = float(s)
                except ValueError:
                    stats["invalid"] += 1
                    ok = False
                    break
                if not math.isfinite(v):
                    stats["invalid"] += 1
                    ok = False
                    break
                if name != "USG":
                    c = correct(name, v)
                    if c != v:
                        stats["corrected"] += 1
                    v = c
                    lo, hi = RANGES[name]
                    if not lo <= v <= hi:
                        stats["out_of_range"] += 1
                        ok = False
                        break
                elif not 1.000 <= v <= 1.100:
                    stats["bad_usg"] += 1
                    ok = False
                    break
                vals.append(v)
            if not ok:
                continue
            X.append(vals[:5])
            usg.append(vals[5])
            pids.append(row.get("patient_id") or f"row-{i}")
    if not X:
        raise SystemExit(f"{path}: no complete rows")
    stats["kept"] = len(X)
    return np.asarray(X, dtype=np.float64), np.asarray(usg), pids, stats


def simulated_dataset(n_patients, seed):
    """Simulate a cohort and read it back through the CSV path a clinic
    export takes (rounding, unit slips, missing labs), as read_cohort returns."""
    with tempfile.TemporaryDirectory(prefix="usg-cohort-") as d:
        path = os.path.join(d, "cohort.csv")
        write_csv(simulate(n_patients, seed), path)
        return read_cohort(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--patients", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    rows = simulate(a.patients, a.seed)
    write_csv(rows, a.out)
    imp = np.mean([float(r["USG"]) < SG_CUTOFF for r in rows])
    print(f"cohort: {a.patients} simulated patients, {len(rows)} visits, "
          f"USG<{SG_CUTOFF}: {imp:.1%} (seed {a.seed})", file=sys.stderr)


if __name__ == "__main__":
    main()
