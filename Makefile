# VetLens build, test and model pipeline. Targets work on a fresh Debian 12
# machine as root: `make deps` installs only what is missing.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
PY := /usr/bin/python3
GO ?= go

ORT_VERSION := 1.30.0
ORT_DIR := /usr/local/lib/vetlens
ORT_LIB := $(ORT_DIR)/libonnxruntime.so.$(ORT_VERSION)

# Debian packages: training (torch, onnx, scipy for .mat labels), fonts for
# phantom text, pkg-config and a C toolchain for cgo, OpenCV 4.6 for GoCV
# (engine/pop), the X11/Wayland/GL headers for Fyne (ui, cli/gui) and Xvfb
# for running the GUI without a display, poppler-utils (pdftotext, pdftoppm,
# pdffonts) for the PDF report's tests, PostgreSQL for the PostgreSQL
# store's tests (a throwaway cluster; the package's own cluster is not
# used), and dcmtk (img2dcm, dcmcjpeg, dcmodify, storescu/storescp) for the
# DICOM tests' files and the DICOM receiver test, desktop-file-utils for
# the Debian package's desktop entry (make test-deb).
APT_PKGS := python3-torch python3-numpy python3-onnx python3-scipy python3-pil \
	fonts-dejavu-core pkg-config gcc libc6-dev ca-certificates libopencv-dev \
	libgl1-mesa-dev libgl1-mesa-dri xorg-dev libwayland-dev libxkbcommon-dev xvfb xauth x11-apps \
	poppler-utils postgresql dcmtk desktop-file-utils

BIN := vetlens
DATA_DIR ?= $(CURDIR)/.vetlens-data

# The API's address. `make run` leaves it to the setting in $(DATA_DIR)
# (the Server tab's choice; a fresh data dir serves this computer only,
# 127.0.0.1:8443) unless ADDR is given: `make run ADDR=0.0.0.0:8443`
# serves the clinic network for that run. docs/lan.md.
ADDR ?=

.PHONY: all deps deps-apt deps-ort build package deb test-deb test-deb-install run serve test test-go test-store test-leaks test-gui screenshots test-py fuzz models train-cardiac train-usg train-pop eval-popnet \
	manifest eval eval-cardiac eval-fresh eval-usg eval-pop bench bench-api bench-learn clean

all: build

deps: deps-apt deps-ort

deps-apt:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

# The ONNX Runtime shared library ships inside the npm package onnxruntime-node.
deps-ort: $(ORT_LIB)

$(ORT_LIB):
	@command -v npm >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm; }
	tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null && \
	tar xzf onnxruntime-node-$(ORT_VERSION).tgz package/bin/napi-v6/linux/x64/libonnxruntime.so.1 && \
	mkdir -p $(ORT_DIR) && install -m 0644 package/bin/napi-v6/linux/x64/libonnxruntime.so.1 $@ && \
	rm -rf $$tmp && echo "installed $@"

build: deps
	$(GO) build -o $(BIN) .

# The desktop app (needs a display; under Xvfb set DISPLAY) with the API
# served in-process as the Server tab left it (fresh: this computer only),
# its data (bbolt, certificate, keys, listener setting) in $(DATA_DIR).
run: build
	./$(BIN) gui --data-dir $(DATA_DIR) $(if $(ADDR),--serve --addr $(ADDR)) $(RUN_ARGS)

# The headless LAN API alone (default: this computer only).
serve: build
	./$(BIN) serve --data-dir $(DATA_DIR) --addr $(or $(ADDR),127.0.0.1:8443) $(RUN_ARGS)

# The last part, the Windows build under wine, skips with a SKIP line when
# its downloads fail and fails make test when a test fails (see
# test-windows-or-skip); WINDOWS_TESTS=off leaves it out.
test: deps test-go test-py test-gui test-deb test-windows-or-skip

