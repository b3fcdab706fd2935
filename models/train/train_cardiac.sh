#!/usr/bin/env bash
# Retrain the cardiac models on a CPU (models/CARDIAC_MODEL_CARD.md), e.g.
# with a clinic's labelled DogHeart/CCK folder. The shipped v3.2 members were
# trained on a lent GPU by train_gpu.sh; this script fine-tunes them:
#   1. 4,000 radiographs from the physically based simulator (sim/xraysim.py),
#      letterboxed to 224 px;
#   2. the five landmark models, each fine-tuned from the shipped model of the
#      same index and architecture (its sidecar's arch and width; trained
#      from scratch as U-Nets when none is there) with domain
#      randomisation (--strong-aug), side by side, one thread each, MIN
#      minutes of a time-based one-cycle schedule;
#   3. the refinement stage: crops of 2,000 full-size simulated radiographs
#      jittered like stage 1's error, the five refinement models fine-tuned
#      from the shipped ones for 0.5*MIN minutes;
#   4. the validity classifier (simulator positives in every presentation;
#      documents, screenshots, scenes and other radiographic views as
#      negatives); ONNX export, manifest.
# Usage: train_cardiac.sh [MIN] [DOGHEART_DIR]
# With a DogHeart/CCK folder its labelled radiographs join stages 2 and 3 and
# the validity positives.
set -euo pipefail
cd "$(dirname "$0")"
PY=/usr/bin/python3
MIN=${1:-60}
DOGHEART=${2:-}
S=224
mkdir -p data checkpoints
DATA=data/xraysim_train_$S.npz
[ -f $DATA ] || $PY -m cardiac.dataset --generator xraysim --n 4000 --seed 1 --size $S $DATA
extra=()
[ -n "$DOGHEART" ] && extra=(--dogheart "$DOGHEART")
cycle() { # name minutes max_lr seed_offset role data
  for k in 1 2 3 4 5; do
    init=()
    [ -f "../cardiac_$5_$k.onnx" ] && init=(--init-onnx "../cardiac_$5_$k.onnx")
    # the shipped members' architecture and width (v3.2: MobileNetV2 encoder, decoder width 32)
    if [ -f "../cardiac_$5_$k.meta.json" ]; then
      read -r arch width < <($PY -c "import json,sys; p=json.load(open(sys.argv[1])).get('params',{}); print(p.get('arch','unet'), p.get('width',16))" "../cardiac_$5_$k.meta.json")
      init+=(--arch "$arch" --width "$width")
    fi
    $PY -m cardiac.train_landmarks --data "$6" "${extra[@]}" --size $S --seed $((k + $4)) --strong-aug \
      --minutes "$2" --max-lr "$3" --threads 1 "${init[@]}" --out "checkpoints/$1_$k.pt" > "checkpoints/$1_$k.log" 2>&1 &
  done
  wait
}
cycle xs "$MIN" 1.5e-3 100 landmark $DATA
RDATA=data/xraysim_refine_$S.npz
[ -f $RDATA ] || $PY -m cardiac.refine --generator xraysim --n 2000 --seed 100000 --size $S ${DOGHEART:+--dogheart "$DOGHEART"} $RDATA
extra=()  # DogHeart crops are built into the refinement .npz
cycle xr "$($PY -c "print($MIN * 0.5)")" 1e-3 150 refine $RDATA
$PY -m cardiac.export_landmarks --models .. checkpoints/xs_{1,2,3,4,5}.pt
$PY -m cardiac.export_landmarks --models .. --role refine checkpoints/xr_{1,2,3,4,5}.pt
$PY -m cardiac.train_validity --arch mnv2 --aug strong --fixed-upto 11 --members 3 --n 3000 --seed 77 --epochs 6 --models .. ${DOGHEART:+--dogheart "$DOGHEART"}
$PY make_manifest.py ..
