#!/usr/bin/env python3
"""Train the feline USG screening ensemble and export models/usg_ensemble.onnx.

    cd models/train && python3 -m usg.train [--data cohort.csv] [--out models]

Without --data a simulated cohort is generated (cohort.py, seed 1, 40000
patients). With --data the same pipeline runs on a clinic export with the
columns documented in COHORT.md; the model version then says "clinic".

Pipeline (docs/usg.md has the contract):
  1. split by patient (hash of patient_id): 60 % train, 20 % calibration
     (half for Platt scaling, half for the conformal quantile), 20 % test;
  2. M=5 MLPs (5 -> 16 -> 16 -> 1), each on a bootstrap of training
     patients with its own seed, early-stopped on its out-of-bag patients;
  3. Platt scaling per member, then Platt scaling of the mean of the members'
     calibrated log-odds, both on the Platt half of the calibration split;
  4. split-conformal q-hat at alpha 0.10 on the conformal half;
  5. a 32-row weighted SHAP background (k-medoids of the training split);
  6. a hand-built ONNX graph (raw units in, log/standardisation inside),
     checked against the torch model, and reference outputs for the Go test.
"""
import argparse
import hashlib
import json
import math
import os
import sys
import time

import numpy as np
import torch
from onnx import TensorProto, checker, helper, numpy_helper
import onnx

from usg import cohort, onnxnp

MEMBERS = 5
HIDDEN = 16
BACKGROUND = 32
ALPHA = 0.10
THRESHOLD_IMPAIRED = 0.535
RISK_TIERS = [0.20, 0.535, 0.75]
TRAIN_SEED = 1          # cohort seed of the shipped simulated model
TRAIN_PATIENTS = 40000
MODEL_VERSION_SIM = "1.6-simulated.1"
MODEL_VERSION_CLINIC = "1.6-clinic.1"
LOG_MASK = np.array([1, 1, 0, 1, 0], dtype=np.float64)
SCALE = np.array([0, 0, 1, 0, 1 / 12], dtype=np.float64)  # HGB as is; age in years
EPS = np.array([1e-3] * 5, dtype=np.float64)


def transform(x):
    """Raw units -> model space: log of BUN, creatinine, lymphocytes; age in years."""
    x = np.asarray(x, dtype=np.float64)
    return np.log(np.maximum(x, EPS)) * LOG_MASK + x * SCALE


def split_of(pid):
    """Deterministic patient-level split: train, platt, conformal or test."""
    u = int(hashlib.sha256(("usg-split:" + pid).encode()).hexdigest()[:12], 16) / float(1 << 48)
    if u < 0.60:
        return "train"
    if u < 0.70:
        return "platt"
    if u < 0.80:
        return "conformal"
    return "test"


class Member(torch.nn.Module):
    def __init__(self, h=HIDDEN):
        super().__init__()
        self.l1 = torch.nn.Linear(5, h)
        self.l2 = torch.nn.Linear(h, h)
        self.l3 = torch.nn.Linear(h, 1)

    def forward(self, z):
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(z))))).squeeze(-1)


def train_member(z, y, pids, seed, log):
    """One member on a patient-level bootstrap; early stopping on out-of-bag patients."""
    rng = np.random.default_rng(1000 + seed)
    torch.manual_seed(1000 + seed)
    uniq = np.unique(pids)
    boot = rng.choice(uniq, size=len(uniq), replace=True)
    counts = dict(zip(*np.unique(boot, return_counts=True)))
    w = np.array([counts.get(p, 0) for p in pids], dtype=np.float64)
    inbag = np.repeat(np.arange(len(pids)), w.astype(int))
    oob = np.where(w == 0)[0]
    zt, yt = torch.tensor(z[inbag], dtype=torch.float32), torch.tensor(y[inbag], dtype=torch.float32)
    zo, yo = torch.tensor(z[oob], dtype=torch.float32), torch.tensor(y[oob], dtype=torch.float32)
    m = Member()
    opt = torch.optim.Adam(m.parameters(), lr=3e-3, weight_decay=1e-4)
    lossf = torch.nn.BCEWithLogitsLoss()
    best, best_state, stale = float("inf"), None, 0
    for epoch in range(200):
        m.train()
        perm = torch.randperm(len(zt))
        for i in range(0, len(zt), 256):
            idx = perm[i:i + 256]
            opt.zero_grad()
            loss = lossf(m(zt[idx]), yt[idx])
            loss.backward()
            opt.step()
        m.eval()
        with torch.no_grad():
            vl = lossf(m(zo), yo).item()
        if vl < best - 1e-5:
            best, stale = vl, 0
            best_state = {k: v.clone() for k, v in m.state_dict().items()}
        else:
            stale += 1
            if stale >= 12:
                break
    m.load_state_dict(best_state)
    log(f"  member {seed}: {len(inbag)} in-bag rows, {len(oob)} out-of-bag, "
        f"best oob loss {best:.4f} after {epoch + 1} epochs")
    return m


