#!/usr/bin/env bash
# Train the cardiac models from scratch, as the shipped ones were trained:
# phantom data, five landmark models trained side by side (one thread each)
# in five cycles of a time-based one-cycle schedule (MIN minutes at peak
# learning rate 3e-3, then 0.3*MIN at 8e-4, 0.23*MIN at 4e-4, 4/3*MIN at
# 1e-3 and MIN/3 at 3e-4, each from the previous checkpoint); then the
# refinement stage: the same five networks fine-tuned on crops around the
# landmarks (refine.py; 0.6*MIN at 1e-3, 0.4*MIN at 3e-4, 0.2*MIN at 1e-4); the validity
# classifier, ONNX export, manifest.
# Usage: train_cardiac.sh [MIN] [DOGHEART_DIR]
set -euo pipefail
cd "$(dirname "$0")"
PY=/usr/bin/python3
MIN=${1:-75}
DOGHEART=${2:-}
S=224
mkdir -p data checkpoints
[ -f data/phantoms_train_$S.npz ] || $PY dataset.py --n 6000 --seed 1000 --size $S data/phantoms_train_$S.npz
extra=()
[ -n "$DOGHEART" ] && extra=(--dogheart "$DOGHEART")
DATA=data/phantoms_train_$S.npz
cycle() { # name minutes max_lr seed_offset init_name
  for k in 1 2 3 4 5; do
    init=()
    [ -n "$5" ] && init=(--init "checkpoints/$5_$k.pt")
    $PY train_landmarks.py --data $DATA "${extra[@]}" --size $S --seed $((k + $4)) \
      --minutes "$2" --max-lr "$3" --threads 1 "${init[@]}" --out "checkpoints/$1_$k.pt" > "checkpoints/$1_$k.log" 2>&1 &
  done
  wait
}
cycle main "$MIN" 3e-3 0 ""
cycle ft "$($PY -c "print($MIN * 0.3)")" 8e-4 10 main
cycle ft2 "$($PY -c "print($MIN * 0.23)")" 4e-4 20 ft
cycle ft3 "$($PY -c "print($MIN * 4 / 3)")" 1e-3 30 ft2
cycle ft4 "$($PY -c "print($MIN / 3)")" 3e-4 40 ft3
# Refinement stage: crops of full-size phantoms (DogHeart crops are built
# into the .npz, so the trainer gets no --dogheart here).
RDATA=data/refine_train_$S.npz
[ -f $RDATA ] || $PY refine.py --n 4000 --seed 100000 --size $S ${DOGHEART:+--dogheart "$DOGHEART"} $RDATA
DATA=$RDATA
extra=()
cycle rf "$($PY -c "print($MIN * 0.6)")" 1e-3 50 ft4
cycle rf2 "$($PY -c "print($MIN * 0.4)")" 3e-4 60 rf
cycle rf3 "$($PY -c "print($MIN * 0.2)")" 1e-4 70 rf2
$PY export_landmarks.py --models .. checkpoints/ft4_{1,2,3,4,5}.pt
$PY export_landmarks.py --models .. --role refine checkpoints/rf3_{1,2,3,4,5}.pt
$PY train_validity.py --models .. "${extra[@]}"
$PY make_manifest.py ..
