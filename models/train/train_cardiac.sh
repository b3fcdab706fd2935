#!/usr/bin/env bash
# Train the cardiac models from scratch: phantom data, five landmark models,
# the validity classifier, ONNX export, manifest.
# Usage: train_cardiac.sh [MINUTES_PER_MODEL] [DOGHEART_DIR]
set -euo pipefail
cd "$(dirname "$0")"
PY=/usr/bin/python3
MIN=${1:-14}
DOGHEART=${2:-}
S=224
mkdir -p data checkpoints
[ -f data/phantoms_train_$S.npz ] || $PY dataset.py --n 6000 --seed 1000 --size $S data/phantoms_train_$S.npz
extra=()
[ -n "$DOGHEART" ] && extra=(--dogheart "$DOGHEART")
# Two models at a time, one thread each: more throughput on two cores than one
# model with two threads.
for pair in "1 2" "3 4" "5"; do
  for k in $pair; do
    $PY train_landmarks.py --data data/phantoms_train_$S.npz "${extra[@]}" --size $S --seed $k \
      --minutes "$MIN" --threads 1 --out checkpoints/landmark_$k.pt > checkpoints/landmark_$k.log 2>&1 &
  done
  wait
done
$PY export_landmarks.py --models .. checkpoints/landmark_{1,2,3,4,5}.pt
$PY train_validity.py --models .. "${extra[@]}"
$PY make_manifest.py ..
