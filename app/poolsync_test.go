package app

import (
	"context"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"vetlens/engine/cardiac"
)

// TestSyncPool: saved corrections count in the pool at once, once each;
// a model measurement and a correction without a kept image are counted
// as not counting, with why.
func TestSyncPool(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	res, l := landmarkResult()
	img := image.NewGray(image.Rect(0, 0, 400, 300))
	img.SetGray(3, 3, color.Gray{Y: 200}) // another image than the model's below
	moved := l
	moved[cardiac.HeartBottom].Y += 20
	if _, err := s.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: &Measurement{Result: res, Image: img}, Landmarks: &moved}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella", Measurement: &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300))}}); err != nil {
		t.Fatal(err)
	}
	noImage := &Measurement{Result: res} // an entry without a kept image
	if _, err := s.SaveMeasurement(ctx, SaveRequest{PatientID: "Milo", Measurement: noImage, Landmarks: &moved, Kind: MeasurementManual}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pool, salt := filepath.Join(dir, "pool"), filepath.Join(dir, "salt")
	for _, want := range []struct{ written, edited, inPool int }{{1, 1, 0}, {0, 0, 1}} {
		sum, err := s.SyncPool(ctx, pool, salt)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Written != want.written || sum.Edited != want.edited || sum.InPool != want.inPool || sum.Skipped != 1 || sum.Uncorrected != 1 {
			t.Fatalf("sync %+v, want %+v, 1 skipped, 1 uncorrected", sum, want)
		}
	}
	ents, err := os.ReadDir(filepath.Join(pool, "Images"))
	if err != nil || len(ents) != 1 {
		t.Fatalf("pool images %v %v", ents, err)
	}
	if _, err := os.Stat(salt); err != nil {
		t.Fatalf("salt: %v", err)
	}
}
