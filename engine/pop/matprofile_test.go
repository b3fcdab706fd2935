//go:build matprofile

package pop

import (
	"context"
	"path/filepath"
	"testing"

	"gocv.io/x/gocv"

	"vetlens/internal/dicomtest"
	"vetlens/internal/exiftest"
)

// Run with -tags matprofile: every Mat the pipeline creates is closed.
func TestNoMatLeaks(t *testing.T) {
	frames := [][]byte{[]byte("junk")}
	for _, it := range loadTruth(t, "testdata/truth_screen.json") {
		frames = append(frames, readFrame(t, filepath.Join("testdata", it.File)))
	}
	for _, it := range loadTruth(t, "testdata/truth_radiograph.json") {
		frames = append(frames, readFrame(t, filepath.Join("testdata", it.File)))
	}
	for o := uint16(2); o <= 8; o++ { // turned upright by EXIF orientation (orientMat)
		frames = append(frames, exiftest.JPEG(frames[1], exiftest.TIFF(o, false)))
	}
	if dicomtest.Available() == nil { // DICOM frames, readable and not
		set := dicomtest.Build(t)
		for _, name := range []string{"mono1-16bit", "jpeg-baseline", "rle"} {
			frames = append(frames, set.Get(t, name).Bytes(t))
		}
	}
	before := gocv.MatProfile.Count()
	for _, b := range frames {
		if a, err := AnalyzeBytes(b); err == nil {
			_ = a.EncodeRectified()
		}
	}
	if n := gocv.MatProfile.Count() - before; n != 0 {
		t.Fatalf("%d Mats leaked", n)
	}
}

// The learned pipeline closes every Mat too: analysis and its JPEG on
// demand, corners alone, and a cancelled context part-way; variety-seeded
// takes the seeded edge fit (no classical candidate).
func TestNoMatLeaksLearned(t *testing.T) {
	m := testModels(t)
	frames := [][]byte{[]byte("junk"), readFrame(t, "testdata/tinted_radiograph.png")}
	for _, set := range []string{"testdata/truth_screen.json", "testdata/truth_radiograph.json", "testdata/variety/truth_vscreen.json", "testdata/variety-seeded/truth_vscreen.json"} {
		for _, it := range loadTruth(t, set) {
			frames = append(frames, readFrame(t, filepath.Join(filepath.Dir(set), it.File)))
		}
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	before := gocv.MatProfile.Count()
	for _, b := range frames {
		if a, err := m.AnalyzeBytes(t.Context(), b); err == nil {
			_ = a.EncodeRectified() // the JPEG on demand, or its refusal
		}
		_, _ = m.DetectCornersBytes(t.Context(), b)
		_, _ = m.AnalyzeBytes(cancelled, b)
	}
	if n := gocv.MatProfile.Count() - before; n != 0 {
		t.Fatalf("%d Mats leaked", n)
	}
}
