#!/usr/bin/env python3
"""Benchmark fine-tuning (`make bench-learn`): time per 100 clinic cases.

Times a fixed small cardiac/learn.py run on the shipped models (20 cardiac/clinic_cases.py
cases, --steps 10 per member, 40 synthetic images generated), measures its
stages from the arrival of the JSON progress lines (per-step time, synthetic
generation per image, export), and scales them to a run with cardiac/learn.py's
default schedule for 100 and for 200 cases (default_steps, DEFAULT_SYNTHETIC
images). Prints one JSON line:

    {"event":"bench","seconds_per_100_cases":..,"seconds_200_cases":..,
     "step_s":..,"synthetic_s_per_image":..,"export_s":..,"peak_rss_mb":..,
     "threads":..,"loadavg":[..]}

peak_rss_mb is cardiac/learn.py's peak resident set (ru_maxrss from wait4: the
largest of cardiac/learn.py and the synthetic generator's worker processes). The
memory a step needs does not grow with the case count (the cases are a few
MB of uint8), so the small run's peak stands for a default-schedule run's.
It is a benchmark, not a test: the targets (at most 600 s per 100 cases and
1.2 GB, issue 47) are printed beside the figures, not asserted.

The machine's load counts: run it on a quiet machine for the product figure,
and state the load average it reports beside any figure you quote.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

from cardiac import clinic_cases
from cardiac import learn

N_CASES, STEPS, N_SYN = 20, 10, 40
TARGET_S_PER_100, TARGET_RSS_MB = 600, 1200  # issue 47


def estimate(n_cases, step_s, syn_s, export_s, overhead_s):
    """Seconds for a default-schedule run on n_cases clinic cases."""
    return (overhead_s + learn.DEFAULT_SYNTHETIC * syn_s + learn.MEMBERS * learn.default_steps(n_cases) * step_s
            + export_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--base", default=os.path.join(HERE, "..", ".."))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-learn-") as d:
        pool = os.path.join(d, "pool")
        stems = [c["case"] for c in clinic_cases.build(N_CASES, 899, pool, workers=a.threads)]
        cj = os.path.join(d, "cases.json")
        with open(cj, "w") as f:
            json.dump(stems, f)
        cmd = [sys.executable, "-m", "cardiac.learn", "--pool", pool, "--train-cases", cj, "--base", a.base,
               "--out", os.path.join(d, "out"), "--version", "bench", "--steps", str(STEPS),
               "--synthetic", os.path.join(d, "syn.npz"), "--synthetic-n", str(N_SYN), "--threads", str(a.threads)]
        t0 = time.time()
        root = os.path.dirname(HERE)  # models/train: cardiac.learn's package root
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
        ev = []
        for line in p.stdout:
            ev.append((time.time() - t0, json.loads(line)))
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            sys.exit(f"bench_learn: cardiac.learn failed: {ev[-1][1] if ev else 'no output'}")
        peak_mb = usage.ru_maxrss / 1024  # kB on Linux
    t_start = next(t for t, e in ev if e["event"] == "start")
    syn = [t for t, e in ev if e.get("stage") == "synthetic"]
    train = [(t, e) for t, e in ev if e.get("stage") == "train"]
    t_done = ev[-1][0]
    # Steps between the first and the last training line (members run one
    # after another; each line's "step" counts within its member).
    first_t, first = train[0]
    last_t, last = train[-1]
    steps_between = (last["member"] - first["member"]) * STEPS + last["step"] - first["step"]
    step_s = (last_t - first_t) / max(1, steps_between)
    syn_s = (syn[-1] - t_start) / N_SYN
    export_s = t_done - last_t
    overhead_s = t_start + (first_t - syn[-1]) - first["step"] * step_s  # start-up, loading, first member's init
    out = {"event": "bench", "seconds_per_100_cases": round(estimate(100, step_s, syn_s, export_s, overhead_s), 1),
           "seconds_200_cases": round(estimate(200, step_s, syn_s, export_s, overhead_s), 1),
           "steps_100_cases": learn.default_steps(100), "steps_200_cases": learn.default_steps(200),
           "step_s": round(step_s, 4), "batch": learn.BATCH, "synthetic_s_per_image": round(syn_s, 4),
           "export_s": round(export_s, 1), "overhead_s": round(overhead_s, 1), "measured_run_s": round(t_done, 1),
           "peak_rss_mb": round(peak_mb), "synthetic_default": learn.DEFAULT_SYNTHETIC,
           "targets": {"seconds_per_100_cases": TARGET_S_PER_100, "peak_rss_mb": TARGET_RSS_MB},
           "threads": a.threads, "loadavg": [round(x, 2) for x in os.getloadavg()]}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
