#!/bin/bash
# test-deb.sh DEB BUILD_BIN IMAGE...: the Debian package works where it is
# installed (docs/packaging.md). It unpacks DEB into a temporary root
# (dpkg -x), checks the layout and the desktop entry, runs the unpacked
# /usr/bin/vetlens from another directory with no flag and no VetLens
# variable, and requires:
#   - ONNX Runtime loaded from the unpacked /usr/lib/vetlens (the dynamic
#     loader's own trace, LD_DEBUG=files, names the file it opened), not
#     the build machine's /usr/local/lib/vetlens;
#   - `vetlens predict IMAGE...` byte for byte the JSON that BUILD_BIN
#     (the build tree's binary, on models/ beside it) prints: the cardiac
#     v3 body has no timing or path field, so nothing is removed before
#     comparing;
#   - `vetlens usg` gives the build tree's JSON too (the USG model), but
#     for meta.elapsed_ms, the run time it reports, removed before comparing;
#   - the control file's Depends (dpkg-deb -I) covers what ldd says the
#     installed binary and ONNX Runtime need (deb.py check).
set -euo pipefail

deb=$(realpath "$1") build_bin=$(realpath "$2")
shift 2
images=()
for i in "$@"; do images+=("$(realpath "$i")"); done
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root elsewhere=$tmp/elsewhere
mkdir -p "$root" "$elsewhere"
dpkg -x "$deb" "$root"

fail() { echo "test-deb: $*" >&2; exit 1; }
id=$(dpkg-deb -f "$deb" Package)
[ "$id" = vetlens ] || fail "package name $id"
for f in usr/bin/vetlens usr/lib/vetlens/libonnxruntime.so.1.30.0 usr/share/vetlens/models/manifest.json \
	usr/share/vetlens/models/train/cardiac/learn.py usr/share/vetlens/models/train/sim/heldout.py usr/share/applications/com.vetlens.desktop.desktop \
	usr/share/icons/hicolor/512x512/apps/com.vetlens.desktop.png; do
	[ -f "$root/$f" ] || fail "missing /$f"
done
# Every model the manifest names is installed with its checksum.
(cd "$root/usr/share/vetlens/models" && /usr/bin/python3 -c '
import hashlib, json, sys
m = json.load(open("manifest.json"))
for e in m["models"]:
    if hashlib.sha256(open(e["file"], "rb").read()).hexdigest() != e["sha256"]:
        sys.exit("checksum of " + e["file"])
print(len(m["models"]), "models match the manifest")') || fail "models"
if [ -n "$(dpkg-deb -c "$deb" | awk '$2 != "root/root"')" ]; then fail "files not owned by root"; fi
desktop-file-validate "$root/usr/share/applications/com.vetlens.desktop.desktop" || fail "desktop entry"
grep -q '^Exec=vetlens gui$' "$root/usr/share/applications/com.vetlens.desktop.desktop" || fail "desktop entry Exec"

# The installed binary, from another directory, nothing set.
installed=$root/usr/bin/vetlens
clean_env=(env -u VETLENS_MODELS -u VETLENS_ORT_LIB -u ONNXRUNTIME_SHARED_LIBRARY_PATH -u VETLENS_TEST_MODELS)
(cd "$elsewhere" && LD_DEBUG=files LD_DEBUG_OUTPUT=$tmp/ld "${clean_env[@]}" "$installed" predict "${images[@]}") \
	>"$tmp/installed.json" || fail "the installed vetlens predict failed"
grep -qh "file=$root/usr/lib/vetlens/libonnxruntime.so.1.30.0 .*dynamically loaded" "$tmp"/ld.* ||
	fail "ONNX Runtime was not loaded from the package's /usr/lib/vetlens: $(grep -h onnxruntime "$tmp"/ld.* | head -3)"
[ -z "$(ls -A "$elsewhere")" ] || fail "predict wrote into the working directory: $(ls -A "$elsewhere")"

(cd "$(dirname "$build_bin")" && "${clean_env[@]}" "$build_bin" predict "${images[@]}") >"$tmp/build.json"
[ "$(wc -l <"$tmp/build.json")" -eq "${#images[@]}" ] || fail "the build tree gave $(wc -l <"$tmp/build.json") bodies for ${#images[@]} images"
[ "$(grep -c '"vhs":[0-9]' "$tmp/build.json")" -eq "${#images[@]}" ] ||
	fail "the build tree did not measure every image: $(head -c 300 "$tmp/build.json")"
if ! cmp -s "$tmp/build.json" "$tmp/installed.json"; then
	diff "$tmp/build.json" "$tmp/installed.json" | head -20 >&2
	fail "the installed predict JSON differs from the build tree's"
fi
echo "predict: the installed binary's JSON for ${#images[@]} images is byte for byte the build tree's"

usg=(usg --bun 40 --creatinine 2.5 --hgb 11 --lymphocytes 1500 --age-months 150)
(cd "$elsewhere" && "${clean_env[@]}" "$installed" "${usg[@]}") >"$tmp/usg-installed.json" || fail "the installed vetlens usg failed"
(cd "$(dirname "$build_bin")" && "${clean_env[@]}" "$build_bin" "${usg[@]}") >"$tmp/usg-build.json"
grep -q '"probability_impaired"' "$tmp/usg-build.json" || fail "usg answered $(head -c 300 "$tmp/usg-build.json")"
# The USG body carries its own run time (meta.elapsed_ms): compared without it.
/usr/bin/python3 - "$tmp/usg-build.json" "$tmp/usg-installed.json" <<'PY' || fail "the installed usg JSON differs from the build tree's"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for body in (a, b):
    if not isinstance(body["meta"].pop("elapsed_ms"), (int, float)):
        sys.exit("meta.elapsed_ms is not a number")
if a != b:
    sys.exit("the usg bodies differ beyond meta.elapsed_ms")
PY
echo "usg: the installed binary's JSON is the build tree's but for meta.elapsed_ms (its run time)"

/usr/bin/python3 "$here/deb.py" check "$deb" "$root"
# The check is not vacuous: the same package with OpenCV's core library
# left out of Depends must fail it.
dpkg-deb -R "$deb" "$tmp/raw"
sed -i '/^Depends:/s/libopencv-core406, //' "$tmp/raw/DEBIAN/control"
grep -q '^Depends:.*libopencv-imgproc406' "$tmp/raw/DEBIAN/control" && ! grep -q 'libopencv-core406' "$tmp/raw/DEBIAN/control" ||
	fail "could not make the tampered control file"
dpkg-deb --root-owner-group -Znone --build "$tmp/raw" "$tmp/tampered.deb" >/dev/null
if /usr/bin/python3 "$here/deb.py" check "$tmp/tampered.deb" "$root" 2>"$tmp/tampered.err"; then
	fail "deb.py check passed a Depends without libopencv-core406"
fi
grep -q 'libopencv_core.so.406.*libopencv-core406 is not in Depends' "$tmp/tampered.err" ||
	fail "the tampered package failed for another reason: $(cat "$tmp/tampered.err")"
echo "a Depends without libopencv-core406 fails the check"
echo "test-deb: $(basename "$deb") passed"
