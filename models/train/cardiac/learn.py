#!/usr/bin/env python3
"""Fine-tune the cardiac landmark models on a clinic's corrected cases.

The Python half of `vetlens learn` (docs/learning.md, "Fine-tuning"). It
starts each of the five landmark members from BASEDIR's ONNX file (the
export folds BatchNorm into the convolutions; train_landmarks.init_from_onnx
unfolds it and the statistics stay frozen), trains on the clinic cases
listed in CASES.json mixed with synthetic xraysim radiographs so nothing is
forgotten, with the trainers' strong augmentation, and writes a complete
cardiac models directory:

    python3 -m cardiac.learn --check
    python3 -m cardiac.learn --pool POOL --train-cases CASES.json --base BASEDIR --out OUTDIR
             --version VERSION [--steps N | --minutes M] [--synthetic FILE.npz]
             [--synthetic-n N] [--seed S] [--threads T] [--shuffle-labels]
             [--eval-cases HELDOUT.json]

With --eval-cases the held-out cases (disjoint from CASES.json) are read
for the learning curve only: each member's landmarks on them at
CURVE_POINTS points of its schedule, under no_grad (no weight or random
state changes), the ensemble's VHS MAE per point in train.json's
heldout_curve.

stdout carries JSON lines only (start, progress at least every few seconds,
done or error). OUTDIR is written as OUTDIR.partial and renamed at the end;
SIGTERM or SIGINT stops within a few seconds and leaves no OUTDIR.
Exit status: 0 done, 1 error or cancelled, 3 torch/scipy/onnx missing.
"""
import argparse
import json
import math
import os
import shutil
import signal
import sys
import time

# OpenMP threads that wait passively: with active spinning (the default) two
# torch threads on a 2-core machine shared with other work spent 3.2 CPU-s
# per step instead of 0.57 (measured, load 8); must be set before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

INSTALL_HINT = ("fine-tuning needs PyTorch, SciPy and ONNX for Python 3: "
                "apt install python3-torch python3-scipy python3-onnx")
MEMBERS = 5
BATCH = 16            # images per step
CLINIC_SHARE = 0.5    # share of each batch drawn from the clinic cases (oversampled)
DEFAULT_SYNTHETIC = 400
SYNTHETIC_SEED0 = 1   # xraysim seeds 1.. : the shipped models' own training set
MAX_LR = 3e-4         # 1e-3 regressed the xraysim held-out set twice as much (docs/learning.md)
MNV2_FROZEN_UPTO = 10  # MobileNetV2 members: stem and blocks 0-10 stay as shipped (fewer weights to overfit)
# The frozen trunk runs without autograd, TRUNK_CHUNK images at a time: its
# 112x112 activations were most of a step's peak memory (docs/learning.md, "Speed").
TRUNK_CHUNK = 4
DEFAULT_MAX_MINUTES = 28.0  # without --steps/--minutes: the whole run's cap
EXPORT_RESERVE_S = 30.0     # kept for the export when a time budget applies
PROGRESS_EVERY_S = 5.0
# The held-out curve (--eval-cases): each member's landmarks on the held-out
# cases at the start and after every fifth of its schedule; at most
# CURVE_MAX_CASES of them (the first listed), to bound the time it costs.
CURVE_POINTS = 6
CURVE_MAX_CASES = 64
# Progress fraction: synthetic generation, training, export share the bar.
STAGE_SPAN = {"synthetic": (0.0, 0.08), "train": (0.08, 0.96), "export": (0.96, 1.0)}


class Cancelled(Exception):
    """SIGTERM or SIGINT arrived."""


