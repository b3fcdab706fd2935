#!/bin/bash
# The desktop app under wine64 on the X display this runs on (make
# test-windows runs it inside xvfb-run), started as the Start menu does,
# through vetlens-gui.exe (which starts `vetlens.exe gui ARGS` without a
# console and returns): within 60 s a window titled VetLens of vetlens.exe
# appears, and a screenshot of it (xwd) has content (more than 100
# distinct colours), written as PNG to OUT. The app is ended with the
# prefix's wineserver.
#   packaging/windows/wine-gui.sh DIST OUT.png   (WINEPREFIX set up by the caller)
set -euo pipefail
dist=$(realpath "$1") out=$2
data=$(mktemp -d /tmp/vetlens-wine-gui.XXXXXX)
"${WINE:-/usr/lib/wine/wine64}" "$dist/vetlens-gui.exe" --data-dir "Z:${data//\//\\}" >"$data.log" 2>&1 &
trap '/usr/lib/wine/wineserver -k 2>/dev/null || true; rm -rf "$data" "$data.log" "$data.xwd"' EXIT
geom=""
for i in $(seq 60); do
	geom=$(xwininfo -root -tree | sed -n 's/.*"VetLens": ("vetlens.exe" "vetlens.exe")  \([0-9x+]*\).*/\1/p' | head -1)
	[ -n "$geom" ] && break
	sleep 1
done
[ -n "$geom" ] || { echo "no VetLens window in 60 s"; cat "$data.log"; exit 1; }
sleep 10 # let it draw
xwd -root -silent >"$data.xwd"
/usr/bin/python3 - "$data.xwd" "$geom" "$out" <<'PY'
import re, struct, sys
from PIL import Image
d = open(sys.argv[1], 'rb').read()
h = struct.unpack('>25I', d[:100])
w, hh, order, bpl, ncolors = h[4], h[5], h[7], h[12], h[19]
off = h[0] + ncolors * 12
img = Image.frombuffer('RGBX', (w, hh), d[off:off + bpl * hh], 'raw', 'BGRX' if order == 0 else 'XRGB', bpl, 1).convert('RGB')
ww, wh, x, y = map(int, re.match(r'(\d+)x(\d+)\+(\d+)\+(\d+)', sys.argv[2]).groups())
win = img.crop((x, y, x + ww, y + wh))
n = len(set(win.getdata()))
win.save(sys.argv[3])
print(f"window {sys.argv[2]}: {n} distinct colours, {sys.argv[3]}")
sys.exit(0 if n > 100 else 1)
PY