# The Go tests run with a throwaway PostgreSQL cluster (initdb into a temp
# dir, listening on a Unix socket there only, as the postgres user when
# run as root), stopped and removed afterwards: its DSN in
# VETLENS_TEST_POSTGRES runs the storage contract on PostgreSQL as well as
# bbolt, and the two-server billing test. Without it those tests skip.
PGCLUSTER := internal/pgtest/pgcluster.sh
# The Windows seams in pure-Go packages, vetted for Windows without cgo
# by TestWindowsSeams (winseams_test.go, part of go test; docs/packaging.md,
# "Windows"), which also checks that the list is complete; the rest of the
# tree needs cgo (GoCV, ONNX Runtime, Fyne's GLFW) and so the mingw-w64
# cross-build (make windows, run under wine by test-windows).
WINDOWS_PURE_PKGS := ./internal/config ./internal/diskfree ./internal/filelock ./internal/adminsock ./platform/printing
test-go:
	$(GO) vet ./...
	pg=$$(mktemp -d /tmp/vetlens-pg.XXXXXX) && trap "$(PGCLUSTER) stop $$pg" EXIT && dsn=$$($(PGCLUSTER) start $$pg) && \
		VETLENS_TEST_POSTGRES=$$dsn $(GO) test -count=1 -timeout 30m ./...
	$(MAKE) test-leaks
	$(MAKE) fuzz FUZZTIME=5000x

# The storage tests alone, on both adapters: the contract suite on bbolt
# and PostgreSQL, the PostgreSQL adapter's own tests, app (billing, store
# copy), and in cli the store selection, store copy and two `vetlens
# serve` processes billing on one PostgreSQL database.
test-store: deps-apt
	pg=$$(mktemp -d /tmp/vetlens-pg.XXXXXX) && trap "$(PGCLUSTER) stop $$pg" EXIT && dsn=$$($(PGCLUSTER) start $$pg) && \
		export VETLENS_TEST_POSTGRES=$$dsn && $(GO) test -count=1 ./platform/store/... ./app/ && \
		$(GO) test -count=1 -run 'TwoServers|Store|OpenRepos|KeysOnPostgres' ./cli/

# Mat and goroutine leak tests (gocv's MatProfile needs -tags matprofile):
# engine/pop's pipeline, 300 frames of the test video through the live
# preview, outline and capture sessions and a folder of corrupt files
# (platform/camera), and corrupt PNGs sent to /v3/corners and /v3/rectify
# through the HTTP server on loopback (platform/httpapi).
LEAK_PKGS := ./platform/camera/ ./engine/pop/ ./platform/httpapi/
test-leaks:
	$(GO) vet -tags matprofile $(LEAK_PKGS)
	$(GO) test -tags matprofile -count=1 -run 'Leak' $(LEAK_PKGS)

# The desktop app under Xvfb with the test video as its camera: a capture
# session completes, the result is saved for a demo patient, a bloodwork
# panel is screened, every screen is written as PNG to $(SHOTS), the
# in-process listener must answer on every URL the Server tab shows, and a
# DICOM file (--open) is measured with its patient in the patient field
# (08-open.png; 07-learning.png is the Learning tab) and, opened again for
# the demo dog, makes Review ask whose study it is (09-mismatch.png),
# kept for the dog and saved, its report goes to a PACS outbox from the
# Patients tab (10-outbox.png); a
# first start shows what to do first (00-first-start.png);
# checkshots fails on a missing or blank screenshot. `make screenshots`
# copies them into docs/screenshots. The driver (bench/screenshots) runs
# the same code as `vetlens gui` (cli.GUIDriven) but is a separate binary:
# the screenshot run and its XWD decoder do not ship in vetlens.
SHOTS ?= test-output/screenshots
TEST_VIDEO := platform/camera/testdata/screen_sequence.avi
# The radiograph the run opens last as a DICOM file (made by dcmtk's img2dcm,
# tagged by dcmodify): its patient must reach the patient field.
TEST_XRAY := engine/cardiac/testdata/phantoms/xraysim_4_1400x900.jpg
SHOTS_BIN := build/vetlens-screenshots
test-gui: deps
	mkdir -p build && $(GO) build -o $(SHOTS_BIN) ./bench/screenshots
	rm -rf $(SHOTS) && mkdir -p $(SHOTS)
	tmp=$$(mktemp -d) && img2dcm $(TEST_XRAY) $$tmp/xray.dcm && \
		dcmodify -nb -i "(0010,0010)=Smith^Rex" -i "(0010,0020)=DICOM-0042" -i "(0010,2201)=Canine" \
			-i "(0010,2292)=Beagle" -i "(0010,0040)=M" -i "(0010,0030)=20190401" -i "(0010,2297)=Smith^Anna" $$tmp/xray.dcm && \
		XDG_CONFIG_HOME=$$tmp/cfg HOME=$$tmp xvfb-run -a -s "-screen 0 1400x1000x24" \
		./$(SHOTS_BIN) --out $(SHOTS) --app-toml FyneApp.toml --open $$tmp/xray.dcm -- --data-dir $$tmp/data --models models --camera $(TEST_VIDEO); \
		rc=$$?; rm -rf $$tmp; exit $$rc
	$(GO) run ./bench/checkshots --dir $(SHOTS) --want 00-first-start,00-capture-live,01-capture,02-review,03-bloodwork,04-patients,05-server,06-import,07-learning,08-open,09-mismatch,10-outbox

