#!/bin/bash
# OpenCV 4.6.0 for mingw-w64, from Debian 12's own source packages, built
# once per machine and cached (docs/packaging.md, "Windows").
#
#   packaging/windows/build-opencv.sh [fetch] CACHE
#
# CACHE (the Makefile's WIN_OCV, packaging/windows/cache-dir.sh: a machine
# folder outside the clone, named by a hash of this script) is the finished
# install: bin/ (the DLLs), lib/ (import libraries), include/opencv4,
# times.txt (each step's wall time on this machine). It appears in one
# rename when the build is done, so a folder that exists is complete.
# Meanwhile CACHE.work holds the build, and an interrupted one resumes there:
#   src/       the Debian source packages (apt-get source, a deb-src line for
#              the configured mirror) and their unpacked, patched trees
#   deps/      static libjpeg-turbo, libpng and protobuf for mingw-w64
#   build/, install/   OpenCV's build and install
# and is removed after the rename. CACHE.lock (flock) lets one build run at
# a time; another waits, then finds CACHE done. `fetch` only downloads and
# unpacks the sources (the step that needs the network: make test skips
# the Windows tests when it fails); it does nothing when CACHE is done.
#
# Debian's OpenCV source is the +dfsg tarball: its 3rdparty/ folder (the
# bundled zlib, libpng, libjpeg-turbo, protobuf, quirc, ittnotify, OpenCL
# headers, ...) is removed, so OpenCV's BUILD_ZLIB/PNG/JPEG/PROTOBUF cannot
# be used. The same libraries come from Debian instead: zlib from
# libz-mingw-w64-dev (linked statically), libjpeg-turbo, libpng1.6 and
# protobuf (3.21.12, the version Debian's own OpenCV is built with) from
# their Debian source packages, built here as static libraries and linked
# into the OpenCV DLLs; the dnn module's .pb.cc files are regenerated with
# the build machine's protoc 3.21.12 (PROTOBUF_UPDATE_FILES, as
# debian/rules does). Without the bundled quirc, QR decoding is not built
# (VetLens does not use it); without ittnotify, IPP and the OpenCL headers,
# those are off.
#
# Modules: only what the gocv package's C++ wrapper (gocv v0.32.0, *.cpp)
# includes: core imgproc imgcodecs videoio highgui objdetect features2d
# flann video dnn calib3d photo. No contrib, tests, apps, Python, Java.
# Cameras through DirectShow (WITH_DSHOW); Media Foundation is off, as
# OpenCV makes it for mingw.
set -euo pipefail

fetch_only=0
if [ "${1:-}" = fetch ]; then fetch_only=1; shift; fi
CACHE=$(realpath -m "${1:?usage: build-opencv.sh [fetch] CACHE}")
HERE=$(cd "$(dirname "$0")" && pwd)
TOOLCHAIN=$HERE/mingw-w64.cmake
WORK=$CACHE.work
SRC=$WORK/src
DEPS=$WORK/deps
JOBS=${JOBS:-$(nproc)}
NICE=${NICE:-nice -n 19}
SYSROOT=/usr/x86_64-w64-mingw32
TIMES=$WORK/times.txt

done_msg="OpenCV for mingw-w64: cached in $CACHE (delete it to rebuild)"
if [ -e "$CACHE/.done" ]; then echo "$done_msg"; exit 0; fi
mkdir -p "$(dirname "$CACHE")"
exec 9>"$CACHE.lock"
if ! flock -n 9; then
	echo "OpenCV for mingw-w64: another build holds $CACHE.lock; waiting for it"
	flock 9
fi
if [ -e "$CACHE/.done" ]; then echo "$done_msg"; exit 0; fi
mkdir -p "$SRC" "$DEPS"
step() { # step NAME CMD...: run and append the wall time to times.txt
	local name=$1 t0 t1; shift
	t0=$(date +%s.%N)
	"$@"
	t1=$(date +%s.%N)
	printf '%-28s %7.1f s  (%s, -j%s)\n' "$name" "$(echo "$t1 - $t0" | bc)" "$(date -u +%FT%TZ)" "$JOBS" | tee -a "$TIMES"
}

# ---- sources: Debian's, with Debian's patches applied (dpkg-source -x) ----
fetch() { # fetch SRCPKG DIRGLOB
	local pkg=$1 dir=$2
	cd "$SRC"
	if ! compgen -G "$dir/debian" >/dev/null; then
		# The newest version first; if the mirror lacks its files (seen: a
		# security update's .dsc 404 while its index lists it), the release's
		# own (pkg/bookworm). A failed or partial download is removed, so
		# the next run fetches again.
		if ! ls "${pkg}"_*.dsc >/dev/null 2>&1; then
			apt-get source --download-only "$pkg" || {
				rm -f "${pkg}"_*
				echo "$pkg: the newest source cannot be fetched; trying $pkg/$CODENAME"
				apt-get source --download-only "$pkg/$CODENAME"
			} || { rm -f "${pkg}"_*; return 1; }
		fi
		rm -rf $dir
		dpkg-source --no-check -x "${pkg}"_*.dsc >/dev/null || { rm -rf "${pkg}"_* $dir; return 1; }
	fi
}
CODENAME=$(. /etc/os-release && echo "$VERSION_CODENAME")
step fetch-sources bash -euo pipefail -c "$(declare -f fetch); SRC=$SRC; CODENAME=$CODENAME; fetch opencv 'opencv-4.6.0*'; fetch protobuf 'protobuf-3.21.12'; fetch libpng1.6 'libpng1.6-1.6.39'; fetch libjpeg-turbo 'libjpeg-turbo-2.1.5'"
[ $fetch_only = 0 ] || exit 0
OCV_SRC=$(ls -d "$SRC"/opencv-4.6.0*/ | head -1)

