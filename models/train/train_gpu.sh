#!/usr/bin/env bash
# One accelerator session's landmark training, as the shipped MobileNetV2
# members were trained (models/CARDIAC_MODEL_CARD.md):
#   1. on every core: NTRAIN simulator radiographs (sim/xraysim.py, training
#      seeds from SEED0) and two development sets never used for training,
#      400 held-out-presentation simulator images (seeds 27,000,000+) and
#      400 sim/phantom.py images (seeds 17,000,000+, the generator the models
#      never see);
#   2. one process per member, all on the one GPU, until END (Unix time);
#      each RECIPE is "name|seed base|cardiac/train_gpu.py member flags", five
#      members each; with INIT_DIR set, member k of recipe NAME continues
#      from INIT_DIR/NAME_k.pt; with INIT_ONNX_DIR set, from the exported
#      INIT_ONNX_DIR/cardiac_landmark_k.onnx (e.g. the shipped ../, no
#      ImageNet weights needed);
#   3. every recipe's ensemble measured on both development sets, and its
#      checkpoints packed (fp16) into OUT/NAME.pt to carry back, with the
#      members' logs and the measurement in OUT/NAME_log.txt. A member that
#      left no checkpoint (killed for memory, say) is named there and the
#      script exits 1, after measuring and packing the others.
# NDEV (default 400) sets the development sets' size. PHOTOS=N (default 0)
# also renders N rectified screen photos (pop/rectified.py, training split,
# the TV, light-viewer and dark-room families left out as in PoP training)
# into a DogHeart pool and mixes them into every member's training data;
# EXTRA_DATA names further letterboxed .npz files to mix in (cardiac/dataset.py
# --dogheart turns a clinic's DogHeart folder into one). NWORLD2=N (default
# 0) also renders N radiographs of the simulator's second world
# (sim/xraysim.py world "xraysim2": flatter vertebral bodies with rib heads and
# pedicles over the discs, epaxial muscles, the heart on the sternum with
# bulges on its border, busier lungs, stronger DR range compression;
# training seeds from SEED0 + 5,000,000) into the training mix, and adds a
# third development set of NDEV world-2 images (seeds 27,500,000+).
# Usage: train_gpu.sh OUT END NTRAIN SEED0 RECIPE...
set -euo pipefail
cd "$(dirname "$0")"
OUT=$1 END=$2 NTRAIN=$3 SEED0=$4
shift 4
PY=${PY:-python3}
W=$(nproc)
export PYTHONPATH=. OMP_NUM_THREADS=1
D=${DATA_DIR:-/tmp/vetlens-gpu}
mkdir -p "$D" "$OUT" "$D/ck" "$D/logs"
NDEV=${NDEV:-400}
TRAIN=$D/xs_${NTRAIN}_$SEED0.npz
[ -f "$TRAIN" ] || $PY -m cardiac.dataset --generator xraysim --n "$NTRAIN" --seed "$SEED0" --size 224 --workers "$W" --no-compress "$TRAIN" &
[ -f "$D/dev_xs.npz" ] || $PY -m cardiac.dataset --generator xraysim --heldout --n "$NDEV" --seed 27000000 --size 224 --workers "$W" --no-compress "$D/dev_xs.npz" &
[ -f "$D/dev_ph.npz" ] || $PY -m cardiac.dataset --generator phantom --heldout --n "$NDEV" --seed 17000000 --size 224 --workers "$W" --no-compress "$D/dev_ph.npz" &
PHOTOS=${PHOTOS:-0}
NWORLD2=${NWORLD2:-0}
DEVS=("$D/dev_xs.npz" "$D/dev_ph.npz")
if [ "$NWORLD2" -gt 0 ]; then
  W2=$D/x2_${NWORLD2}_$SEED0.npz
  [ -f "$W2" ] || $PY -m cardiac.dataset --generator xraysim2 --n "$NWORLD2" --seed $((SEED0 + 5000000)) --size 224 --workers "$W" --no-compress "$W2" &
  [ -f "$D/dev_x2.npz" ] || $PY -m cardiac.dataset --generator xraysim2 --heldout --n "$NDEV" --seed 27500000 --size 224 --workers "$W" --no-compress "$D/dev_x2.npz" &
  DEVS+=("$D/dev_x2.npz")
fi
# shellcheck disable=SC2206 # EXTRA_DATA is a space-separated list
EXTRA=(${EXTRA_DATA:-})
[ "$NWORLD2" -gt 0 ] && EXTRA+=("$W2")
if [ "$PHOTOS" -gt 0 ]; then
  PNPZ=$D/photos_$PHOTOS.npz
  if [ ! -f "$PNPZ" ]; then
    rm -rf "$D/photos_pool"
    $PY -m pop.rectified "$D/photos_pool" --n "$PHOTOS" --workers "$W" \
      --exclude display=tv --exclude layout=viewer_light --exclude room=dark
    $PY -m cardiac.dataset --dogheart "$D/photos_pool" --size 224 --no-compress "$PNPZ"
  fi
  EXTRA+=("$PNPZ")
fi
wait
echo "data ready after $SECONDS s (extra: ${EXTRA[*]:-none}); training until $(date -d @"$END" +%T)"
names=()
for r in "$@"; do
  IFS='|' read -r name base flags <<<"$r"
  names+=("$name")
  for k in 1 2 3 4 5; do
    init=()
    [ -n "${INIT_DIR:-}" ] && init=(--init "$INIT_DIR/${name}_$k.pt")
    [ -n "${INIT_ONNX_DIR:-}" ] && init=(--init-onnx "$INIT_ONNX_DIR/cardiac_landmark_$k.onnx")
    # shellcheck disable=SC2086
    $PY -m cardiac.train_gpu member --data "$TRAIN" "${EXTRA[@]}" --dev "${DEVS[@]}" --seed $((base + k)) \
      --deadline "$END" --recipe "$name" --out "$D/ck/${name}_$k.pt" "${init[@]}" $flags \
      >"$D/logs/${name}_$k.log" 2>&1 &
  done
done
wait || true # a member that died is reported below, not here
# Measure and pack the members that left a checkpoint: one member lost
# (killed for memory, say) must not lose the others' device minutes.
status=0
for name in "${names[@]}"; do
  for k in 1 2 3 4 5; do echo "== member $k"; tail -n 30 "$D/logs/${name}_$k.log"; done >"$OUT/${name}_log.txt"
  cks=()
  for k in 1 2 3 4 5; do
    if [ -f "$D/ck/${name}_$k.pt" ]; then
      cks+=("$D/ck/${name}_$k.pt")
    else
      echo "train_gpu: member $k of $name left no checkpoint (its log's tail is in ${name}_log.txt)" | tee -a "$OUT/${name}_log.txt" >&2
      status=1
    fi
  done
  [ ${#cks[@]} -gt 0 ] || continue
  $PY -m cardiac.train_gpu eval "${cks[@]}" --dev "${DEVS[@]}" | tee -a "$OUT/${name}_log.txt"
  $PY -m cardiac.train_gpu pack --out "$OUT/$name.pt" "${cks[@]}"
done
exit $status
