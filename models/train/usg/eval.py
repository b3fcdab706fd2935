#!/usr/bin/env python3
"""Evaluate the shipped USG ensemble and write models/USG_MODEL_CARD.md.

    cd models/train && python3 -m usg.eval [--models models] [--data cohort.csv]

Simulated (default): the held-out cohort is a fresh simulation with a seed
never used in training (HELDOUT_SEED); the logistic-regression baselines are
fitted on the training split of the training cohort (seed 1, regenerated).
With --data (a clinic CSV the model was trained on): the baselines are fitted
on its train split and everything is measured on its test split.

The ensemble is run from the exported ONNX file itself (onnxnp.py); the
conformal set and ensemble_std follow engine/usg exactly (docs/usg.md).
"""
import argparse
import datetime as dt
import json
import os
import sys

import numpy as np

from usg import cohort, onnxnp, train

HELDOUT_SEED = 20261122   # never used for training (train.TRAIN_SEED is 1)
HELDOUT_PATIENTS = 6000


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def fit_lr(X, y, l2=1e-4):
    """Plain logistic regression on standardised inputs (IRLS, tiny ridge)."""
    mu, sd = X.mean(0), X.std(0)
    Z = np.hstack([np.ones((len(X), 1)), (X - mu) / sd])
    w = np.zeros(Z.shape[1])
    for _ in range(100):
        p = sigmoid(Z @ w)
        g = Z.T @ (p - y) + l2 * w
        H = (Z * (p * (1 - p))[:, None]).T @ Z + l2 * np.eye(len(w))
        step = np.linalg.solve(H, g)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return lambda Xn: sigmoid(np.hstack([np.ones((len(Xn), 1)), (Xn - mu) / sd]) @ w)


def ece(p, y, bins=10):
    """Expected calibration error, equal-width bins, weighted by bin size."""
    idx = np.minimum((p * bins).astype(int), bins - 1)
    e = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            e += m.mean() * abs(p[m].mean() - y[m].mean())
    return float(e)


