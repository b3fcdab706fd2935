#!/usr/bin/env bash
# Retrain the PoP viewport, corner and quality models on a lent GPU in one
# command that ends at a fixed wall time (models/POP_MODEL_CARD.md;
# SYNTHETIC composites only).
#   1. a radiograph pool of POOL xraysim renders and as many screen photos
#      and negatives (3.2 : 1, as the shipped set) as pop_traindata.py
#      makes in GEN seconds on every core (the display family tv, the
#      viewer layout viewer_light and the room dark left out entirely, for
#      the leave-one-family-out check);
#   2. viewport, corners_a, corners_b and quality side by side on the GPU
#      (pop_train.py --device cuda --amp), each continuing from the shipped
#      ONNX file (models/pop_ROLE.onnx), until END less a margin;
#   3. OUT/pop.pt (every state dict, its export parameters and reference
#      inputs: pop_unpack.py export writes the ONNX files, sidecars and
#      export references from it on any machine) and OUT/pop_log.txt (data
#      generation, training curves).
# Usage: train_pop_gpu.sh OUT END [GEN_SECONDS]
#   END: wall time to be done by, seconds since the epoch, or +SECONDS from now.
#   Environment: DEVICE (cuda; cpu for a local test), WORKERS (nproc),
#   POOL (600), MAXN (60000 screen photos at most), MODELS
#   ("viewport corners_a corners_b quality"), BS (128), LR (1e-3).
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUT END [GEN_SECONDS]" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
T0=$(date +%s)
case $2 in +*) END=$((T0 + ${2#+})) ;; *) END=$2 ;; esac
GEN=${3:-130}
cd "$(dirname "$0")"
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
DEVICE=${DEVICE:-cuda}
WORKERS=${WORKERS:-$(nproc)}
POOL=${POOL:-600}
MAXN=${MAXN:-60000}
MODELS=${MODELS:-viewport corners_a corners_b quality}
AMP=""; [ "$DEVICE" = cuda ] && AMP=--amp
WORK=$(mktemp -d)
LOG=$OUT/pop_log.txt
log() { echo "[$(date -u +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
mkdir -p data
log "train_pop_gpu.sh: END $(date -u -d @"$END" +%T) UTC, generation ${GEN}s on $WORKERS workers, device $DEVICE, models $MODELS"
DATA=$WORK/pop_gpu_train.npz
$PY pop_traindata.py "$DATA" --n "$MAXN" --neg $((MAXN * 10 / 32)) --seed0 30100000 \
	--pool "$POOL" --pool-path "data/pop_pool$POOL.npz" --workers "$WORKERS" --seconds "$GEN" \
	--exclude display=tv --exclude layout=viewer_light --exclude room=dark 2>&1 | tee -a "$LOG"
[ -f "$DATA" ] || { log "no training data"; exit 1; }
# Stop training 30 s before END: last validation, packing.
STOP=$((END - 30))
log "training until $(date -u -d @"$STOP" +%T) UTC"
pids=()
for m in $MODELS; do
	init=""; [ -f "../pop_$m.onnx" ] && init="--init ../pop_$m.onnx"
	$PY pop_train.py --model "$m" --data "$DATA" --device "$DEVICE" $AMP --deadline "$STOP" --threads 2 \
		--bs "${BS:-128}" --lr "${LR:-1e-3}" $init --pack "$WORK/$m.pt" >"$WORK/$m.log" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for m in $MODELS; do { echo "== $m"; cat "$WORK/$m.log"; } >>"$LOG"; grep -h "val-metric" "$WORK/$m.log" | tail -1; done
parts=(); for m in $MODELS; do [ -f "$WORK/$m.pt" ] && parts+=("$WORK/$m.pt"); done
[ ${#parts[@]} -gt 0 ] || { log "no model trained"; exit 1; }
$PY pop_unpack.py pack "$OUT/pop.pt" "${parts[@]}" 2>&1 | tee -a "$LOG"
log "done: $(ls -l "$OUT/pop.pt" | awk '{print $5}') bytes in $OUT/pop.pt"
rm -rf "$WORK"