class Failure(Exception):
    """An error reported as {"event":"error","code":code,...}."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def emit(**kw):
    """Write one JSON line to stdout."""
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def check_deps():
    """The torch version, or raise Failure("missing_torch")."""
    try:
        import torch
        import scipy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        raise Failure("missing_torch", f"{INSTALL_HINT} ({e})") from e
    return torch.__version__


def _on_signal(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one is enough; cleanup must finish
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Cancelled(f"stopped by signal {signum}")


def _worker_init():
    # Pool workers: the parent handles the signals and terminates the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Progress:
    """Rate-limited progress lines with an overall fraction and ETA."""

    def __init__(self):
        self.t0 = time.time()
        self.last = 0.0

    def __call__(self, stage, done, total, member=0, loss=None, force=False, step=None, steps=None):
        """Report stage progress done/total (the bar); step/steps default to done/total."""
        now = time.time()
        if not force and now - self.last < PROGRESS_EVERY_S:
            return
        self.last = now
        lo, hi = STAGE_SPAN[stage]
        frac = lo + (hi - lo) * (done / total if total else 1.0)
        el = now - self.t0
        eta = el * (1 - frac) / frac if frac > 0.01 else None
        ev = {"event": "progress", "stage": stage, "member": member,
              "step": int(done if step is None else step), "steps": int(total if steps is None else steps),
              "fraction": round(min(max(frac, 0.0), 1.0), 4)}
        if loss is not None and math.isfinite(loss):
            ev["loss"] = round(float(loss), 4)
        if eta is not None:
            ev["eta_s"] = round(eta, 1)
        emit(**ev)


# ---- inputs -------------------------------------------------------------


def read_cases_list(path):
    """CASES.json: a JSON list of case stems."""
    try:
        with open(path) as f:
            stems = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure("bad_cases", f"reading --train-cases {path}: {e}") from e
    if not isinstance(stems, list) or not all(isinstance(s, str) and s for s in stems):
        raise Failure("bad_cases", f"--train-cases {path}: want a JSON list of case names")
    if len(set(stems)) != len(stems):
        raise Failure("bad_cases", f"--train-cases {path}: a case is listed twice")
    if not stems:
        raise Failure("no_cases", f"--train-cases {path} lists no cases")
    for s in stems:
        if os.sep in s or s.startswith("."):
            raise Failure("bad_cases", f"--train-cases {path}: {s!r} is not a case name")
    return stems


def read_provenance(pool):
    """Case stem -> provenance entry (empty when the pool has none)."""
    from cardiac import dataset

    try:
        return dataset.read_provenance(pool)
    except ValueError as e:
        raise Failure("bad_pool", str(e)) from e


def load_cases(pool, stems, S, shuffle_seed=None):
    """Read exactly the listed cases of a DogHeart/CCK pool, letterboxed:
    (images uint8 [N,S,S], landmarks [N,K,2] in letterbox units, mask [N,K]).
    The VLAS point comes from provenance.json's vlas_point (mask 0 without
    one). With shuffle_seed the label rows are permuted among the cases
    (the refusal test's wrong labels, never for real use)."""
    import numpy as np
    from cardiac import dataset

    prov = read_provenance(pool)

    def cases():
        for s in stems:
            try:
                case = dataset.read_dogheart_case(pool, s, prov.get(s))
            except FileNotFoundError as e:
                raise Failure("bad_cases", f"case {s} is not in the pool {pool}: {e}") from e
            except Exception as e:  # unreadable image or label file
                raise Failure("bad_pool", f"case {s} of {pool}: {e}") from e
            yield case

    X, Y, M = dataset.letterbox_cases(cases(), S)
    if shuffle_seed is not None and len(stems) > 1:
        rng = np.random.default_rng(shuffle_seed)
        perm = rng.permutation(len(stems))
        while (perm == np.arange(len(stems))).all():
            perm = rng.permutation(len(stems))
        Y, M = Y[perm], M[perm]
    return X, Y, M


def synthetic_set(path, n, S, threads, progress):
    """The synthetic mix: loaded from path when it exists, else generated
    with xraysim (the shipped models' training seeds) and cached at path."""
    import numpy as np
    from multiprocessing import Pool
    from cardiac import dataset

    if path and os.path.exists(path):
        try:
            d = np.load(path)
            X, Y, M = d["images"], d["landmarks"], d["mask"]
        except Exception as e:
            raise Failure("bad_synthetic", f"reading --synthetic {path}: {e}") from e
        if X.ndim != 3 or X.shape[1:] != (S, S):
            raise Failure("bad_synthetic", f"--synthetic {path}: images are {X.shape[1:]}, the models take {S}x{S}")
        if n and len(X) > n:
            X, Y, M = X[:n], Y[:n], M[:n]
        progress("synthetic", 1, 1, force=True)
        return X, Y, M
    res = []
    jobs = [(SYNTHETIC_SEED0 + i, S, False, "xraysim", False) for i in range(n)]
    with Pool(max(1, threads), initializer=_worker_init) as pool:
        for r in pool.imap(dataset._phantom_sample, jobs, chunksize=4):
            res.append(r)
            progress("synthetic", len(res), n, force=len(res) == n)  # the stage's end, for bench_learn
    X = np.stack([r[0] for r in res])
    Y = np.stack([r[1] for r in res])
    M = np.ones(Y.shape[:2], np.float32)
    if path:
        tmp = path + ".tmp.npz"
        np.savez_compressed(tmp, images=X, landmarks=Y, mask=M)
        os.replace(tmp, path)
    return X, Y, M


def read_base(base):
    """Check BASEDIR and return (family dict, {k: meta dict}, validity meta)."""
    need = ["cardiac.family.json", "cardiac_validity.onnx", "cardiac_validity.meta.json"]
    need += [f"cardiac_landmark_{k}.{ext}" for k in range(1, MEMBERS + 1) for ext in ("onnx", "meta.json")]
    missing = [n for n in need if not os.path.exists(os.path.join(base, n))]
    if missing:
        raise Failure("bad_base", f"--base {base} is not a cardiac models directory: missing {', '.join(missing)}")
    try:
        with open(os.path.join(base, "cardiac.family.json")) as f:
            fam = json.load(f)
        metas = {}
        for k in range(1, MEMBERS + 1):
            with open(os.path.join(base, f"cardiac_landmark_{k}.meta.json")) as f:
                metas[k] = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure("bad_base", f"--base {base}: {e}") from e
    for k, m in metas.items():
        arch = m.get("params", {}).get("arch", "unet")
        if arch not in ("unet", "mnv2"):
            raise Failure("bad_base", f"--base {base}: landmark model {k} is {arch!r}; learn.py fine-tunes "
                                      "the U-Net and the MobileNetV2 members")
        if arch == "mnv2" and "width" not in m.get("params", {}):
            raise Failure("bad_base", f"--base {base}: landmark model {k} (mnv2) has no decoder width in its sidecar")
        if m.get("input_size", [1, 224, 224])[0] != 1:
            raise Failure("bad_base", f"--base {base}: landmark model {k} does not take one grey channel")
    return fam, metas


def onnx_width(path):
    """The LandmarkNet width of an exported model (its first convolution's outputs)."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(path)
    init = {i.name: i for i in m.graph.initializer}
    conv = next(n for n in m.graph.node if n.op_type == "Conv")
    return int(numpy_helper.to_array(init[conv.input[1]]).shape[0])


# ---- training ------------------------------------------------------------


def default_steps(n_cases):
    """Steps per member for n clinic cases: one per case, 60 to 300 (at 8
    clinic images a step each case is seen ~8 times; 120 steps on 150 cases
    gained as much as 60 on 120, and longer runs forget more of the
    synthetic world)."""
    return int(min(300, max(60, n_cases)))


def lr_at(progress, max_lr=MAX_LR, warm=0.05):
    """Short warm-up, then cosine decay to ~0."""
    if progress < warm:
        return max_lr * (0.1 + 0.9 * progress / warm)
    q = min(1.0, (progress - warm) / (1 - warm))
    return max_lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * q)))


def base_net(path, meta):
    """The untrained network of an exported landmark model's architecture
    (its sidecar's params.arch: the U-Net, or the MobileNetV2 members with
    params.width)."""
    from cardiac import train_landmarks as T

    params = meta.get("params", {}) if meta else {}
    if params.get("arch", "unet") == "mnv2":
        return T.build_net("mnv2", int(params["width"]))
    return T.LandmarkNet(onnx_width(path))


def finetune_member(path, clinic, synth, steps, seconds, seed, progress, member, S, max_lr=MAX_LR,
                    clinic_share=CLINIC_SHARE, meta=None, checkpoint=None):
    """Fine-tune one member from its ONNX file; returns (net, steps run, final loss).

    checkpoint(net, step), when given, is called at the start and each
    time the schedule's progress reaches i/(CURVE_POINTS-1), CURVE_POINTS
    times in all (twice with the same step when one step crosses two);
    it must leave the net as it found it (curve_predict does).

    Each step takes BATCH images, clinic_share of them clinic cases (cycled
    in shuffled order), the rest synthetic, with train_landmarks' augment
    and strong_augment. The schedule's progress is the larger of
    step/steps and elapsed/seconds (either may be None): it ends at
    whichever comes first."""
    import numpy as np
    import torch
    from cardiac import train_landmarks as T

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    net = base_net(path, meta)
    T.init_from_onnx(net, path)
    net.train()
    T.freeze_bn(net)
    if hasattr(net, "enc"):
        T.freeze_encoder(net, MNV2_FROZEN_UPTO)
    opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=max_lr, weight_decay=1e-4)
    (CX, CY, CM), (SX, SY, SM) = clinic, synth
    nc = max(1, int(round(BATCH * clinic_share))) if len(SX) else BATCH
    ns = BATCH - nc
    rng = np.random.default_rng(seed)
    corder, sorder = np.array([], int), np.array([], int)
    losses = []
    t0 = time.time()
    step = 0
    marks = 0  # checkpoints taken
    while True:
        frac = max(step / steps if steps else 0.0, (time.time() - t0) / seconds if seconds else 0.0)
        while checkpoint is not None and marks < CURVE_POINTS and (frac >= 1.0 or frac * (CURVE_POINTS - 1) >= marks):
            checkpoint(net, step)
            marks += 1
        if frac >= 1.0:
            break
        for grp in opt.param_groups:
            grp["lr"] = lr_at(frac, max_lr)
        if len(corder) < nc:
            corder = np.concatenate([corder, rng.permutation(len(CX))])
        ci, corder = corder[:nc], corder[nc:]
        xs, ys, ms = [CX[ci]], [CY[ci]], [CM[ci]]
        if ns:
            if len(sorder) < ns:
                sorder = np.concatenate([sorder, rng.permutation(len(SX))])
            si, sorder = sorder[:ns], sorder[ns:]
            xs, ys, ms = xs + [SX[si]], ys + [SY[si]], ms + [SM[si]]
        x = torch.from_numpy(np.concatenate(xs)).float().unsqueeze(1) / 255.0
        y = torch.from_numpy(np.concatenate(ys)).float()
        m = torch.from_numpy(np.concatenate(ms)).float()
        x, y = T.augment(x, y, g)
        x, y = T.strong_augment(x, y, g)
        p, c, _ = T.decode(forward(net, x))
        l1 = ((c - y).abs().sum(-1) * m).sum() / m.sum().clamp_min(1) * S
        js = (T.js_to_gaussian(p, y) * m).sum() / m.sum().clamp_min(1)
        loss = l1 + js
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(l1))
        step += 1
        done = min(1.0, max(step / steps if steps else 0.0, (time.time() - t0) / seconds if seconds else 0.0))
        progress(member, done, float(np.mean(losses[-20:])), step)
    net.eval()
    return net, step, float(np.mean(losses[-max(1, min(50, len(losses))):])) if losses else float("nan")


def curve_predict(net, X, batch=BATCH):
    """The net's landmarks [N,K,2] (letterbox units) on images X (uint8
    [N,S,S]): eval mode, no augmentation, no flip, under no_grad. The net
    is left in the mode it was in (training with BatchNorm frozen), and no
    random state is drawn: training goes on exactly as without it."""
    import numpy as np
    import torch
    from cardiac import train_landmarks as T

    training = net.training
    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, len(X), batch):
            x = torch.from_numpy(X[i:i + batch]).float().unsqueeze(1) / 255.0
            _, c, _ = T.decode(net(x))
            out.append(c.numpy())
    if training:
        net.train()
        T.freeze_bn(net)
    return np.concatenate(out)


def span_vhs(P):
    """VHS of landmarks P [..., K, 2] (phantom.LANDMARKS order, any unit):
    the heart's axes over the vertebral unit |A-B| / 6 (phantom.measure)."""
    import numpy as np
    from sim import phantom

    i = {k: phantom.LANDMARKS.index(k) for k in ("heart_top", "heart_bottom", "heart_right", "heart_left",
                                                  "Vertebra A", "Vertebra B")}
    d = lambda a, b: np.linalg.norm(P[..., i[a], :] - P[..., i[b], :], axis=-1)
    return (d("heart_top", "heart_bottom") + d("heart_right", "heart_left")) / (d("Vertebra A", "Vertebra B") / 6.0)


