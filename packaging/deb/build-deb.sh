#!/bin/bash
# build-deb.sh OUT.deb: the Debian package, laid out as docs/packaging.md
# says, with dpkg-deb. `make deb` calls it with these variables:
#   BIN          the vetlens binary to ship
#   ORT_LIB      the ONNX Runtime library (installed as /usr/lib/vetlens/<its name>)
#   MODELS       the models folder (manifest.json, ONNX files, references, trainer)
#   FYNE_TOML    FyneApp.toml: app ID, name, version, icon, desktop entry
#   DEB_REVISION the Debian revision after FyneApp.toml's version
#   DEB_MAINTAINER
#   DLOPEN_DEPENDS     sonames BIN opens at run time that it cannot work without (X11)
#   DLOPEN_RECOMMENDS  sonames BIN opens at run time for optional paths (Wayland, EGL)
#   DEPENDS_FILES      other files it needs at run time (the Mesa software driver)
#   SUGGESTS           programs it runs when asked: printing, PACS, the trainer
# Depends and Recommends are derived by deb.py from the binary and the
# library (readelf, ldd, dpkg -S), never written by hand.
set -euo pipefail

out=$1
here=$(dirname "$0")
deb_py() { /usr/bin/python3 "$here/deb.py" "$@"; }
field() { sed -n "s/^ *$1 *= *\"\{0,1\}\([^\"]*\)\"\{0,1\} *\$/\1/p" "$FYNE_TOML" | head -1; }

id=$(field ID)
version=$(field Version)-$DEB_REVISION
arch=$(dpkg --print-architecture)
icon=$(dirname "$FYNE_TOML")/$(field Icon)
multiarch=$(gcc -print-multiarch)

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"

install -D -m 0755 "$BIN" "$root/usr/bin/vetlens"
install -D -m 0644 "$ORT_LIB" "$root/usr/lib/vetlens/$(basename "$ORT_LIB")"

# The models with their manifest, export references and the fine-tuning
# trainer (vetlens learn runs python3 -m cardiac.learn in models/train); not the trainer's
# tests, caches or local training data.
mkdir -p "$root/usr/share/vetlens"
tar -C "$(dirname "$MODELS")" -c \
	--exclude='train/data' --exclude='train/checkpoints' --exclude='train/runs' --exclude='train/tests' \
	--exclude='__pycache__' --exclude='*.pyc' "$(basename "$MODELS")" | tar -C "$root/usr/share/vetlens" -x
find "$root/usr/share/vetlens" -type d -exec chmod 0755 {} + && find "$root/usr/share/vetlens" -type f -exec chmod 0644 {} +
find "$root/usr/share/vetlens/models/train" -maxdepth 1 -name '*.sh' -exec chmod 0755 {} +
test -f "$root/usr/share/vetlens/models/manifest.json"

install -D -m 0644 "$icon" "$root/usr/share/icons/hicolor/512x512/apps/$id.png"
mkdir -p "$root/usr/share/applications"
deb_py desktop "$FYNE_TOML" "vetlens gui" >"$root/usr/share/applications/$id.desktop"

depends=$(deb_py depends --elf "$BIN" --elf "$ORT_LIB" --dlopen-from "$BIN" --dlopen $DLOPEN_DEPENDS \
	--file $(for f in $DEPENDS_FILES; do echo "/usr/lib/$multiarch/$f"; done))
recommends=$(deb_py depends --dlopen-from "$BIN" --dlopen $DLOPEN_RECOMMENDS)

mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: vetlens
Version: $version
Architecture: $arch
Maintainer: $DEB_MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: $recommends
Suggests: $(echo $SUGGESTS | sed 's/ /, /g')
Section: science
Priority: optional
Description: veterinary cardiac measurement and feline USG screening
 VetLens measures the Vertebral Heart Score and the Vertebral Left Atrial
 Size on canine lateral thoracic radiographs (JPEG, PNG, DICOM) with a
 landmark model ensemble, screens feline bloodwork for low urine specific
 gravity, and serves both to the clinic network over HTTPS. The desktop
 app is 'vetlens'; 'vetlens help' lists the commands.
 .
 The shipped models are trained on synthetic data and are not validated
 for clinical use.
EOF

mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "$out: $(du -h "$out" | cut -f1), installed $(du -sh --exclude=DEBIAN "$root" | cut -f1)"
