#!/usr/bin/env bash
# One device call: fine-tune the five shipped landmark members on a lent GPU
# within this workplace's device budget (15 minutes of device time a task,
# machine start included; one command at most 10 minutes), and hand back
# what gpu_import.sh turns into shipped models here.
#
# As the device command, from the repository root (nothing to carry: the
# shipped ONNX members are the starting point, so no ImageNet weights and
# no data travel; the machine's own python3 has torch, onnx and scipy):
#   models/train/gpu_once.sh "$OUT"
# then here, on the files that came back:
#   VERSION=NEW_MODEL_VERSION models/train/gpu_import.sh FILES_AT
#
# Timeline from the script's start (BUDGET seconds, default 530):
#   1. every core generates NTRAIN (default 3000) simulator radiographs,
#      NWORLD2 (default 1500) of the simulator's second world (sim/xraysim.py
#      "xraysim2", see docs/cardiac.md "The simulator's second world") and
#      the three development sets of NDEV (default 300) images each: the
#      simulator's held-out presentations in both worlds and the first
#      generator's phantoms (train_gpu.sh; about 0.4 CPU s an image, so
#      about 2 minutes on 16 cores);
#   2. five members side by side, each from cardiac_landmark_K.onnx with
#      its BatchNorm statistics fixed, with FLAGS (default: rotations to 30
#      degrees, zoom-out 0.3, peak learning rate 5e-4), until BUDGET - 60 s;
#   3. the ensemble measured on the development sets (OUT/g_log.txt), and
#      each member packed (fp16, about 3 MB) into OUT/g_K.pt (all five in one
#      file come to 15 MB, close to the limit): the workplace
#      returns at most 8 files of 16 MiB. A member that left no checkpoint
#      is named, its log copied to OUT/g_K_failed.log, the others packed,
#      and the script exits 1 (gpu_import.sh needs all five).
set -euo pipefail
OUT=${1:?usage: gpu_once.sh OUT}
BUDGET=${BUDGET:-530}
T0=$(date +%s)
cd "$(dirname "$0")"
PY=${PY:-python3}
export PY NDEV=${NDEV:-300} NWORLD2=${NWORLD2:-1500} DATA_DIR=${DATA_DIR:-/tmp/vetlens-gpu}
FLAGS=${FLAGS:---max-rot 30 --zoom-out 0.3 --max-lr 5e-4}
END=$((T0 + BUDGET - 60))
rc=0
INIT_ONNX_DIR=$(cd .. && pwd) ./train_gpu.sh "$OUT" "$END" "${NTRAIN:-3000}" 1 "g|900|$FLAGS" || rc=$?
rm -f "$OUT/g.pt" # the per-member files below carry the same
# Pack every member that finished, so that one member lost (killed for
# memory, say) does not lose the others' device minutes; say which.
missing=()
for k in 1 2 3 4 5; do
  if [ -f "$DATA_DIR/ck/g_$k.pt" ]; then
    $PY -m cardiac.train_gpu pack --out "$OUT/g_$k.pt" "$DATA_DIR/ck/g_$k.pt"
  else
    missing+=("$k")
    cp "$DATA_DIR/logs/g_$k.log" "$OUT/g_${k}_failed.log" 2>/dev/null || true
  fi
done
echo "gpu_once: done after $(($(date +%s) - T0)) s of $BUDGET"
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu_once: member(s) ${missing[*]} left no checkpoint (their logs: OUT/g_K_failed.log)" >&2
  exit 1
fi
exit $rc