def heldout_curve(points, truth_vhs):
    """The ensemble's held-out curve from each member's checkpoints
    ({member: [(step, landmarks [N,K,2]), ...]}, CURVE_POINTS each): per
    point the members' landmarks averaged (the ensemble mean, as the
    engine does), their VHS against the clinician's, and the members'
    mean step."""
    import numpy as np

    members = sorted(points)
    out = []
    for j in range(min(len(points[k]) for k in members)):
        P = np.mean([points[k][j][1] for k in members], axis=0)
        err = np.abs(span_vhs(P) - truth_vhs)
        out.append({"step": round(float(np.mean([points[k][j][0] for k in members])), 1),
                    "vhs_mae": round(float(np.mean(err)), 4)})
    return out


def forward(net, x):
    """net(x) for training. A MobileNetV2 member's frozen trunk (stem and
    blocks 0..MNV2_FROZEN_UPTO: no weight of it trains, its BatchNorm is
    fixed) runs under no_grad in chunks of TRUNK_CHUNK images, so its
    large early activations are never held for the whole batch; the same
    numbers as net(x), since no gradient flows into it."""
    import torch

    if not hasattr(net, "trunk"):
        return net(x)
    with torch.no_grad():
        parts = [net.trunk(x[i:i + TRUNK_CHUNK], MNV2_FROZEN_UPTO) for i in range(0, len(x), TRUNK_CHUNK)]
        feats = [torch.cat(f) for f in zip(*parts)]
    return net.from_trunk(*feats, MNV2_FROZEN_UPTO)


