#!/bin/bash
# vetlens.exe serve under wine64 (WINEPREFIX set up by the caller), asked
# from Linux over loopback: `keys create` under wine reaches the running
# server through the Windows admin transport (127.0.0.1 + the token in
# admin.token), /v3/health answers, and a real /v3/predict on IMAGE gives
# the Linux binary's `predict` numbers for it (within 1e-6).
#   packaging/windows/wine-serve.sh DIST LINUX_BIN IMAGE
set -euo pipefail
dist=$(realpath "$1") linux=$(realpath "$2") img=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
WINE=${WINE:-/usr/lib/wine/wine64}
d=$(mktemp -d /tmp/vetlens-wine-serve.XXXXXX)
port=$(( 20000 + RANDOM % 20000 ))
"$WINE" "$dist/vetlens.exe" serve --data-dir "Z:${d//\//\\}\\data" --addr "127.0.0.1:$port" >"$d/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$d"' EXIT
for i in $(seq 60); do grep -q 'serving https' "$d/serve.log" && break; sleep 1; done
grep -q 'serving https' "$d/serve.log" || { cat "$d/serve.log"; exit 1; }
for i in $(seq 30); do [ -s "$d/data/admin.token" ] && break; sleep 1; done
key=$("$WINE" "$dist/vetlens.exe" keys create --data-dir "Z:${d//\//\\}\\data" --customer "Clinic A" | tr -d '\r' | grep -o 'vl_[A-Za-z0-9_-]*' | head -1 || true)
if [ -z "$key" ]; then
	"$WINE" "$dist/vetlens.exe" keys create --data-dir "Z:${d//\//\\}\\data" --customer "Clinic B" | tr -d '\r'
	echo "keys create under wine gave no key"; exit 1
fi
echo "keys create under wine: a key (${key:0:8}...)"
curl -sk --fail "https://127.0.0.1:$port/v3/health" -H "x-api-key: $key" >"$d/health.json"
echo "health: $(head -c 200 "$d/health.json")"
printf '{"image":"%s"}' "$(base64 -w0 "$img")" >"$d/req.json"
curl -sk --fail "https://127.0.0.1:$port/v3/predict" -H "x-api-key: $key" -H 'content-type: application/json' \
	--data-binary @"$d/req.json" >"$d/predict.json"
"$linux" predict "$img" >"$d/linux.json"
echo "served /v3/predict: $(head -c 160 "$d/predict.json")"
echo "served /v3/predict vs Linux predict (the server's own fields historic_vhs, historic_vlas, billing removed):"
"$here/jsondiff.py" 1e-6 "$d/linux.json" "$d/predict.json" historic_vhs historic_vlas billing
