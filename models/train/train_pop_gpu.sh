#!/usr/bin/env bash
# Retrain the PoP viewport, corner and quality models on a lent GPU in one
# command that ends at a fixed wall time (models/POP_MODEL_CARD.md;
# SYNTHETIC composites only).
#   1. a radiograph pool of POOL renders of the POOL_CONTENT generators
#      (default the simulator's two worlds; sim/phantom.py stays out, so that
#      make eval-popnet's content-phantom set measures the gain on
#      radiographs no training screen showed), LOOKS of the displayed
#      radiographs shown as a viewer may (pop/traindata.py --looks:
#      inverted, windowed, cropped tight, a black or white surround; round 8
#      showed two worlds alone teach mostly those two), and as many screen photos
#      and negatives (3.2 : 1, as the shipped set) as pop/traindata.py
#      makes in GEN seconds on every core (the display family tv, the
#      viewer layout viewer_light and the room dark left out entirely, for
#      the leave-one-family-out check);
#   2. viewport, corners_a, corners_b and quality side by side on the GPU
#      (pop/train.py --device cuda --amp), each continuing from the shipped
#      ONNX file (models/pop_ROLE.onnx), until END less a margin;
#   3. OUT/pop.pt (every state dict, its export parameters and reference
#      inputs: pop/unpack.py export writes the ONNX files, sidecars and
#      export references from it on any machine) and OUT/pop_log.txt (data
#      generation, training curves).
# Usage: train_pop_gpu.sh OUT END [GEN_SECONDS]
#   END: wall time to be done by, seconds since the epoch, or +SECONDS from now.
#   Environment: DEVICE (cuda; cpu for a local test), WORKERS (nproc),
#   POOL (600), POOL_CONTENT (xraysim,xraysim2), LOOKS (0.5), MAXN (60000 screen photos at most), MODELS
#   ("viewport corners_a corners_b quality"), BS (128), LR (1e-3),
#   PY_TORCH (the Python to use), AMP (--amp on cuda).
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OUT END [GEN_SECONDS]" >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
T0=$(date +%s)
case $2 in +*) END=$((T0 + ${2#+})) ;; *) END=$2 ;; esac
GEN=${3:-130}
cd "$(dirname "$0")"
# The first Python with PyTorch (here /usr/bin/python3; on a lent machine
# its plain python3).
PY=""
for c in ${PY_TORCH:-} /usr/bin/python3 python3; do
	"$c" -c "import torch" 2>/dev/null && { PY=$c; break; }
done
[ -n "$PY" ] || { echo "no python3 with torch" >&2; exit 1; }
DEVICE=${DEVICE:-cuda}
WORKERS=${WORKERS:-$(nproc)}
POOL=${POOL:-600}
POOL_CONTENT=${POOL_CONTENT:-xraysim,xraysim2}
LOOKS=${LOOKS:-0.5}
MAXN=${MAXN:-60000}
MODELS=${MODELS:-viewport corners_a corners_b quality}
if [ -z "${AMP+x}" ]; then AMP=""; [ "$DEVICE" = cuda ] && AMP=--amp; fi
WORK=$(mktemp -d)
LOG=$OUT/pop_log.txt
log() { echo "[$(date -u +%T) +$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
mkdir -p data
log "$($PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())')"
log "train_pop_gpu.sh: END $(date -u -d @"$END" +%T) UTC, generation ${GEN}s on $WORKERS workers, device $DEVICE, models $MODELS"
DATA=$WORK/pop_gpu_train.npz
$PY -m pop.traindata "$DATA" --n "$MAXN" --neg $((MAXN * 10 / 32)) --seed0 30100000 \
	--pool "$POOL" --pool-content "$POOL_CONTENT" --pool-path "data/pop_pool${POOL}_${POOL_CONTENT//,/+}.npz" --looks "$LOOKS" --workers "$WORKERS" --seconds "$GEN" \
	--exclude display=tv --exclude layout=viewer_light --exclude room=dark 2>&1 | tee -a "$LOG"
[ -f "$DATA" ] || { log "no training data"; exit 1; }
# Stop training 30 s before END: last validation, packing.
STOP=$((END - 30))
log "training until $(date -u -d @"$STOP" +%T) UTC"
pids=()
for m in $MODELS; do
	init=""; [ -f "../pop_$m.onnx" ] && init="--init ../pop_$m.onnx"
	$PY -m pop.train --model "$m" --data "$DATA" --device "$DEVICE" $AMP --deadline "$STOP" --threads 2 \
		--bs "${BS:-128}" --lr "${LR:-1e-3}" $init --pack "$WORK/$m.pt" >"$WORK/$m.log" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# A model that failed (bf16 on an unexpected device, say) is tried once
# more without --amp while there is time.
if [ -n "$AMP" ] && [ $((STOP - $(date +%s))) -gt 60 ]; then
	pids=()
	for m in $MODELS; do
		[ -f "$WORK/$m.pt" ] && continue
		log "$m failed: $(tail -2 "$WORK/$m.log" | tr '\n' ' '); again without --amp"
		mv "$WORK/$m.log" "$WORK/$m.amp.log"
		init=""; [ -f "../pop_$m.onnx" ] && init="--init ../pop_$m.onnx"
		$PY -m pop.train --model "$m" --data "$DATA" --device "$DEVICE" --deadline "$STOP" --threads 2 \
			--bs "${BS:-128}" --lr "${LR:-1e-3}" $init --pack "$WORK/$m.pt" >"$WORK/$m.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
fi
for m in $MODELS; do { echo "== $m"; cat "$WORK/$m".amp.log "$WORK/$m.log" 2>/dev/null; } >>"$LOG"; grep -h "val-metric" "$WORK/$m.log" | tail -1; done
parts=(); for m in $MODELS; do [ -f "$WORK/$m.pt" ] && parts+=("$WORK/$m.pt"); done
[ ${#parts[@]} -gt 0 ] || { log "no model trained"; exit 1; }
$PY -m pop.unpack pack "$OUT/pop.pt" "${parts[@]}" 2>&1 | tee -a "$LOG"
log "done: $(ls -l "$OUT/pop.pt" | awk '{print $5}') bytes in $OUT/pop.pt"
rm -rf "$WORK"
