//go:build matprofile

package pop

import (
	"path/filepath"
	"testing"

	"gocv.io/x/gocv"
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
	before := gocv.MatProfile.Count()
	for _, b := range frames {
		a, _ := AnalyzeBytes(b)
		_ = a
	}
	if n := gocv.MatProfile.Count() - before; n != 0 {
		t.Fatalf("%d Mats leaked", n)
	}
}
