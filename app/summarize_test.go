package app

import (
	"encoding/json"
	"strings"
	"testing"

	"vetlens/api"
)

func TestSummarize(t *testing.T) {
	res := func(code int, spread float64, vhs float64) *cardiacResult {
		r := syntheticResult(cardiacCode(code))
		r.Spread = spread
		if r.VHS != nil {
			r.VHS = &vhs
		}
		return r
	}
	sum := summarize([]*cardiacResult{res(6, 0, 0), res(2, 0.006, 10.0), res(1, 0.009, 9.0), res(1, 0.004, 9.4), nil, res(4, 0.001, 11)})
	if *sum.BestPhotoIndex != 3 || *sum.BestVHS != 9.4 || sum.NPhotosProcessed != 5 || sum.NPhotosWithLandmarks != 4 {
		t.Fatalf("%+v", sum)
	}
	// VHS values 10, 9, 9.4, 11: median 9.7, std 0.753 > 0.3 lowers the
	// median spread's level (0.005: good) to review.
	if *sum.MedianVHS != 9.7 || *sum.VHSStd != 0.753 || sum.VHSConfidence != "review" {
		t.Fatalf("vhs: median %v std %v conf %s", *sum.MedianVHS, *sum.VHSStd, sum.VHSConfidence)
	}
	// VLAS 2, 2, 2 (code 4 has none): std 0, median spread 0.006 good.
	if *sum.BestVLAS != 2 || *sum.VLASStd != 0 || sum.VLASConfidence != "good" {
		t.Fatalf("vlas: %+v", sum)
	}
	none := summarize([]*cardiacResult{res(6, 0, 0), res(5, 0.01, 0)})
	if none.BestPhotoIndex != nil || none.BestVHS != nil || none.VHSStd != nil || none.VHSConfidence != "review" || none.NPhotosWithLandmarks != 0 {
		t.Fatalf("%+v", none)
	}
	b, _ := json.Marshal(api.Summary(none))
	if !strings.Contains(string(b), `"best_photo_index":null`) {
		t.Fatal(string(b))
	}
}
