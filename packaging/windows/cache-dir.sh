#!/bin/bash
# Print the machine cache folder for the OpenCV cross-build
# (packaging/windows/build-opencv.sh), outside any clone, so that clean
# clones, `git clean` and `git worktree remove` keep it:
#   $VETLENS_CACHE/windows                          when set
#   /var/cache/vetlens/windows                      as root
#   ${XDG_CACHE_HOME:-~/.cache}/vetlens/windows     otherwise
# followed by opencv-4.6.0-KEY, KEY the first 16 hex digits of the
# SHA-256 of build-opencv.sh and mingw-w64.cmake without their comment
# lines: a change to how OpenCV is built gets a new folder (never a stale
# build), a change to a comment does not.
#   packaging/windows/cache-dir.sh [base]   (base: the folder without KEY)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${VETLENS_CACHE:-}" ]; then base=$VETLENS_CACHE
elif [ "$(id -u)" = 0 ]; then base=/var/cache/vetlens
else base=${XDG_CACHE_HOME:-$HOME/.cache}/vetlens
fi
base=$base/windows
if [ "${1:-}" = base ]; then echo "$base"; exit 0; fi
key=$(cat "$here/build-opencv.sh" "$here/mingw-w64.cmake" | grep -v '^[[:space:]]*#' | sha256sum | cut -c1-16)
echo "$base/opencv-4.6.0-$key"
