package app

import (
	"context"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"vetlens/app/dogheart"
	"vetlens/app/learn"
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
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: &Measurement{Result: res, Image: img}, Landmarks: &moved}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella", Measurement: &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300))}}); err != nil {
		t.Fatal(err)
	}
	noImage := &Measurement{Result: res} // an entry without a kept image
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Milo", Measurement: noImage, Landmarks: &moved, Kind: MeasurementManual}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pool, salt := filepath.Join(dir, "pool"), filepath.Join(dir, "salt")
	for _, want := range []struct{ written, edited, inPool int }{{1, 1, 0}, {0, 0, 1}} {
		sum, err := s.Learning.SyncPool(ctx, pool, salt)
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

// TestSavedCorrectionsJoinThePool: manual and edited measurements saved
// through SaveMeasurement (with their images) are, after the next
// SyncPool, cases of the learning pool as the trainer and the
// evaluation read it (learn.LoadPool): of their kind, with the
// clinician's landmarks and values, one patient hash for one patient;
// a correction saved after a sync joins at the following one, and an
// image corrected again replaces its landmarks in the pool.
func TestSavedCorrectionsJoinThePool(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	res, l := landmarkResult()
	imgOf := func(seed uint8) image.Image { // distinct images: the pool keys cases by image
		img := image.NewGray(image.Rect(0, 0, 400, 300))
		img.SetGray(int(seed), 1, color.Gray{Y: 255})
		return img
	}
	edited := l
	edited[cardiac.HeartLeft].X += 12 // short axis 92 px: VHS 10.6
	manual := l
	manual[cardiac.HeartBottom].Y += 30 // long axis 150 px: VHS 11.5
	manual[cardiac.VLASPoint].X += 10
	type saved struct {
		lm   cardiac.Landmarks
		kind string
		vhs  float64
	}
	want := map[string]saved{} // image SHA-256 -> what the clinician saved
	save := func(patient PatientID, m *Measurement, lm cardiac.Landmarks, kind MeasurementKind) Saved {
		t.Helper()
		clk.Add(time.Minute)
		sv, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: patient, Measurement: m, Landmarks: &lm, Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		want[sv.Entry.ImageSHA256] = saved{lm, string(kind), *sv.Entry.VHS}
		return sv
	}
	measured := func(seed uint8) *Measurement { return &Measurement{Result: res, Image: imgOf(seed)} }
	rex := save("Rex", measured(1), edited, MeasurementEdited)
	save("Bella", measured(2), manual, MeasurementManual)
	dir := t.TempDir()
	pool, salt := filepath.Join(dir, "pool"), filepath.Join(dir, "salt")
	check := func(n int) DatasetSummary {
		t.Helper()
		sum, err := s.Learning.SyncPool(ctx, pool, salt)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := learn.LoadPool(pool)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) != n {
			t.Fatalf("pool holds %d cases, want %d", len(cases), n)
		}
		side, err := dogheart.ReadSidecar(pool)
		if err != nil {
			t.Fatal(err)
		}
		sha := map[string]string{}
		for _, p := range side.Cases {
			sha[p.Case] = p.ImageSHA256
		}
		patients := map[string]bool{}
		for _, c := range cases {
			w, ok := want[sha[c.Stem]]
			if !ok {
				t.Fatalf("pool case %s (image %s) was not saved here", c.Stem, sha[c.Stem])
			}
			if c.Kind != w.kind || c.VHS != w.vhs || !c.HasVLAS {
				t.Errorf("case %s: kind %s VHS %v VLAS %v, saved %s VHS %v", c.Stem, c.Kind, c.VHS, c.HasVLAS, w.kind, w.vhs)
			}
			for k := range c.Truth {
				if d := math.Hypot(c.Truth[k].X-w.lm[k].X, c.Truth[k].Y-w.lm[k].Y); d > 1e-9 {
					t.Errorf("case %s: %s at %v, saved at %v", c.Stem, cardiac.ClassNames[k], c.Truth[k], w.lm[k])
				}
			}
			if c.Patient == "" {
				t.Errorf("case %s has no patient hash", c.Stem)
			}
			patients[c.Patient] = true
		}
		if sum := learn.Summarize(cases); sum.ByKind["edited"]+sum.ByKind["manual"] != n || sum.Patients != len(patients) {
			t.Errorf("summary %+v, %d patients seen", sum, len(patients))
		}
		return sum
	}
	check(2)
	// A later save joins at the next sync; the earlier ones stay once.
	save("Rex", measured(3), manual, MeasurementManual)
	if sum := check(3); sum.Written != 1 || sum.Manual != 1 || sum.Edited != 0 || sum.InPool != 2 || sum.Updated != 0 {
		t.Errorf("third sync %+v", sum)
	}
	// Rex's edited measurement reopened and corrected again: the pool
	// case of that image takes the later landmarks (check compares with
	// the last save of each image), and nothing is added.
	again, err := s.Patients.ReopenMeasurement(ctx, "Rex", DesktopCustomer, rex.Entry.Seq)
	if err != nil {
		t.Fatal(err)
	}
	recorrected := edited
	recorrected[cardiac.HeartTop].Y -= 15
	save("Rex", again, recorrected, MeasurementEdited)
	if sum := check(3); sum.Written != 0 || sum.Updated != 1 || sum.InPool != 2 {
		t.Errorf("sync after a re-correction %+v, want 1 updated, 2 in the pool", sum)
	}
	if sum := check(3); sum.Updated != 0 || sum.InPool != 3 {
		t.Errorf("the sync after %+v, want 3 in the pool", sum)
	}
	if sum := func() learn.PoolSummary { c, _ := learn.LoadPool(pool); return learn.Summarize(c) }(); sum.ByKind["manual"] != 2 || sum.ByKind["edited"] != 1 || sum.Patients != 2 {
		t.Errorf("pool by kind %+v, want 2 manual, 1 edited, 2 patients", sum)
	}
}