# ---- output --------------------------------------------------------------


def write_outdir(tmp, base, fam, metas, nets, S, version, ft_params, progress):
    """Fill tmp with the new family: validity copied, the nets exported with
    sidecars and references, family file, model card, manifest."""
    from cardiac import train_landmarks as T
    from cardiac import export_landmarks as E
    import make_manifest

    for name in ("cardiac_validity.onnx", "cardiac_validity.meta.json", "CARDIAC_MODEL_CARD.md"):
        src = os.path.join(base, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(tmp, name))
    os.makedirs(os.path.join(tmp, "reference"), exist_ok=True)
    vref = os.path.join(base, "reference", "cardiac_validity.json")
    if os.path.exists(vref):
        with open(vref) as f:
            inp = json.load(f).get("input", "")
        shutil.copyfile(vref, os.path.join(tmp, "reference", "cardiac_validity.json"))
        if inp and os.path.exists(os.path.join(base, "reference", inp)):
            shutil.copyfile(os.path.join(base, "reference", inp), os.path.join(tmp, "reference", inp))
    for k, net in nets.items():
        bm = metas[k]
        flip = bool(bm.get("params", {}).get("flip_tta", False))
        meta = dict(bm)
        meta["version"] = version
        meta["params"] = dict(bm.get("params", {}), **ft_params[k])
        E.export_model(T.Exported(net, flip).eval(), S, f"cardiac_landmark_{k}", tmp, meta)
        progress("export", k, len(nets), member=k, force=True)
    fam2 = dict(fam)
    fam2["model_version"] = version
    fam2["params"] = dict(fam.get("params", {}))
    with open(os.path.join(tmp, "cardiac.family.json"), "w") as f:
        json.dump(fam2, f)
    make_manifest.compose(tmp)