screenshots: test-gui
	mkdir -p docs/screenshots && cp $(SHOTS)/*.png docs/screenshots/

# Fuzz the request decoders (the streaming cardiac JSON reader, checked
# against the buffered reference parser, + base64 + image decode; USG JSON)
# briefly; raise FUZZTIME for a longer run. make test gives a count of
# inputs (5000x), not a duration: a time limit that ends while a slow
# worker is busy fails the run with "context deadline exceeded" (seen on
# the loaded 2-core machine), which says nothing about the code.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseCardiacRequest$$' -fuzztime $(FUZZTIME) -parallel 1 ./api/cardiacv3/
	$(GO) test -run '^$$' -fuzz '^FuzzUSGParseRequest$$' -fuzztime $(FUZZTIME) -parallel 1 ./platform/httpapi/
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) -parallel 1 ./engine/dicom/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeFrame$$' -fuzztime $(FUZZTIME) -parallel 1 ./engine/pop/

# LAN API load over TLS on loopback (USG, 8 clients).
bench-api:
	$(GO) run ./bench/apiload -models models -clients 8 -n 4000

# Fine-tuning time per 100 clinic cases on this machine (docs/learning.md):
# a fixed small cardiac/learn.py run on the shipped models, scaled; one JSON line.
bench-learn:
	cd models/train && $(PY) -m cardiac.bench_learn

# The trainers are one small package (models/train/pyproject.toml: sim,
# cardiac, pop, usg, experiments): run from models/train, the package
# root, the tests import its modules without sys.path edits.
test-py:
	cd models/train && $(PY) -m unittest discover -s tests -t . -v

# ---- packaging ----------------------------------------------------------------
# An installable Linux bundle made by the fyne tool from FyneApp.toml (app
# ID, name, version, icon, desktop entry): build/VetLens.tar.xz with the
# binary, the desktop entry, the icon and an install Makefile. The tool is
# pinned to a release built against our Fyne (v2.8.1). It counts the
# toml's Build up after packaging; the original is put back so the
# checkout stays clean. Not part of make test (a release build takes
# minutes).
FYNE_TOOLS_VERSION := v1.7.4
FYNE := $(GO) run fyne.io/tools/cmd/fyne@$(FYNE_TOOLS_VERSION)
package: deps
	mkdir -p build
	cp FyneApp.toml build/FyneApp.toml.orig
	rm -f VetLens.tar.xz
	$(FYNE) package --os linux --release; rc=$$?; cp build/FyneApp.toml.orig FyneApp.toml; rm -f build/FyneApp.toml.orig; \
		[ $$rc -eq 0 ] && mv VetLens.tar.xz build/VetLens.tar.xz
	@tar -tJf build/VetLens.tar.xz | grep -E 'bin/vetlens$$|\.desktop$$|pixmaps/.*\.png$$'

# The Debian package (docs/packaging.md): build/vetlens_VERSION_ARCH.deb
# with /usr/bin/vetlens, ONNX Runtime in /usr/lib/vetlens, the models and
# their manifest in /usr/share/vetlens/models, the desktop entry and the
# icon; the binary finds them from where it is (internal/config/install.go).
# Depends is derived from the binary (readelf, ldd, dpkg -S) by
# packaging/deb/deb.py; the lists below are only what ldd cannot see: the
# libraries GLFW opens at run time (each must be named in the binary, or
# the build fails), the Mesa software driver libGL needs without a GPU
# driver, and the programs VetLens runs on request.
DEB_REVISION := 1
DEB_MAINTAINER ?= VetLens maintainers <packaging@vetlens.invalid>
DEB_DLOPEN_DEPENDS := libX11.so.6 libXcursor.so.1 libXrandr.so.2 libXinerama.so.1 libXi.so.6 libXxf86vm.so.1 \
	libX11-xcb.so.1 libXrender.so.1 libXext.so.6
DEB_DLOPEN_RECOMMENDS := libxkbcommon.so.0 libwayland-cursor.so.0 libwayland-egl.so.1 libEGL.so.1
DEB_DEPENDS_FILES := dri/swrast_dri.so
DEB_SUGGESTS := cups-client dcmtk python3-torch python3-numpy python3-scipy python3-onnx
DEB_BIN := build/deb/vetlens
DEB = build/vetlens_$(shell sed -n 's/^ *Version *= *"\(.*\)"/\1/p' FyneApp.toml)-$(DEB_REVISION)_$(shell dpkg --print-architecture).deb
# The radiographs test-deb measures with the installed and the build tree's binary.
DEB_TEST_IMAGES := $(TEST_XRAY) engine/cardiac/testdata/phantoms/xraysim_1_640x480.png engine/cardiac/testdata/phantoms/xraysim_6_2000x1500.jpg
deb: deps
	mkdir -p $(dir $(DEB_BIN))
	$(GO) build -ldflags='-s -w' -o $(DEB_BIN) .
	rm -f build/vetlens_*.deb
	BIN=$(DEB_BIN) ORT_LIB=$(ORT_LIB) MODELS=models FYNE_TOML=FyneApp.toml DEB_REVISION=$(DEB_REVISION) \
		DEB_MAINTAINER='$(DEB_MAINTAINER)' DLOPEN_DEPENDS='$(DEB_DLOPEN_DEPENDS)' \
		DLOPEN_RECOMMENDS='$(DEB_DLOPEN_RECOMMENDS)' DEPENDS_FILES='$(DEB_DEPENDS_FILES)' SUGGESTS='$(DEB_SUGGESTS)' \
		packaging/deb/build-deb.sh $(DEB)

# The package unpacked (dpkg -x) and run from another directory gives the
# build tree's predict and usg JSON; its Depends covers what ldd says the
# binary and ONNX Runtime need (packaging/deb/test-deb.sh).
test-deb: deb build
	packaging/deb/test-deb.sh $(DEB) $(BIN) $(DEB_TEST_IMAGES)

# The package on a fresh Debian 12: debootstrap a minimal bookworm, apt
# install the .deb there without Recommends, predict gives the build tree's
# JSON and the window opens under Xvfb (packaging/deb/test-install.sh).
# Needs root, mounts and Debian's mirror; about 3 minutes and 230 MB of
# downloads, so not part of make test.
test-deb-install: deb build
	@command -v debootstrap >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap; }
	packaging/deb/test-install.sh $(DEB) $(BIN) $(DEB_TEST_IMAGES)

# ---- Windows ------------------------------------------------------------------
# `make windows` cross-builds dist/windows/ on Debian 12 (docs/packaging.md,
# "Windows"): vetlens.exe (mingw-w64, posix threads, cgo: GoCV, ONNX
# Runtime, Fyne's Windows driver), vetlens-gui.exe (a launcher of
# `vetlens.exe gui` without a console window, with the icon: the Start
# menu's; packaging/windows/launcher), the OpenCV DLLs, the mingw runtime DLLs
# it imports (found by packaging/windows/dlls.sh from objdump's imports),
# onnxruntime.dll from the same npm package and version as on Linux
# (win32/x64), and the models; config.ModelsDir and ORTLibraryCandidates
# find models/ and onnxruntime.dll beside the exe (internal/config/install.go).
# OpenCV 4.6.0 comes from Debian's own source packages, with only the
# modules gocv's wrapper needs (packaging/windows/build-opencv.sh), built
# once per machine into a cache outside the clone (WIN_CACHE: as root
# /var/cache/vetlens/windows, else ~/.cache/vetlens/windows, or
# $$VETLENS_CACHE/windows), in a folder named by a hash of the build
# script (packaging/windows/cache-dir.sh), so clean clones reuse it and a
# changed script gets a new build. onnxruntime.dll is cached there too.
WIN_CACHE := $(shell packaging/windows/cache-dir.sh base)
WIN_OCV := $(shell packaging/windows/cache-dir.sh)
WIN_WORK := build/windows
WIN_DIST := dist/windows
# vetlens-gui.exe, the desktop app without a console window (the Start menu's)
WIN_LAUNCHER := packaging/windows/launcher
WIN_ORT_DLL := $(WIN_CACHE)/onnxruntime-$(ORT_VERSION)/onnxruntime.dll
WIN_APT_PKGS := gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix cmake dpkg-dev nasm protobuf-compiler \
	libz-mingw-w64-dev bc
# and for running it under wine (xvfb and xwd come with APT_PKGS)
WIN_TEST_APT_PKGS := wine64 curl x11-utils
# The OpenCV libraries the gocv package links (gocv's customenv tag: these
# flags instead of its default Windows list, which names contrib modules).
# flann is not linked directly; its DLL comes in as features2d's import.
WIN_GOCV_LIBS := core imgproc imgcodecs videoio highgui objdetect features2d video dnn calib3d photo
WIN_CC := x86_64-w64-mingw32-gcc-posix
WIN_CXX := x86_64-w64-mingw32-g++-posix
WIN_GOENV := GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=$(WIN_CC) CXX=$(WIN_CXX) \
	CGO_CPPFLAGS="-I$(WIN_OCV)/include/opencv4" \
	CGO_LDFLAGS="-L$(WIN_OCV)/lib $(WIN_GOCV_LIBS:%=-lopencv_%460)"
# The mingw-w64 runtime DLLs (libstdc++-6, libgcc_s_seh-1, libwinpthread-1)
# and zlib live here; dlls.sh copies those the exe and OpenCV import.
WIN_DLL_PATH := $(WIN_OCV)/bin:/usr/lib/gcc/x86_64-w64-mingw32/12-posix:/usr/x86_64-w64-mingw32/lib

.PHONY: deps-windows windows-prereqs windows-opencv windows windows-installer test-windows test-windows-or-skip test-windows-installer

deps-windows:
	packaging/windows/deps-apt.sh $(WIN_APT_PKGS)

# OpenCV for mingw-w64, cached in $(WIN_OCV) (delete it to rebuild). Cold,
# on this 2-core machine shared with other builds, nice -n 19 -j2: 39
# minutes from the sources' download to the cached install (protobuf 4,
# OpenCV 32); the whole of test-windows-or-skip cold 46 minutes (with Go's
# cold mingw build, 5.5), warm 49 s; docs/packaging.md, "Measured".
# Each step's wall time goes to $(WIN_OCV)/times.txt. WIN_JOBS=6 make
# windows gets a larger share of a loaded machine.
WIN_JOBS ?= $(shell nproc)
windows-opencv: deps-windows
	JOBS=$(WIN_JOBS) NICE='nice -n 19' packaging/windows/build-opencv.sh $(WIN_OCV)

$(WIN_ORT_DLL):
	@command -v npm >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm; }
	tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null && \
	tar xzf onnxruntime-node-$(ORT_VERSION).tgz package/bin/napi-v6/win32/x64/onnxruntime.dll && \
	mkdir -p $(dir $@) && install -m 0644 package/bin/napi-v6/win32/x64/onnxruntime.dll $@.$$$$ && mv $@.$$$$ $@ && \
	rm -rf $$tmp && echo "fetched $@"

windows: windows-opencv $(WIN_ORT_DLL)
	mkdir -p $(WIN_WORK)
	nice -n 19 env $(WIN_GOENV) $(GO) build -tags customenv -ldflags='-s -w' -o $(WIN_WORK)/vetlens.exe .
	rm -rf $(WIN_DIST) && mkdir -p $(WIN_DIST)
	install -m 0755 $(WIN_WORK)/vetlens.exe $(WIN_DIST)/
	install -m 0644 $(WIN_ORT_DLL) $(WIN_DIST)/
	tar -C $(dir $(abspath models)) -c --exclude='train/data' --exclude='train/checkpoints' --exclude='train/runs' \
		--exclude='train/tests' --exclude='__pycache__' --exclude='*.pyc' models | tar -C $(WIN_DIST) -x
	$(PY) -c 'import sys; from PIL import Image; Image.open(sys.argv[1]).save(sys.argv[2], sizes=[(16,16),(32,32),(48,48),(256,256)])' \
		assets/icon.png $(WIN_DIST)/vetlens.ico
	x86_64-w64-mingw32-windres --include-dir $(WIN_DIST) -O coff -o $(WIN_WORK)/vetlens-gui-res.o $(WIN_LAUNCHER)/vetlens-gui.rc
	$(WIN_CC) -O2 -Wall -Wextra -municode -mwindows -static-libgcc -s -o $(WIN_DIST)/vetlens-gui.exe \
		$(WIN_LAUNCHER)/vetlens-gui.c $(WIN_WORK)/vetlens-gui-res.o
	packaging/windows/dlls.sh $(WIN_DIST) $(WIN_DLL_PATH) $(WIN_DIST)/vetlens.exe $(WIN_DIST)/vetlens-gui.exe $(WIN_DIST)/onnxruntime.dll
	@du -sh $(WIN_DIST); ls $(WIN_DIST)

# The installer (NSIS, packaging/windows/vetlens.nsi): dist/windows under
# Program Files\VetLens, a Start-menu entry, an uninstaller; the data
# directory stays in the user's %AppData%\vetlens.
WIN_VERSION = $(shell sed -n 's/^ *Version *= *"\(.*\)"/\1/p' FyneApp.toml)
WIN_INSTALLER = build/VetLens-$(WIN_VERSION)-setup.exe
windows-installer: windows
	packaging/windows/deps-apt.sh nsis
	makensis -V2 -DDIST=$(CURDIR)/$(WIN_DIST) -DVERSION=$(WIN_VERSION) -DOUT=$(CURDIR)/$(WIN_INSTALLER) packaging/windows/vetlens.nsi
	@ls -la $(WIN_INSTALLER)

# Everything the Windows build and its tests fetch from the network: the
# Debian packages, Debian's OpenCV sources (unless OpenCV is cached) and
# onnxruntime.dll. After it, make test-windows runs offline.
windows-prereqs:
	packaging/windows/deps-apt.sh $(WIN_APT_PKGS) $(WIN_TEST_APT_PKGS)
	packaging/windows/build-opencv.sh fetch $(WIN_OCV)
	$(MAKE) --no-print-directory $(WIN_ORT_DLL)

# dist/windows under Debian's wine against the Linux build: predict on the
# reference images and usg give the Linux JSON, numbers within 1e-6,
# serve and keys create, the window (packaging/windows/test-windows.sh).
test-windows: windows-prereqs windows build
	packaging/windows/test-windows.sh $(WIN_DIST) $(BIN) $(DEB_TEST_IMAGES)

# make test's part: windows-prereqs failing (nothing to install from) is a
# SKIP line; test-windows failing fails (packaging/windows/test-or-skip.sh).
# WINDOWS_TESTS=require: no skip; WINDOWS_TESTS=off: skip at once.
test-windows-or-skip:
	packaging/windows/test-or-skip.sh '$(MAKE) --no-print-directory windows-prereqs' '$(MAKE) --no-print-directory test-windows'

# The same and the installer: silent install, predict from Program Files,
# silent uninstall leaves nothing (its files, Start-menu entry, key).
test-windows-installer: windows-prereqs windows-installer build
	INSTALLER=$(WIN_INSTALLER) packaging/windows/test-windows.sh $(WIN_DIST) $(BIN) $(DEB_TEST_IMAGES)

# ---- models ---------------------------------------------------------------
# Retrain everything from synthetic data (hours on 2 cores). With real data:
#   make train-cardiac DOGHEART=/path/to/DogHeart   (Images/*.png + Labels/*.mat)
#   make train-usg DATA=cohort.csv
MINUTES ?= 75
models: train-cardiac train-usg manifest

train-cardiac:
	cd models/train && ./train_cardiac.sh $(MINUTES) $(DOGHEART)

# The PoP model family (screen finder, presence, viewport, quality) on
# synthetic composites, CPU only, about 40 minutes after the data (models/POP_MODEL_CARD.md).
train-pop:
	cd models/train && ./train_pop.sh

train-usg:
	cd models/train && $(PY) -m usg.train $(if $(DATA),--data $(abspath $(DATA)))
	$(PY) models/train/make_manifest.py models

manifest:
	$(PY) models/train/make_manifest.py models

# ---- evaluation and benchmarks -----------------------------------------------
eval: eval-cardiac eval-usg eval-pop

# Two held-out sets, so generalisation is measured, not assumed: the
# simulator the models train on (held-out seeds and presentation families,
# with other radiographic views among the negatives) and the first, 2D
# phantom generator, which never goes into training.
eval-cardiac:
	cd models/train && $(PY) -m sim.heldout --generator xraysim --out ../../testdata/heldout --n 320 --negatives 200
	cd models/train && $(PY) -m sim.heldout --generator phantom --out ../../testdata/heldout-phantom --n 300 --negatives 0
	# The simulator's held-out set tilted 15-30 degrees (sim/tilt.py): a family
	# of conditions beyond the training's rotations, where the engine
	# levels the spine (docs/cardiac.md, "Levelling a tilted spine").
	cd models/train && $(PY) -m sim.tilt ../../testdata/heldout ../../testdata/heldout-tilt
	# The simulator's second world (docs/cardiac.md, "The simulator's
	# second world"): the held-out patients drawn with world 2's anatomy.
	cd models/train && $(PY) -m sim.heldout --generator xraysim2 --out ../../testdata/heldout-world2 --n 320 --negatives 0
	# A third family (sim/family3.py): hearts and spines drawn another way,
	# which no model trains on (experiments/2026-11-29-third-generator.md).
	cd models/train && $(PY) -m sim.heldout --generator family3 --out ../../testdata/heldout-family3 --n 300 --negatives 0
	# Each set on the shipped column route and, beside it, the span route
	# it replaced (docs/cardiac.md, "The column route"): the model card's
	# sections NAME and NAME-span.
	for s in "heldout eval" "heldout-phantom eval-phantom" "heldout-tilt eval-tilt" "heldout-world2 eval-world2" "heldout-family3 eval-family3"; do set -- $$s; \
		$(GO) run ./bench/evalcardiac --data testdata/$$1 --route column --card models/CARDIAC_MODEL_CARD.md --section $$2 || exit 1; \
		$(GO) run ./bench/evalcardiac --data testdata/$$1 --route span --card models/CARDIAC_MODEL_CARD.md --section $$2-span || exit 1; done

# A trial's judgement on sets nothing has read: the four cardiac sets drawn
# afresh with every seed moved by FRESH_OFFSET (sim/heldout.py --offset; the
# journals in experiments/ name the offsets used, never reuse one), and the
# third family (sim/family3.py, which no model trains on) the same way,
# then evaluated with FRESH_MODELS, one dump per set for comparing two runs.
FRESH_OFFSET ?= 18000000
FRESH_N ?= 200
FRESH_MODELS ?= models
FRESH_DIR ?= /tmp/vetlens-fresh-$(FRESH_OFFSET)
eval-fresh:
	cd models/train && $(PY) -m sim.heldout --generator xraysim --out $(FRESH_DIR)/sim --n $(FRESH_N) --negatives 10 --offset $(FRESH_OFFSET)
	cd models/train && $(PY) -m sim.heldout --generator xraysim2 --out $(FRESH_DIR)/w2 --n $(FRESH_N) --negatives 10 --offset $(FRESH_OFFSET)
	cd models/train && $(PY) -m sim.tilt $(FRESH_DIR)/sim $(FRESH_DIR)/tilt
	cd models/train && $(PY) -m sim.heldout --generator phantom --out $(FRESH_DIR)/phantom --n $$(( $(FRESH_N) * 3 / 2 )) --negatives 10 --offset $(FRESH_OFFSET)
	cd models/train && $(PY) -m sim.heldout --generator family3 --out $(FRESH_DIR)/family3 --n $$(( $(FRESH_N) * 3 / 2 )) --negatives 10 --offset $(FRESH_OFFSET)
	for s in sim w2 tilt phantom family3; do \
		$(GO) run ./bench/evalcardiac --data $(FRESH_DIR)/$$s --models $(FRESH_MODELS) --dump $(FRESH_DIR)/$$s.jsonl > $(FRESH_DIR)/$$s.json || exit 1; \
		$(PY) -c 'import json,sys; d=json.load(open(sys.argv[2])); print(sys.argv[1], "radiographs", d["radiographs"], "VHS", d["vhs_measured"], "MAE", d["vhs_mae"], "worst", d["vhs_max_ae"])' $$s $(FRESH_DIR)/$$s.json || exit 1; done

# PoP: held-out screen-photo composites (seeds 40,000,000-42,300,000, used
# nowhere else), then corner, detection, quality and (with cardiac models)
# VHS and session figures, for the classical pipeline and for the learned
# one that ships (its models train on pop/variety.py composites only).
# docs/pop.md records the results.
POP_HELDOUT := testdata/pop-heldout
POP_MODELS ?= models
eval-pop:
	cd models/train && for a in "screen --n 160 --seed0 40000000" "radiograph --n 200 --seed0 40500000" \
		"sequence --n 30 --frames 8 --seed0 41000000" "unusable_sequence --n 10 --frames 8 --seed0 41500000" \
		"no_screen --n 20 --seed0 42000000" "heavy_blur --n 20 --seed0 42100000" "black --n 10 --seed0 42200000" \
		"radiograph_export --n 200 --seed0 42300000"; do \
		$(PY) -m pop.composites ../../$(POP_HELDOUT) --kind $$a || exit 1; done
	@echo "== classical pipeline"
	$(GO) run ./bench/evalpop --data $(POP_HELDOUT) --models models
	@echo "== learned pipeline (what ships: pop_models_loaded 5), on a generator it never trained on"
	$(GO) run ./bench/evalpop --data $(POP_HELDOUT) --models models --pop-models $(POP_MODELS)

# The learned PoP finder on variety composites (pop/variety.py) made with
# settings never used in training (--split heldout, seeds 43,000,000+),
# each family left out of training (12 frames each, 48 on fresh seeds
# 43,700,000+ and 120 on fresh seeds 49,100,000+), a larger 200-frame set, sessions of
# unusable frames, 120 ray-traced photos and 12 hand-held sessions of 6
# frames from a third generator (pop/scene3d.py, seeds 48,000,000+), the
# same 48 scenes (seeds 44,000,000+) showing radiographs of the three
# content generators (the training screens' simulator world, its second
# world, sim/phantom.py: radiographs unlike the training screens'), and the plain radiograph files of the cardiac held-out
# set; docs/pop.md records it. POP_MODELS=DIR evaluates another PoP model
# folder (e.g. one written by pop/unpack.py export, with its manifest).
POPNET_HELDOUT := testdata/popnet-heldout
eval-popnet:
	cd models/train && for a in "settings --kind vscreen --n 48 --seed0 43000000" \
		"lofo-display-tv --kind vscreen --n 12 --seed0 43100000 --only display=tv" \
		"lofo-layout-viewer_light --kind vscreen --n 12 --seed0 43200000 --only layout=viewer_light" \
		"lofo-room-dark --kind vscreen --n 12 --seed0 43300000 --only room=dark" \
		"settings200 --kind vscreen --n 200 --seed0 43500000" \
		"lofo48-display-tv --kind vscreen --n 48 --seed0 43700000 --only display=tv" \
		"lofo48-layout-viewer_light --kind vscreen --n 48 --seed0 43800000 --only layout=viewer_light" \
		"lofo48-room-dark --kind vscreen --n 48 --seed0 43900000 --only room=dark" \
		"lofo120-display-tv --kind vscreen --n 120 --seed0 49100000 --only display=tv" \
		"lofo120-layout-viewer_light --kind vscreen --n 120 --seed0 49200000 --only layout=viewer_light" \
		"lofo120-room-dark --kind vscreen --n 120 --seed0 49300000 --only room=dark" \
		"content-xraysim --kind vscreen --n 48 --seed0 44000000 --content xraysim" \
		"content-xraysim2 --kind vscreen --n 48 --seed0 44000000 --content xraysim2" \
		"content-phantom --kind vscreen --n 48 --seed0 44000000 --content phantom"; do set -- $$a; d=$$1; shift; \
		$(PY) -m pop.composites ../../$(POPNET_HELDOUT)/$$d "$$@" --split heldout || exit 1; done
	# Sessions of 20 frames drawn from the unusable kinds must fail cleanly.
	cd models/train && $(PY) -m pop.composites ../../$(POPNET_HELDOUT)/unusable20 --kind unusable_sequence --n 2 --frames 20 --seed0 41510000
	# A third world: monitors on desks ray traced in 3D (pop/scene3d.py),
	# never used in training (about 40 minutes on 2 cores).
	cd models/train && $(PY) -m pop.scene3d ../../$(POPNET_HELDOUT)/scene3d --n 120 --seed0 48000000 --workers 2
	cd models/train && $(PY) -m pop.scene3d ../../$(POPNET_HELDOUT)/scene3d-seq --n 12 --frames 6 --size 1280x720 --seed0 48100000 --workers 2
	for d in settings lofo-display-tv lofo-layout-viewer_light lofo-room-dark settings200 \
		lofo48-display-tv lofo48-layout-viewer_light lofo48-room-dark \
		lofo120-display-tv lofo120-layout-viewer_light lofo120-room-dark content-xraysim content-xraysim2 content-phantom \
		unusable20 scene3d scene3d-seq; do \
		$(GO) run ./bench/evalpop --data $(POPNET_HELDOUT)/$$d --pop-models $(POP_MODELS) --models models || exit 1; done
	# Plain radiograph files: the cardiac held-out set (make eval-cardiac writes it).
	$(GO) run ./bench/evalpop --plain 'testdata/heldout/pos_*' --pop-models $(POP_MODELS)

eval-usg:
	cd models/train && $(PY) -m usg.eval $(if $(DATA),--data $(abspath $(DATA)))

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine/...
	$(GO) test -run '^$$' -bench PreviewDuringSessions ./platform/camera/

clean:
	rm -f $(BIN)