def platt(s, y):
    """Fit p = sigmoid(a*s + b) by Newton's method on the log-loss (float64)."""
    a, b = 1.0, 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a * s + b)))
        g = np.array([np.sum((p - y) * s), np.sum(p - y)])
        w = p * (1 - p)
        h = np.array([[np.sum(w * s * s), np.sum(w * s)], [np.sum(w * s), np.sum(w)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(h, g)
        a, b = a - step[0], b - step[1]
        if np.max(np.abs(step)) < 1e-12:
            break
    return float(a), float(b)


def conformal_qhat(p_imp, y, alpha):
    """Split-conformal quantile of the score 1 - p(true class)."""
    s = np.where(y == 1, 1 - p_imp, p_imp)
    n = len(s)
    k = math.ceil((n + 1) * (1 - alpha))
    if k > n:
        return 1.0
    return float(np.sort(s)[k - 1])


def kmedoids_background(z, k, seed):
    """k-means in model space, then the real row nearest each centre, weighted
    by its cluster's share of the training rows."""
    rng = np.random.default_rng(seed)
    c = z[rng.choice(len(z), 1)]
    for _ in range(k - 1):  # k-means++ seeding
        d = np.min(((z[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        c = np.vstack([c, z[rng.choice(len(z), 1, p=d / d.sum())]])
    for _ in range(50):
        lab = np.argmin(((z[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        nc = np.array([z[lab == j].mean(0) if np.any(lab == j) else c[j] for j in range(k)])
        if np.allclose(nc, c):
            break
        c = nc
    lab = np.argmin(((z[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
    idx, wts = [], []
    for j in range(k):
        members = np.where(lab == j)[0]
        if len(members) == 0:
            continue
        near = members[np.argmin(((z[members] - c[j]) ** 2).sum(-1))]
        idx.append(int(near))
        wts.append(len(members) / len(z))
    return np.array(idx), np.array(wts)


def build_onnx(mu, sd, members, a, b, A, B):
    """The exported graph, computed column-major ([features, rows]) inside so
    that every broadcast runs along the long batch axis: ONNX Runtime is about
    3x slower on the row-major form, whose broadcasts have inner size 5 or 16.
    Ops: Transpose, Max, Log, Mul, Add, Sub, Div, MatMul, Relu, Squeeze,
    ReduceMean (opset 13); onnxnp.py runs the same set."""
    M = len(members)
    col = lambda v: np.asarray(v, dtype=np.float32).reshape(-1, 1)  # noqa: E731
    W1 = np.stack([m.l1.weight.detach().numpy() for m in members])           # [M,H,5]
    B1 = np.stack([m.l1.bias.detach().numpy()[:, None] for m in members])    # [M,H,1]
    W2 = np.stack([m.l2.weight.detach().numpy() for m in members])           # [M,H,H]
    B2 = np.stack([m.l2.bias.detach().numpy()[:, None] for m in members])
    W3 = np.stack([m.l3.weight.detach().numpy() for m in members])           # [M,1,H]
    B3 = np.stack([m.l3.bias.detach().numpy()[:, None] for m in members])    # [M,1,1]
    inits = {
        "eps": col(EPS), "log_mask": col(LOG_MASK), "scale": col(SCALE), "mu": col(mu), "sd": col(sd),
        "W1": W1, "B1": B1, "W2": W2, "B2": B2, "W3": W3, "B3": B3,
        "platt_a": col(a), "platt_b": col(b), "ens_a": [A], "ens_b": [B],
    }
    inits_pb = [numpy_helper.from_array(np.asarray(v, dtype=np.float32), name=k) for k, v in inits.items()]
    inits_pb.append(numpy_helper.from_array(np.array([1], dtype=np.int64), name="sq_axes"))
    n = helper.make_node
    nodes = [
        n("Transpose", ["features"], ["xt"], perm=[1, 0]),  # [5,N]
        n("Max", ["xt", "eps"], ["xc"]),
        n("Log", ["xc"], ["lx"]),
        n("Mul", ["lx", "log_mask"], ["t_log"]),
        n("Mul", ["xt", "scale"], ["t_lin"]),
        n("Add", ["t_log", "t_lin"], ["t"]),
        n("Sub", ["t", "mu"], ["tc"]),
        n("Div", ["tc", "sd"], ["z"]),            # standardised model inputs [5,N]
        n("MatMul", ["W1", "z"], ["h1a"]),        # [M,H,5] x [5,N] -> [M,H,N]
        n("Add", ["h1a", "B1"], ["h1b"]),
        n("Relu", ["h1b"], ["h1"]),
        n("MatMul", ["W2", "h1"], ["h2a"]),
        n("Add", ["h2a", "B2"], ["h2b"]),
        n("Relu", ["h2b"], ["h2"]),
        n("MatMul", ["W3", "h2"], ["oa"]),
        n("Add", ["oa", "B3"], ["o"]),            # [M,1,N]
        n("Squeeze", ["o", "sq_axes"], ["raw"]),  # [M,N] raw member log-odds
        n("Mul", ["raw", "platt_a"], ["ma"]),
        n("Add", ["ma", "platt_b"], ["mcal"]),    # Platt-calibrated member log-odds
        n("Transpose", ["mcal"], ["member_logits"], perm=[1, 0]),  # [N,M]
        n("ReduceMean", ["mcal"], ["mean_logit"], axes=[0], keepdims=1),
        n("Mul", ["mean_logit", "ens_a"], ["la"]),
        n("Add", ["la", "ens_b"], ["logit_t"]),
        n("Transpose", ["logit_t"], ["logit"], perm=[1, 0]),       # [N,1]
    ]
    graph = helper.make_graph(
        nodes, "usg_ensemble",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", 5])],
        [helper.make_tensor_value_info("logit", TensorProto.FLOAT, ["N", 1]),
         helper.make_tensor_value_info("member_logits", TensorProto.FLOAT, ["N", M])],
        inits_pb,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="vetlens-usg-train")
    model.ir_version = 7
    checker.check_model(model)
    return model


def exact_shap(f, x, bg, w):
    """Exact interventional Shapley values of f (vectorised on rows) at x against
    the weighted background; returns (base_value, phi[5]). Mirrors engine/usg."""
    d = x.shape[0]
    v = np.zeros(1 << d)
    for s in range(1 << d):
        mask = np.array([(s >> i) & 1 for i in range(d)], dtype=bool)
        rows = np.where(mask[None, :], x[None, :], bg)
        v[s] = np.sum(w * f(rows))
    phi = np.zeros(d)
    for i in range(d):
        for s in range(1 << d):
            if s >> i & 1:
                continue
            k = bin(s).count("1")
            wt = math.factorial(k) * math.factorial(d - k - 1) / math.factorial(d)
            phi[i] += wt * (v[s | 1 << i] - v[s])
    return v[0], phi


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="cohort CSV (default: simulate with seed %d)" % TRAIN_SEED)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = os.path.abspath(args.out)
    t0 = time.time()
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731

    if args.data:
        source, version = "clinic CSV " + os.path.basename(args.data), MODEL_VERSION_CLINIC
        X, usg, pids, stats = cohort.read_cohort(args.data)
    else:
        source, version = f"simulated cohort (cohort.py seed {TRAIN_SEED}, {TRAIN_PATIENTS} patients)", MODEL_VERSION_SIM
        X, usg, pids, stats = cohort.simulated_dataset(TRAIN_PATIENTS, TRAIN_SEED)
    y = (usg < cohort.SG_CUTOFF).astype(np.float64)
    pids = np.array(pids)
    split = np.array([split_of(p) for p in pids])
    log(f"data: {source}: {stats}; prevalence USG<{cohort.SG_CUTOFF} {y.mean():.3f}")
    for s in ["train", "platt", "conformal", "test"]:
        log(f"  {s}: {np.sum(split == s)} rows, {len(np.unique(pids[split == s]))} patients, "
            f"prevalence {y[split == s].mean():.3f}")

    T = transform(X)
    tr = split == "train"
    mu, sd = T[tr].mean(0), T[tr].std(0)
    Z = (T - mu) / sd
    members = [train_member(Z[tr], y[tr], pids[tr], m, log) for m in range(MEMBERS)]

    def raw_logits(z):
        with torch.no_grad():
            zt = torch.tensor(z, dtype=torch.float32)
            return np.stack([m(zt).double().numpy() for m in members], axis=1)

    pl = split == "platt"
    R = raw_logits(Z[pl])
    ab = [platt(R[:, j], y[pl]) for j in range(MEMBERS)]
    a = np.array([p[0] for p in ab])
    b = np.array([p[1] for p in ab])
    A, B = platt((R * a + b).mean(1), y[pl])
    log(f"platt: members a={np.round(a, 3)} b={np.round(b, 3)}; ensemble A={A:.4f} B={B:.4f}")

    model = build_onnx(mu, sd, members, a, b, A, B)
    run = onnxnp.Runner(model)

    def logit_of(x):
        return run(np.asarray(x, dtype=np.float32))["logit"][:, 0].astype(np.float64)

    cf = split == "conformal"
    p_cf = 1 / (1 + np.exp(-logit_of(X[cf])))
    qhat = conformal_qhat(p_cf, y[cf], ALPHA)
    log(f"conformal: n={cf.sum()} qhat={qhat:.4f}")

    bidx, bw = kmedoids_background(Z[tr], BACKGROUND, seed=7)
    bg = X[tr][bidx]
    base = float(np.sum(bw * logit_of(bg)))
    log(f"background: {len(bidx)} rows; base value {base:.4f}, mean logit on train "
        f"{logit_of(X[tr]).mean():.4f}")

    # torch-side reference (independent of the hand-built graph) for the Go test
    rng = np.random.default_rng(99)
    te = np.where(split == "test")[0]
    ref_x = np.vstack([X[rng.choice(te, 12, replace=False)],
                       [[1, 0.1, 1, 50, 1], [300, 30, 25, 50000, 360],
                        [30, 2.0, 12, 2000, 150], [120, 8.5, 7.5, 600, 220]]]).astype(np.float32)
    zr = (transform(ref_x.astype(np.float64)) - mu) / sd
    with torch.no_grad():
        zt = torch.tensor(zr, dtype=torch.float32)
        rt = torch.stack([m(zt) for m in members], 1)
        mt = rt * torch.tensor(a, dtype=torch.float32) + torch.tensor(b, dtype=torch.float32)
        lt = mt.mean(1, keepdim=True) * float(A) + float(B)
    got = run(ref_x)
    err = max(np.max(np.abs(got["logit"] - lt.numpy())), np.max(np.abs(got["member_logits"] - mt.numpy())))
    log(f"graph vs torch on reference rows: max abs diff {err:.2e}")
    if err > 1e-4:
        raise SystemExit("exported graph disagrees with the torch model")
    ref_shap = []
    for i in range(4):
        bv, phi = exact_shap(logit_of, ref_x[i].astype(np.float64), bg, bw)
        ref_shap.append({"base_value": bv, "shap": phi.tolist()})

    os.makedirs(out, exist_ok=True)
    onnx_path = os.path.join(out, "usg_ensemble.onnx")
    onnx.save(model, onnx_path)
    meta = {
        "role": "usg_ensemble",
        "input_size": [5],
        "inputs": ["features"],
        "outputs": ["logit", "member_logits"],
        "version": version,
        "params": {"members": MEMBERS, "features": cohort.FEATURES},
    }
    family = {
        "model_version": version,
        "params": {
            "service_version": "1.6.0",
            "features": cohort.FEATURES,
            "feature_aliases": cohort.ALIASES,
            "threshold_impaired": THRESHOLD_IMPAIRED,
            "risk_tiers": RISK_TIERS,
            "sg_cutoff": cohort.SG_CUTOFF,
            "conformal_alpha": ALPHA,
            "conformal_qhat": qhat,
            "training_data": source,
            "shap_background": {"rows": bg.tolist(), "weights": bw.tolist(), "base_value": base},
            "reference": {
                "inputs": ref_x.tolist(),
                "logit": lt.numpy()[:, 0].tolist(),
                "member_logits": mt.numpy().tolist(),
                "shap": ref_shap,
            },
        },
    }
    with open(os.path.join(out, "usg_ensemble.meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "usg.family.json"), "w") as f:
        json.dump(family, f, indent=1)
        f.write("\n")
    # test-split figures for the log; eval.py writes the model card
    p_te = 1 / (1 + np.exp(-logit_of(X[split == "test"])))
    log(f"test split: AUC {auc(p_te, y[split == 'test']):.4f}; wrote {onnx_path} "
        f"({os.path.getsize(onnx_path)} bytes) in {time.time() - t0:.0f} s")


def auc(score, y):
    """Rank-based ROC AUC (ties get average ranks)."""
    from scipy.stats import rankdata
    r = rankdata(score)
    n1 = np.sum(y == 1)
    n0 = len(y) - n1
    return float((np.sum(r[y == 1]) - n1 * (n1 + 1) / 2) / (n0 * n1))


if __name__ == "__main__":
    main()