def run(a):
    t_start = time.time()
    check_deps()
    import numpy as np
    import torch

    torch.set_num_threads(max(1, a.threads))
    if a.steps is not None and a.minutes is not None:
        raise Failure("bad_args", "give --steps or --minutes, not both")
    if (a.steps is not None and a.steps < 1) or (a.minutes is not None and a.minutes <= 0):
        raise Failure("bad_args", "--steps and --minutes must be positive")
    if not (0 < a.clinic_share <= 1) or not (a.max_lr > 0):
        raise Failure("bad_args", "--clinic-share must be in (0, 1] and --max-lr positive")
    if not a.version or "/" in a.version:
        raise Failure("bad_args", f"--version {a.version!r} is not a version name")
    out = os.path.abspath(a.out)
    if os.path.exists(out):
        raise Failure("out_exists", f"--out {out} already exists")
    if not os.path.isdir(a.pool):
        raise Failure("bad_pool", f"--pool {a.pool} is not a directory")
    fam, metas = read_base(a.base)
    S = int(metas[1].get("input_size", [1, 224, 224])[-1])
    stems = read_cases_list(a.train_cases)
    eval_stems = []
    if a.eval_cases:
        eval_stems = read_cases_list(a.eval_cases)
        if set(eval_stems) & set(stems):
            raise Failure("bad_cases", f"--eval-cases {a.eval_cases} lists a case of --train-cases: "
                                       "the curve must be measured on cases the models never train on")
        eval_stems = eval_stems[:CURVE_MAX_CASES]
    n_syn = a.synthetic_n if a.synthetic_n is not None else DEFAULT_SYNTHETIC
    steps = a.steps if a.steps is not None else (None if a.minutes is not None else default_steps(len(stems)))
    if n_syn > 0 and a.synthetic and os.path.exists(a.synthetic):
        try:
            with np.load(a.synthetic) as d:  # a cached mix may hold fewer
                n_syn = min(n_syn, len(d["mask"]))
        except Exception as e:
            raise Failure("bad_synthetic", f"reading --synthetic {a.synthetic}: {e}") from e
    emit(event="start", cases=len(stems), synthetic=n_syn, members=MEMBERS, steps=steps or 0)
    clinic = load_cases(a.pool, stems, S, a.seed if a.shuffle_labels else None)
    held = None
    if eval_stems:
        prov = read_provenance(a.pool)
        hx, hy, _ = load_cases(a.pool, eval_stems, S)
        # The clinician's VHS where the provenance has it (as vetlens learn
        # judges), else measured on their points.
        hv = np.array([float(prov.get(s, {}).get("vhs") or span_vhs(hy[i])) for i, s in enumerate(eval_stems)])
        held = (hx, hv)
    prog = Progress()
    synth = synthetic_set(a.synthetic, n_syn, S, a.threads, prog) if n_syn > 0 else (
        np.zeros((0, S, S), np.uint8), np.zeros((0, 7, 2), np.float32), np.zeros((0, 7), np.float32))
    # Time budget: --minutes, or by default DEFAULT_MAX_MINUTES as a cap on
    # the default step count (a busy machine ends on time with fewer steps);
    # an explicit --steps is never cut short.
    budget = a.minutes if a.minutes is not None else (None if a.steps is not None else DEFAULT_MAX_MINUTES)

    def member_seconds(k):
        if budget is None:
            return None
        left = budget * 60 - (time.time() - t_start) - EXPORT_RESERVE_S
        return max(5.0, left / (MEMBERS - k + 1))

    tmp = out + ".partial"
    if os.path.exists(tmp):
        shutil.rmtree(tmp)  # left by a crashed run
    os.makedirs(tmp)
    try:
        nets, ft, curve_points = {}, {}, {}
        base_version = fam.get("model_version", "")
        for k in range(1, MEMBERS + 1):
            def member_progress(member, done, loss, step, k=k):
                prog("train", (k - 1) + done, MEMBERS, member=member, loss=loss, step=step, steps=steps or 0)
            checkpoint = None
            if held is not None:
                curve_points[k] = []

                def checkpoint(net, step, k=k):
                    curve_points[k].append((step, curve_predict(net, held[0])))
            net, n, loss = finetune_member(os.path.join(a.base, f"cardiac_landmark_{k}.onnx"), clinic, synth,
                                           steps, member_seconds(k), a.seed * 100 + k, member_progress, k, S,
                                           a.max_lr, a.clinic_share, metas[k], checkpoint)
            nets[k] = net
            ft[k] = {"base_version": base_version, "clinic_cases": len(stems), "ft_steps": n,
                     "ft_loss_px": round(loss, 4), "ft_seed": a.seed * 100 + k}
            prog("train", k, MEMBERS, member=k, loss=loss, force=True, step=n, steps=steps or n)
        write_outdir(tmp, a.base, fam, metas, nets, S, a.version, ft, prog)
        train = {"base_version": base_version, "version": a.version, "cases": stems, "n_cases": len(stems),
                 "synthetic": int(len(synth[0])), "steps": steps if steps else None,
                 "minutes": a.minutes, "batch": BATCH, "clinic_share": a.clinic_share, "max_lr": a.max_lr,
                 "seed": a.seed, "threads": a.threads, "shuffle_labels": bool(a.shuffle_labels),
                 "seconds": round(time.time() - t_start, 1),
                 "members": [{"member": k, "steps": ft[k]["ft_steps"], "final_loss_px": ft[k]["ft_loss_px"]}
                             for k in sorted(ft)],
                 "torch": torch.__version__}
        if held is not None:
            train["heldout_curve"] = {
                "cases": len(eval_stems),
                "metric": "VHS MAE (v) of the raw ensemble mean landmarks (span VHS, no flip, no guards)",
                "points": heldout_curve(curve_points, held[1])}
        with open(os.path.join(tmp, "train.json"), "w") as f:
            json.dump(train, f, indent=1)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    emit(event="done", out=out, version=a.version, cases=len(stems), seconds=round(time.time() - t_start, 1))


