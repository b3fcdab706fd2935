// Package testmodels loads the shipped models once per test binary for
// tests outside the engine packages (the HTTP API, the GUI).
package testmodels

import (
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/manifest"
	"vetlens/engine/ort"
	"vetlens/engine/usg"
	"vetlens/engine/usg/usgort"
	"vetlens/internal/config"
)

var (
	usgOnce sync.Once
	usgEng  *usg.Engine
	usgErr  error

	cardiacOnce sync.Once
	cardiacEng  *cardiac.Engine
	cardiacErr  error
)

// Dir is the repository's models directory, wherever the test runs from.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "models")
}

// USG loads the shipped USG model once; a failure (missing ONNX Runtime,
// broken model) fails the test.
func USG(t testing.TB) *usg.Engine {
	t.Helper()
	usgOnce.Do(func() {
		if usgErr = ort.Init("", config.ORTLibraryCandidates()...); usgErr != nil {
			return
		}
		usgEng, usgErr = usgort.Load(Dir())
	})
	if usgErr != nil {
		t.Fatal(usgErr)
	}
	return usgEng
}

// Cardiac loads the cardiac models of $VETLENS_TEST_MODELS (config.TestModels) or the shipped
// ones once, skipping while the manifest lists no landmark model; any
// other failure fails the test.
func Cardiac(t testing.TB) *cardiac.Engine {
	t.Helper()
	dir := Dir()
	if d := config.TestModels.FromEnv(); d != "" {
		dir = d
	}
	m, err := manifest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ByRole(cardiac.RoleLandmark)) == 0 {
		t.Skipf("no %s models in %s/manifest.json: cardiac-model tests skipped", cardiac.RoleLandmark, dir)
	}
	cardiacOnce.Do(func() {
		if cardiacErr = ort.Init("", config.ORTLibraryCandidates()...); cardiacErr != nil {
			return
		}
		cardiacEng, cardiacErr = cardiacort.Load(dir, cardiac.DefaultOptions())
	})
	if cardiacErr != nil {
		t.Fatal(cardiacErr)
	}
	return cardiacEng
}