def conformal_sets(p, qhat, threshold):
    """engine/usg's rule on the 4-decimal probability: adequate is in the set
    when p <= qhat, impaired when 1-p <= qhat; an empty set becomes the
    classification's label. Returns (has_adequate, has_impaired)."""
    p = np.round(p, 4)
    ad = p <= qhat
    im = (1 - p) <= qhat
    empty = ~ad & ~im
    im = im | (empty & (p >= threshold))
    ad = ad | (empty & (p < threshold))
    return ad, im


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--models", default=os.path.join(here, "..", ".."))
    ap.add_argument("--data")
    ap.add_argument("--card", help="model card path (default MODELS/USG_MODEL_CARD.md)")
    a = ap.parse_args()
    models = os.path.abspath(a.models)
    fam = json.load(open(os.path.join(models, "usg.family.json")))
    prm = fam["params"]
    run = onnxnp.Runner(os.path.join(models, "usg_ensemble.onnx"))

    # The file must still be the one whose reference outputs were saved at export.
    ref = prm["reference"]
    got = run(np.array(ref["inputs"], dtype=np.float32))
    drift = float(np.max(np.abs(got["logit"][:, 0] - np.array(ref["logit"]))))
    if drift > 1e-4:
        raise SystemExit(f"usg_ensemble.onnx does not reproduce its reference outputs (diff {drift:.2e})")

    if a.data:
        X, usg, pids, stats = cohort.read_cohort(a.data)
        split = np.array([train.split_of(p) for p in pids])
        Xtr, ytr = X[split == "train"], (usg[split == "train"] < cohort.SG_CUTOFF).astype(float)
        Xte, yte = X[split == "test"], (usg[split == "test"] < cohort.SG_CUTOFF).astype(float)
        held = f"test split of {os.path.basename(a.data)} ({len(Xte)} rows)"
    else:
        X, usg, pids, _ = cohort.simulated_dataset(train.TRAIN_PATIENTS, train.TRAIN_SEED)
        split = np.array([train.split_of(p) for p in pids])
        Xtr, ytr = X[split == "train"], (usg[split == "train"] < cohort.SG_CUTOFF).astype(float)
        Xte, ute, pte, stats = cohort.simulated_dataset(HELDOUT_PATIENTS, HELDOUT_SEED)
        yte = (ute < cohort.SG_CUTOFF).astype(float)
        held = (f"fresh simulated cohort, seed {HELDOUT_SEED} (never used in training), "
                f"{HELDOUT_PATIENTS} patients, {len(Xte)} complete visits from {len(set(pte))} patients")
    if len(Xte) < 5000 and not a.data:
        raise SystemExit(f"held-out cohort too small: {len(Xte)} rows")

    out = run(Xte.astype(np.float32))
    logit = out["logit"][:, 0].astype(np.float64)
    p = sigmoid(logit)
    member_p = sigmoid(out["member_logits"].astype(np.float64))
    std = member_p.std(axis=1)
    lr_raw = fit_lr(Xtr, ytr)(Xte)
    lr_log = fit_lr(train.transform(Xtr), ytr)(train.transform(Xte))
    ad, im = conformal_sets(p, prm["conformal_qhat"], prm["threshold_impaired"])
    covered = np.where(yte == 1, im, ad)
    both = ad & im
    rng = np.random.default_rng(5)
    boot = [train.auc(p[i], yte[i]) - train.auc(lr_raw[i], yte[i])
            for i in (rng.integers(0, len(p), len(p)) for _ in range(200))]
    fig = {
        "n": int(len(yte)),
        "prevalence": float(yte.mean()),
        "auc_ensemble": train.auc(p, yte),
        "auc_lr_raw": train.auc(lr_raw, yte),
        "auc_lr_log": train.auc(lr_log, yte),
        "auc_diff_ci": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
        "auc_members": [train.auc(member_p[:, j], yte) for j in range(member_p.shape[1])],
        "ece_ensemble": ece(p, yte),
        "ece_lr_raw": ece(lr_raw, yte),
        "brier": float(np.mean((p - yte) ** 2)),
        "coverage": float(covered.mean()),
        "coverage_impaired": float(covered[yte == 1].mean()),
        "coverage_adequate": float(covered[yte == 0].mean()),
        "share_uncertain": float(both.mean()),
        "share_singleton": float((ad ^ im).mean()),
        "std_pct": {q: float(np.percentile(std, q)) for q in (50, 90, 99)},
        "std_max": float(std.max()),
        "std_within_015": float((std <= 0.15).mean()),
        "classified_impaired": float((np.round(p, 4) >= prm["threshold_impaired"]).mean()),
        "sens_at_threshold": float((np.round(p, 4)[yte == 1] >= prm["threshold_impaired"]).mean()),
        "spec_at_threshold": float((np.round(p, 4)[yte == 0] < prm["threshold_impaired"]).mean()),
    }
    checks = {
        "ensemble AUC >= LR AUC": fig["auc_ensemble"] >= fig["auc_lr_raw"],
        "ECE <= 0.03": fig["ece_ensemble"] <= 0.03,
        "coverage in [0.885, 0.915]": 0.885 <= fig["coverage"] <= 0.915,
        "ensemble_std mostly <= 0.15 (>= 95 %)": fig["std_within_015"] >= 0.95,
    }
    print(json.dumps(fig, indent=1))
    for k, v in checks.items():
        print(f"{'PASS' if v else 'FAIL'}  {k}")
    card = a.card or os.path.join(models, "USG_MODEL_CARD.md")
    with open(card, "w") as f:
        f.write(render_card(fam, held, stats, fig, checks))
    print(f"wrote {card}")
    sys.exit(0 if all(checks.values()) else 1)


