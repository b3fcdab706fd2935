#!/usr/bin/env bash
# Turn what gpu_once.sh handed back (DIR with g_1.pt .. g_5.pt) into the
# five landmark members in MODELS (default: the shipped models/): unpack to
# fp32 checkpoints, export each to ONNX with its sidecar and reference
# outputs (cardiac/export_landmarks.py), and rewrite the manifest's checksums.
# VERSION (required) is the new model_version: the members' sidecars and
# the cardiac family's model_version (what the engine and the API report)
# become it, so a result says which models made it; it must say the data
# was synthetic. Measure before committing: `make eval` figures come from
# the Go engine.
#   VERSION=v3.3.0-synthetic-xraysim2.1 models/train/gpu_import.sh DIR [MODELS]
set -euo pipefail
: "${VERSION:?set VERSION to the new model_version, e.g. VERSION=v3.3.0-synthetic-xraysim2.1}"
DIR=$(cd "${1:?usage: gpu_import.sh DIR [MODELS]}" && pwd)
MODELS=$(cd "${2:-$(dirname "$0")/..}" && pwd)
cd "$(dirname "$0")"
PY=${PY:-/usr/bin/python3}
CK=$(mktemp -d)
trap 'rm -rf "$CK"' EXIT
for k in 1 2 3 4 5; do
  [ -f "$DIR/g_$k.pt" ] || { echo "gpu_import: $DIR/g_$k.pt is missing: the ensemble needs all five members" >&2; exit 2; }
done
cks=()
for k in 1 2 3 4 5; do
  $PY -m cardiac.train_gpu unpack "$DIR/g_$k.pt" "$CK"
  cks+=("$CK/g_$k.pt")
done
$PY -m cardiac.export_landmarks --models "$MODELS" --version "$VERSION" "${cks[@]}"
$PY make_manifest.py "$MODELS"
