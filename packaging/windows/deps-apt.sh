#!/bin/bash
# The Debian packages `make windows` needs, installed only when missing, and
# a deb-src line for the mirror apt already uses (the same suites and
# components), so `apt-get source` can fetch Debian's OpenCV, protobuf,
# libpng and libjpeg-turbo (packaging/windows/build-opencv.sh).
#   packaging/windows/deps-apt.sh PKG...
set -euo pipefail
missing=""
for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
update=0
# (the whole output read: grep -q would stop apt-cache early, and pipefail fail it)
if ! apt-cache showsrc opencv 2>/dev/null | grep '^Package: opencv' >/dev/null; then
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		# deb822: every "Types: deb" stanza again as deb-src.
		sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
			>/etc/apt/sources.list.d/vetlens-deb-src.sources
	elif [ -f /etc/apt/sources.list ]; then
		grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >/etc/apt/sources.list.d/vetlens-deb-src.list
	fi
	echo "added a deb-src line for the configured mirror (/etc/apt/sources.list.d/vetlens-deb-src.*)"
	update=1
fi
if [ -n "$missing" ] || [ $update = 1 ]; then
	apt-get update -q
fi
if [ -n "$missing" ]; then
	echo "installing:$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 $missing
fi
