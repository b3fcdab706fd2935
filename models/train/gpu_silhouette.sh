#!/usr/bin/env bash
# One device call: train the two heart routes issue 42 compares, side by
# side on one lent GPU, and measure both against the shipped members'
# heart points on three development sets, within this workplace's device
# budget (15 minutes a task, one command at most 10 minutes).
#
# As the device command, from the repository root (nothing to carry: the
# shipped ONNX member 1 is both routes' starting point):
#   models/train/gpu_silhouette.sh "$OUT"
#
# Timeline from the script's start (BUDGET seconds, default 500):
#   1. every core renders NTRAIN (default 2000) simulator radiographs and
#      NWORLD2 (default 1000; 0: none, the second world then a judge only)
#      of its second world, and NWORLD3 (default 0) of its third (the
#      carina where only the trachea's end shows it; sim/xraysim.py), with their exact heart
#      silhouettes (cardiac/dataset.py --heart-masks), and three development sets
#      of NDEV (default 250) images, never trained on: the simulator's
#      held-out presentations in both worlds (seeds 27,000,000+ and
#      27,500,000+) and sim/phantom.py's (seeds 17,000,000+), each plus
#      DEVSEED (default 0);
#   2. side by side until BUDGET - 75 s: the silhouette model, one per seed
#      of SILSEEDS (default "1 2"; cardiac/train_silhouette.py train), and one heart-only member (cardiac/train_gpu.py
#      member --heart-only: the vertebral points leave its loss);
#   3. cardiac/train_silhouette.py eval: each route's heart VHS error over the true
#      vertebral unit, on each development set, and the silhouette's doubt
#      as its gate (OUT/eval.txt; further seeds' silhouettes in
#      OUT/eval_sil_SEED.txt), and the checkpoints packed in fp16
#      (OUT/sil.pt, OUT/sil_SEED.pt, OUT/h_1.pt) to export here.
set -euo pipefail
OUT=${1:?usage: gpu_silhouette.sh OUT}
BUDGET=${BUDGET:-500}
T0=$(date +%s)
cd "$(dirname "$0")"
PY=${PY:-python3}
export PYTHONPATH=. OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
D=${DATA_DIR:-/tmp/vetlens-sil}
mkdir -p "$D" "$OUT"
W=$(nproc)
NTRAIN=${NTRAIN:-2000} NWORLD2=${NWORLD2:-1000} NWORLD3=${NWORLD3:-0} NDEV=${NDEV:-250}
gen() { $PY -m cardiac.dataset --size 224 --workers "$W" --no-compress "$@"; }
pids=()
gen --generator xraysim --n "$NTRAIN" --seed 1 --heart-masks "$D/xs.npz" & pids+=($!)
TRAIN=("$D/xs.npz")
if [ "$NWORLD2" -gt 0 ]; then
  gen --generator xraysim2 --n "$NWORLD2" --seed 5000001 --heart-masks "$D/x2.npz" & pids+=($!)
  TRAIN+=("$D/x2.npz")
fi
if [ "$NWORLD3" -gt 0 ]; then
  gen --generator xraysim3 --n "$NWORLD3" --seed 7000001 --heart-masks "$D/x3.npz" & pids+=($!)
  TRAIN+=("$D/x3.npz")
fi
DEVSEED=${DEVSEED:-0} # added to the development sets' seeds: a fresh draw for a new rule
gen --generator xraysim --heldout --n "$NDEV" --seed $((27000000 + DEVSEED)) --heart-masks "$D/dev_xs.npz" & pids+=($!)
gen --generator xraysim2 --heldout --n "$NDEV" --seed $((27500000 + DEVSEED)) --heart-masks "$D/dev_x2.npz" & pids+=($!)
gen --generator phantom --heldout --n "$NDEV" --seed $((17000000 + DEVSEED)) "$D/dev_ph.npz" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || { echo "gpu_silhouette: a data set failed" >&2; exit 1; }; done
echo "gpu_silhouette: data after $(($(date +%s) - T0)) s"
END=$((T0 + BUDGET - 75))
# SILSEEDS (default "1 2"): one silhouette per seed, side by side, so that
# the run shows its own seed-to-seed scatter before a winner is read off
# (session 34: two CPU seeds differed by 0.19 v on phantom.py). The first
# seed's is OUT/sil.pt, the others' OUT/sil_SEED.pt.
SILSEEDS=${SILSEEDS:-"1 2"}
FIRST=${SILSEEDS%% *}
silname() { if [ "$1" = "$FIRST" ]; then echo sil; else echo "sil_$1"; fi; }
pids=()
for s in $SILSEEDS; do
  $PY -m cardiac.train_silhouette train --data "${TRAIN[@]}" --init-onnx ../cardiac_landmark_1.onnx --seed "$s" \
    --deadline "$END" --out "$D/$(silname "$s").pt" --extra >"$OUT/$(silname "$s").log" 2>&1 & pids+=($!)
done
$PY -m cardiac.train_gpu member --data "${TRAIN[@]}" --init-onnx ../cardiac_landmark_1.onnx --heart-only \
  --seed 401 --deadline "$END" --out "$D/h_1.pt" --max-rot 30 --zoom-out 0.3 --max-lr 5e-4 --every 500 \
  --recipe heart-only >"$OUT/h_1.log" 2>&1 & pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
echo "gpu_silhouette: trained after $(($(date +%s) - T0)) s (rc $rc)"
tail -n 3 "$OUT"/sil*.log "$OUT/h_1.log"
DEVS=("$D/dev_xs.npz" "$D/dev_x2.npz" "$D/dev_ph.npz")
MEMBERS=(--members ../cardiac_landmark_{1,2,3,4,5}.onnx)
for s in $SILSEEDS; do
  n=$(silname "$s")
  ARGS=()
  [ -f "$D/$n.pt" ] && ARGS=(--sil "$D/$n.pt")
  # the heart-only member and the members are measured once, with the first seed
  [ "$s" = "$FIRST" ] && [ -f "$D/h_1.pt" ] && ARGS+=(--heart-only "$D/h_1.pt")
  out=eval.txt
  [ "$s" = "$FIRST" ] || out="eval_$n.txt"
  $PY -m cardiac.train_silhouette eval --dev "${DEVS[@]}" "${ARGS[@]}" "${MEMBERS[@]}" 2>&1 | tee "$OUT/$out"
  [ -f "$D/$n.pt" ] && $PY -m cardiac.train_silhouette pack --out "$OUT/$n.pt" "$D/$n.pt"
done
[ -f "$D/h_1.pt" ] && $PY -m cardiac.train_gpu pack --out "$OUT/h_1.pt" "$D/h_1.pt"
echo "gpu_silhouette: done after $(($(date +%s) - T0)) s of $BUDGET"
exit $rc
