package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/ort"
	"vetlens/engine/pop"
	"vetlens/engine/pop/poport"
	"vetlens/internal/config"
)

// shippedModelsDir is the repository's models directory.
var shippedModelsDir = filepath.Join("..", "..", "models")

// shippedPoPModels loads the shipped PoP models (closed when tb ends), or
// skips tb when none are shipped.
func shippedPoPModels(tb testing.TB) *pop.Models {
	tb.Helper()
	dir := shippedModelsDir
	if _, err := os.Stat(filepath.Join(dir, "pop_corners_a.onnx")); err != nil {
		tb.Skip("no PoP models shipped in", dir)
	}
	if err := ort.Init("", config.ORTLibraryCandidates()...); err != nil {
		tb.Fatal(err)
	}
	m, err := poport.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// TestServiceReportsPoPModels: with the shipped PoP models the service
// (and so /v3/health and session start) reports 5 models and the family's
// version, and /v3/corners uses the learned finder; without them 0 and
// the classical pipeline's version.
func TestServiceReportsPoPModels(t *testing.T) {
	m := shippedPoPModels(t)
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

// BenchmarkPredictImageScreenPhoto1080 is one 1920x1080 screen photo
// through the whole single-photo path with the shipped models: the
// learned PoP pipeline, the cardiac models on the rectified image and
// again on its mirror (MirrorProblem: the frame passes FrameProblem).
func BenchmarkPredictImageScreenPhoto1080(b *testing.B) {
	m := shippedPoPModels(b)
	eng, err := cardiacort.Load(shippedModelsDir, cardiac.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	frame, err := os.ReadFile(filepath.Join("..", "..", "engine", "pop", "testdata", "bench", "screen_0000.jpg"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s, err := PredictImage(ctx, eng, PoP{Models: m}, frame, cardiac.PredictOptions{})
	if err != nil || !s.Analysis.Corrected || !(s.Result.Code.HasVHS() || s.Result.Guard == cardiac.GuardScreenPhotoUnstable) {
		b.Fatalf("the frame does not reach the mirror check: %v %+v", err, s)
	}
	for b.Loop() {
		if _, err := PredictImage(ctx, eng, PoP{Models: m}, frame, cardiac.PredictOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