def render_card(fam, held, stats, f, checks):
    prm = fam["params"]
    pct = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    sim = "simulated" in fam["model_version"]
    lines = [
        "# USG screening model card",
        "",
        f"Generated by `models/train/usg/eval.py` on {dt.date.today().isoformat()}; do not edit by hand.",
        "",
        f"- Model version: `{fam['model_version']}` (service_version {prm['service_version']})",
        f"- Task: probability that a cat's urine specific gravity is below {prm['sg_cutoff']} "
        "(impaired concentrating ability) from BUN, creatinine, haemoglobin, absolute lymphocytes and age.",
        "",
        '## Intended use',
        '',
        "Screening at the exam-room PC or over the LAN API: from a routine feline blood panel (BUN, creatinine, haemoglobin, absolute lymphocytes) and the cat's age, how likely its urine is under-concentrated, so that a clinician can decide whether a urinalysis is worth taking. It answers with a calibrated probability, a risk tier, the features' exact contributions, an uncertainty and a 90 % conformal set (usg-v1). It is a prompt for a urine test, not a diagnosis and not a substitute for measuring USG. Not validated for clinical use.",
        '',
        "## Data",
        "",
    ]
    if sim:
        lines += [
            "**This model is trained and evaluated on SIMULATED data only.** No real cat contributed to it. "
            "The simulated cohort (`models/train/usg/cohort.py`) encodes published reference intervals and "
            "literature-based assumptions listed with their sources in `models/train/usg/COHORT.md`. "
            "Its figures below describe how well the model recovers the simulation, not how it performs "
            "on real patients. Retrain and re-evaluate on a clinic cohort (`make train-usg DATA=cohort.csv`) "
            "before any clinical use.",
            "",
        ]
    lines += [
        f"- Training data: {prm['training_data']}.",
        "- Splits by patient (hash of patient_id): 60 % train, 10 % Platt calibration, "
        "10 % conformal calibration, 20 % internal test.",
        f"- Held-out evaluation: {held}; prevalence of USG < {prm['sg_cutoff']}: {pct(f['prevalence'])}.",
        f"- Evaluation rows dropped (missing lab, complete-case analysis): {stats['missing']} of {stats['rows']}; "
        f"unit auto-corrections applied: {stats['corrected']}.",
        "",
        "## Method",
        "",
        "- Five MLPs (5 -> 16 -> 16 -> 1, ReLU), each on a patient-level bootstrap of the training split with "
        "its own seed, early-stopped on its out-of-bag patients. Inputs: log BUN, log creatinine, HGB, "
        "log lymphocytes, age in years, standardised inside the ONNX graph (raw units in).",
        "- Platt scaling of each member, then of the mean of the members' calibrated log-odds, on the "
        "Platt split. `probability_impaired` = sigmoid(ensemble log-odds).",
        f"- Split-conformal sets at alpha {prm['conformal_alpha']}, q-hat {prm['conformal_qhat']:.4f} "
        "from the conformal split (docs/usg.md gives the rule, including the never-empty rule).",
        "- Exact Shapley values over the 5 features (32 coalitions) on the calibrated log-odds, "
        f"interventional, against a {len(prm['shap_background']['weights'])}-row weighted background "
        "(k-medoids of the training split).",
        "",
        "## Metrics on the held-out cohort",
        "",
        "| Metric | Value |",
        "|---|---|",
        f"| Rows | {f['n']} |",
        f"| AUC, ensemble | {f['auc_ensemble']:.4f} |",
        f"| AUC, plain logistic regression (raw features, same train split) | {f['auc_lr_raw']:.4f} |",
        f"| AUC difference ensemble - LR, bootstrap 95 % CI | {f['auc_diff_ci'][0]:+.4f} to {f['auc_diff_ci'][1]:+.4f} |",
        f"| AUC, logistic regression on the log-transformed features | {f['auc_lr_log']:.4f} |",
        f"| AUC, single members | {', '.join(f'{v:.4f}' for v in f['auc_members'])} |",
        f"| ECE (10 equal-width bins), ensemble | {f['ece_ensemble']:.4f} |",
        f"| ECE, plain logistic regression | {f['ece_lr_raw']:.4f} |",
        f"| Brier score | {f['brier']:.4f} |",
        f"| Conformal coverage (target 90 %) | {pct(f['coverage'])} |",
        f"| Coverage among impaired / adequate | {pct(f['coverage_impaired'])} / {pct(f['coverage_adequate'])} |",
        f"| Share of `uncertain` (both labels) / single-label sets | {pct(f['share_uncertain'])} / {pct(f['share_singleton'])} |",
        f"| ensemble_std median / 90th / 99th pct / max | {f['std_pct'][50]:.4f} / {f['std_pct'][90]:.4f} / "
        f"{f['std_pct'][99]:.4f} / {f['std_max']:.4f} |",
        f"| ensemble_std within 0-0.15 | {pct(f['std_within_015'])} |",
        f"| Classified impaired at threshold {prm['threshold_impaired']} | {pct(f['classified_impaired'])} |",
        f"| Sensitivity / specificity at threshold | {pct(f['sens_at_threshold'])} / {pct(f['spec_at_threshold'])} |",
        "",
        "Acceptance checks:",
        "",
    ]
    lines += [f"- {'PASS' if v else 'FAIL'}: {k}" for k, v in checks.items()]
    lines += [
        "",
        "## Limits",
        "",
        "- Simulated training data: the relationships are the assumptions of COHORT.md, not measurements. "
        "Real cohorts differ (analysers, reference intervals, breed mix, diet, hydration, concurrent disease).",
        "- The five blood values carry limited information on urine concentration: hydration, diet and "
        "non-renal polyuria move USG without moving these values, so discrimination is moderate by design "
        "of the simulation and probably also in reality. The result flags cats for a urinalysis; it does not replace one.",
        "- Not validated for kittens, cats on fluid therapy, diuretics or glucocorticoids, or cats with "
        "lab values outside the plausible ranges (those are rejected).",
        "- Conformal coverage is marginal (over the population), not per patient or per subgroup, and holds only "
        "while new cases resemble the calibration split.",
        "- ensemble_std measures disagreement between members trained on resampled data; it is a soft signal, "
        "not a probability of error.",
        "",
        '## Experiments that changed the shipped model',
        '',
        '- `1.6-simulated.1`: the first shipped model; no later experiment has replaced it (docs/usg.md).',
        '',
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
