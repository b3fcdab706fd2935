#!/bin/bash
# test-install.sh DEB BUILD_BIN IMAGE...: the package installed with apt on
# a fresh Debian 12 (docs/packaging.md). As root, with Debian's mirror:
# debootstrap a minimal bookworm into a temporary folder, `apt-get install
# --no-install-recommends ./DEB` there (so Depends alone must be enough),
# then, inside it, from /tmp with nothing set:
#   - `vetlens predict IMAGE...` prints byte for byte BUILD_BIN's JSON
#     (no /usr/local/lib/vetlens exists there: ONNX Runtime comes from the
#     package);
#   - `vetlens gui` under Xvfb shows a window whose X11 class is the
#     desktop entry's StartupWMClass.
# Xvfb and the X tools are installed after the checks on predict, for the
# window test only. DEB_MIRROR overrides the mirror.
set -euo pipefail

deb=$(realpath "$1") build_bin=$(realpath "$2")
shift 2
images=("$@")
mirror=${DEB_MIRROR:-http://deb.debian.org/debian}
fail() { echo "test-install: $*" >&2; exit 1; }

root=$(mktemp -d /tmp/vetlens-fresh.XXXXXX)
chmod 0755 "$root" # apt's _apt user reads its lists there
cleanup() {
	# Xvfb may still be closing /dev files: try for 10 s, then detach lazily.
	for m in dev proc sys; do
		for i in $(seq 10); do
			mountpoint -q "$root/$m" || break
			umount -R "$root/$m" 2>/dev/null || sleep 1
		done
		! mountpoint -q "$root/$m" || umount -R -l "$root/$m"
	done
	# --one-file-system: never into a mount that is still there.
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT

start=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || { tail -20 "$root.log"; fail "debootstrap"; }
rm -f "$root.log"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --rbind /dev "$root/dev"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
echo "fresh Debian $(cat "$root/etc/debian_version") in $((SECONDS - start)) s"

cp "$deb" "$root/root/"
mkdir -p "$root/root/images"
for i in "${images[@]}"; do cp "$i" "$root/root/images/"; done
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends "/root/$(basename "$deb")" >"$root/root/install.log" 2>&1 ||
	{ tail -20 "$root/root/install.log"; fail "apt-get install ./$(basename "$deb")"; }
echo "installed with $(grep -o '[0-9]* newly installed' "$root/root/install.log") packages, $((SECONDS - start)) s from the start"
[ ! -e "$root/usr/local/lib/vetlens" ] || fail "/usr/local/lib/vetlens exists in the fresh system"

inside=()
for i in "${images[@]}"; do inside+=("/root/images/$(basename "$i")"); done
in_root sh -c 'cd /tmp && exec vetlens predict "$@"' sh "${inside[@]}" >"$root/root/installed.json" ||
	fail "vetlens predict on the fresh system"
(cd "$(dirname "$build_bin")" && "$build_bin" predict "${images[@]}") >"$root/root/build.json"
cmp -s "$root/root/build.json" "$root/root/installed.json" || {
	diff "$root/root/build.json" "$root/root/installed.json" | head >&2
	fail "predict on the fresh system differs from the build tree"
}
echo "predict on the fresh system: byte for byte the build tree's JSON for ${#images[@]} images"

in_root apt-get install -y -q --no-install-recommends xvfb xauth x11-utils >/dev/null 2>&1 || fail "installing Xvfb"
class=$(sed -n 's/^StartupWMClass=//p' "$root/usr/share/applications/com.vetlens.desktop.desktop")
cat >"$root/tmp/gui.sh" <<'SH'
# gui.sh CLASS: start the window, wait up to 60 s for a window of CLASS.
vetlens gui --data-dir /tmp/data >/tmp/gui.log 2>&1 &
pid=$!
for i in $(seq 60); do
	xwininfo -root -tree >/tmp/windows.txt 2>&1
	grep -q "(\"$1\" \"$1\")" /tmp/windows.txt && break
	sleep 1
done
kill $pid
SH
in_root sh -c 'cd /tmp && HOME=/tmp/home timeout 120 xvfb-run -a -s "-screen 0 1280x900x24" sh /tmp/gui.sh "$1"' sh "$class" || true
grep -q "(\"$class\" \"$class\")" "$root/tmp/windows.txt" ||
	fail "no window of class $class: $(cat "$root/tmp/windows.txt" "$root/tmp/gui.log" | tail -20)"
echo "vetlens gui on the fresh system: a window of class $class ($((SECONDS - start)) s in all)"