class _Parser(argparse.ArgumentParser):
    """Usage errors as an error line (code bad_args), exit 1."""

    def error(self, message):
        emit(event="error", code="bad_args", message=f"{self.prog}: {message}")
        sys.exit(1)


def parse(argv):
    ap = _Parser(description="fine-tune the cardiac landmark models on a clinic's cases")
    ap.add_argument("--check", action="store_true", help="only check that torch, scipy and onnx import")
    ap.add_argument("--pool", help="DogHeart/CCK folder with provenance.json")
    ap.add_argument("--train-cases", help="JSON list of the pool's case stems to train on")
    ap.add_argument("--base", help="the current cardiac models directory")
    ap.add_argument("--out", help="new models directory (must not exist)")
    ap.add_argument("--version", help="model_version of the new family")
    ap.add_argument("--steps", type=int, help="steps per member (default from the case count)")
    ap.add_argument("--minutes", type=float,
                    help=f"time budget for the whole run instead of --steps (default: the default steps, "
                         f"capped at {DEFAULT_MAX_MINUTES:g} min)")
    ap.add_argument("--synthetic", help="cached synthetic mix (.npz); generated there when absent")
    ap.add_argument("--synthetic-n", type=int, help=f"synthetic images (default {DEFAULT_SYNTHETIC})")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-lr", type=float, default=MAX_LR, help="peak learning rate (tuning)")
    ap.add_argument("--clinic-share", type=float, default=CLINIC_SHARE,
                    help="share of each batch from the clinic cases (tuning)")
    ap.add_argument("--eval-cases", help="JSON list of held-out pool cases for the learning curve (never trained on)")
    ap.add_argument("--shuffle-labels", action="store_true",
                    help="permute labels among the training cases (refusal test only)")
    a = ap.parse_args(argv)
    if not a.check:
        miss = [f for f in ("pool", "train_cases", "base", "out", "version") if not getattr(a, f)]
        if miss:
            ap.error("missing " + ", ".join("--" + m.replace("_", "-") for m in miss))
    return a


def main(argv=None):
    a = parse(argv)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    try:
        if a.check:
            emit(event="ok", torch=check_deps())
            return 0
        run(a)
        return 0
    except Failure as e:
        emit(event="error", code=e.code, message=str(e))
        return 3 if e.code == "missing_torch" else 1
    except Cancelled as e:
        emit(event="error", code="cancelled", message=str(e))
        return 1
    except Exception as e:  # report, never a traceback on stdout
        import traceback
        traceback.print_exc(file=sys.stderr)
        emit(event="error", code="internal", message=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