CM=(cmake -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DVETLENS_WIN_PREFIX="$DEPS" -DCMAKE_BUILD_TYPE=Release
	-DCMAKE_INSTALL_PREFIX="$DEPS" -DCMAKE_PREFIX_PATH="$DEPS" -Wno-dev)
ZLIB=(-DZLIB_INCLUDE_DIR=$SYSROOT/include -DZLIB_LIBRARY=$SYSROOT/lib/libz.a)

dep() { # dep NAME SRCDIR CMAKEARGS...: configure, build and install one static library
	local name=$1 src=$2; shift 2
	[ -e "$DEPS/.$name.done" ] && return 0
	rm -rf "$DEPS/build-$name"
	step "$name-configure" "${CM[@]}" -S "$src" -B "$DEPS/build-$name" "$@" >"$DEPS/$name-configure.log"
	step "$name-build" $NICE cmake --build "$DEPS/build-$name" -j "$JOBS" --target install >"$DEPS/$name-build.log"
	touch "$DEPS/.$name.done"
}
dep libjpeg-turbo "$SRC/libjpeg-turbo-2.1.5" -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_TURBOJPEG=OFF -DWITH_SIMD=ON
dep libpng "$SRC/libpng1.6-1.6.39" -DPNG_SHARED=OFF -DPNG_STATIC=ON -DPNG_TESTS=OFF "${ZLIB[@]}"
dep protobuf "$SRC/protobuf-3.21.12" -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
	-Dprotobuf_BUILD_LIBPROTOC=OFF -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF

# ---- OpenCV ----
# An interrupted build resumes: configured once (build/CMakeCache.txt),
# then make picks up the objects already compiled.
[ -e "$WORK/build/CMakeCache.txt" ] || step opencv-configure "${CM[@]}" -S "$OCV_SRC" -B "$WORK/build" -DCMAKE_INSTALL_PREFIX="$WORK/install" \
	-DBUILD_LIST=core,imgproc,imgcodecs,videoio,highgui,objdetect,features2d,flann,video,dnn,calib3d,photo \
	-DBUILD_SHARED_LIBS=ON -DBUILD_TESTS=OFF -DBUILD_PERF_TESTS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOCS=OFF \
	-DBUILD_opencv_apps=OFF -DBUILD_JAVA=OFF -DBUILD_opencv_python2=OFF -DBUILD_opencv_python3=OFF \
	-DBUILD_opencv_js=OFF -DBUILD_opencv_world=OFF -DOPENCV_GENERATE_PKGCONFIG=OFF \
	-DENABLE_PRECOMPILED_HEADERS=OFF -DINSTALL_C_EXAMPLES=OFF -DINSTALL_PYTHON_EXAMPLES=OFF \
	-DBUILD_ZLIB=OFF -DBUILD_PNG=OFF -DBUILD_JPEG=OFF -DBUILD_TIFF=OFF -DBUILD_WEBP=OFF \
	-DBUILD_OPENJPEG=OFF -DBUILD_JASPER=OFF -DBUILD_OPENEXR=OFF -DBUILD_PROTOBUF=OFF -DBUILD_ITT=OFF \
	"${ZLIB[@]}" -DWITH_PNG=ON -DWITH_JPEG=ON -DWITH_PROTOBUF=ON -DPROTOBUF_UPDATE_FILES=ON \
	-DProtobuf_PROTOC_EXECUTABLE=/usr/bin/protoc -DProtobuf_INCLUDE_DIR="$DEPS/include" \
	-DProtobuf_LIBRARY="$DEPS/lib/libprotobuf.a" \
	-DWITH_TIFF=OFF -DWITH_WEBP=OFF -DWITH_OPENJPEG=OFF -DWITH_JASPER=OFF -DWITH_OPENEXR=OFF \
	-DWITH_IPP=OFF -DWITH_ITT=OFF -DWITH_OPENCL=OFF -DWITH_ADE=OFF -DWITH_QUIRC=OFF -DWITH_FFMPEG=OFF \
	-DWITH_GSTREAMER=OFF -DWITH_DSHOW=ON -DWITH_MSMF=OFF -DWITH_OBSENSOR=OFF -DWITH_1394=OFF \
	-DWITH_EIGEN=OFF -DWITH_LAPACK=OFF -DWITH_OPENGL=OFF -DWITH_VTK=OFF -DWITH_CUDA=OFF -DWITH_TBB=OFF \
	-DWITH_OPENMP=OFF -DWITH_WIN32UI=ON -DOPENCV_ENABLE_NONFREE=OFF \
	-DOPENCV_BIN_INSTALL_PATH=bin -DOPENCV_LIB_INSTALL_PATH=lib -DOPENCV_3P_LIB_INSTALL_PATH=lib \
	-DOPENCV_CONFIG_INSTALL_PATH=lib/cmake/opencv4 >"$WORK/configure.log"
step opencv-build $NICE cmake --build "$WORK/build" -j "$JOBS" >>"$WORK/build.log"
rm -rf "$WORK/install"
step opencv-install cmake --install "$WORK/build" >"$WORK/install.log"
ls "$WORK/install/bin"/*.dll
# Done: the install becomes CACHE in one rename; the sources and objects go.
cp "$TIMES" "$WORK/install/times.txt"
touch "$WORK/install/.done"
mv -T "$WORK/install" "$CACHE"
rm -rf "$WORK"
echo "$done_msg"
