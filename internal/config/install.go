package config

import (
	"os"
	"path/filepath"
)

// Where VetLens finds its models and the ONNX Runtime library when no flag
// names them: the one place this is decided (docs/packaging.md). The same
// binary runs alike from the build tree, an unpacked bundle and the Debian
// package, with no flags, because every default below is relative to the
// running executable's directory, EXE (os.Executable, symlinks resolved).
// The first candidate that exists wins:
//
//	models directory                   ONNX Runtime library (ORTLibraryFile)
//	1. --models                        --ort-lib (never replaced by another)
//	2. $VETLENS_MODELS                 $VETLENS_ORT_LIB, $ONNXRUNTIME_SHARED_LIBRARY_PATH
//	3. EXE/models                      EXE/lib/ORT, EXE/ORT            the build tree, a bundle
//	4. EXE/../share/vetlens/models     EXE/../lib/vetlens/ORT          a prefix install: the .deb's /usr/bin/vetlens
//	5. ./models                        /usr/local/lib/vetlens/ORT      the working directory; `make deps`
//
// A models candidate counts only when it holds manifest.json.

// ManifestFile is the models manifest's file name, engine/manifest's
// FileName (engine/manifest's TestManifestFileName checks they agree). It
// is spelled here so that config, a leaf under internal/, imports nothing
// of engine: engine's tests read ORTLibraryCandidates, and an arrow back
// would make a loop.
const ManifestFile = "manifest.json"

// ORTLibraryFile, the ONNX Runtime library's file name, and SystemORTDir,
// where `make deps` installs it (the last place searched; none on
// Windows), are per system: ortlib_unix.go, ortlib_windows.go.

// exeDir is the running executable's directory with symlinks resolved, or
// "" when the system cannot say.
func exeDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// modelsCandidates are the models directories searched after the flag and
// $VETLENS_MODELS, for an executable in dir (rows 3 and 4 of the table).
func modelsCandidates(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{filepath.Join(dir, "models"), filepath.Join(dir, "..", "share", "vetlens", "models")}
}

// ortCandidates are the libraries searched after the flag and the
// environment, for an executable in dir (rows 3 to 5 of the table).
func ortCandidates(dir string) []string {
	var c []string
	if dir != "" {
		c = append(c, filepath.Join(dir, "lib", ORTLibraryFile), filepath.Join(dir, ORTLibraryFile),
			filepath.Join(dir, "..", "lib", "vetlens", ORTLibraryFile))
	}
	if SystemORTDir == "" {
		return c
	}
	return append(c, filepath.Join(SystemORTDir, ORTLibraryFile))
}

// ModelsDir resolves the models directory, first match wins: flagValue
// (--models), $VETLENS_MODELS, the executable-relative folders that hold
// manifest.json, and finally ./models (the table above).
func ModelsDir(flagValue string) string { return modelsDirFor(flagValue, exeDir()) }

// modelsDirFor is ModelsDir for an executable in dir.
func modelsDirFor(flagValue, dir string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := Models.FromEnv(); v != "" {
		return v
	}
	for _, m := range modelsCandidates(dir) {
		if st, err := os.Stat(filepath.Join(m, ManifestFile)); err == nil && !st.IsDir() {
			return m
		}
	}
	return "models"
}

// ORTLibraryCandidates are the ONNX Runtime libraries searched after the
// --ort-lib flag, in order: the ones the environment names
// ($VETLENS_ORT_LIB, $ONNXRUNTIME_SHARED_LIBRARY_PATH), those beside the
// executable and the `make deps` install (the table above). engine/ort
// loads the first that exists.
func ORTLibraryCandidates() []string {
	var c []string
	for _, s := range []Setting{ORTLib, ORTLibCompat} {
		if v := s.FromEnv(); v != "" {
			c = append(c, v)
		}
	}
	return append(c, ortCandidates(exeDir())...)
}
