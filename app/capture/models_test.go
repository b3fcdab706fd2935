package capture

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"vetlens/app"
	"vetlens/engine/ort"
	"vetlens/engine/pop"
)

// TestServiceReportsPoPModels: with the shipped PoP models the service
// (and so /v3/health and session start) reports 5 models and the family's
// version, and /v3/corners uses the learned finder; without them 0 and
// the classical pipeline's version.
func TestServiceReportsPoPModels(t *testing.T) {
	dir := filepath.Join("..", "..", "models")
	if _, err := os.Stat(filepath.Join(dir, "pop_corners_a.onnx")); err != nil {
		t.Skip("no PoP models shipped in", dir)
	}
	if err := ort.Init(""); err != nil {
		t.Fatal(err)
	}
	m, err := pop.LoadModels(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, tc := range []struct {
		name    string
		an      PoP
		n       int
		version string
	}{
		{"learned", PoP{Models: m}, pop.ExpectedModels, m.Version()},
		{"classical", PoP{}, 0, pop.Version},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewService(nil, nil, tc.an)
			if s.ModelsLoaded() != tc.n || s.ModelVersion() != tc.version {
				t.Fatalf("models %d version %q, want %d %q", s.ModelsLoaded(), s.ModelVersion(), tc.n, tc.version)
			}
			b, err := os.ReadFile(filepath.Join("..", "..", "engine", "pop", "testdata", "screen_0000.jpg"))
			if err != nil {
				t.Fatal(err)
			}
			cs, w, h, err := s.DetectCorners(t.Context(), b)
			if err != nil || w != 960 || h != 540 || cs[1][0] <= cs[0][0] {
				t.Fatalf("corners %v %dx%d: %v", cs, w, h, err)
			}
			if _, _, _, err := s.DetectCorners(t.Context(), []byte("junk")); err == nil || errors.Is(err, app.ErrNoCorners) {
				t.Fatalf("junk: %v", err)
			}
		})
	}
}
