package capture

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"

	"vetlens/api"
	"vetlens/engine/cardiac"
	"vetlens/engine/pop"
)

func TestPredictImage(t *testing.T) {
	var gray bytes.Buffer
	png.Encode(&gray, image.NewGray(image.Rect(0, 0, 64, 64)))
	cases := []struct {
		name     string
		in       []byte
		code     cardiac.Code
		pop      bool
		hasVHS   bool
		modelRun bool
		guard    cardiac.Guard
	}{
		{"corrected screen photo is measured on the rectified image", []byte("good:10:0.001"), cardiac.CodeHighConfidence, true, true, true, cardiac.GuardNone},
		{"screen seen but not corrected gives code 7", []byte("nocorr"), cardiac.CodePoPFailed, true, false, false, cardiac.GuardNone},
		{"learned corners at the session's bound are measured", []byte("learned:0.85:10"), cardiac.CodeHighConfidence, true, true, true, cardiac.GuardNone},
		{"learned corners below the session's bound give no number", []byte("learned:0.84:10"), cardiac.CodeNoLandmarks, true, false, true, cardiac.GuardScreenPhotoQuality},
		{"a photo whose mirror agrees within 0.3 v is measured", []byte("mirror:10:10.29"), cardiac.CodeHighConfidence, true, true, true, cardiac.GuardNone},
		{"a photo whose mirror moves more than 0.3 v gives no number", []byte("mirror:10:10.31"), cardiac.CodeNoLandmarks, true, false, true, cardiac.GuardScreenPhotoUnstable},
		{"a photo whose mirror gives no VHS gives no number", []byte("mirror:10:none"), cardiac.CodeNoLandmarks, true, false, true, cardiac.GuardScreenPhotoUnstable},
		{"a blurred photo the models measure no number on keeps their answer", []byte("blur"), cardiac.CodeNoLandmarks, true, false, true, cardiac.GuardNone},
		{"a frame a session would not keep for its quality gives no number", []byte("blurred:10"), cardiac.CodeNoLandmarks, true, false, true, cardiac.GuardScreenPhotoQuality},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePredictor{}
			s, err := PredictImage(context.Background(), p, fakeAnalyzer{}, tc.in, cardiac.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Result
			if r.Code != tc.code || r.PopDetected != tc.pop || (r.VHS != nil) != tc.hasVHS || (p.calls.Load() > 0) != tc.modelRun {
				t.Fatalf("got code %d pop %v vhs %v calls %d", r.Code, r.PopDetected, r.VHS, p.calls.Load())
			}
			if r.Guard != tc.guard || (r.GuardDetail != "") != (tc.guard != cardiac.GuardNone) {
				t.Fatalf("guard %q (detail %q); want guard %q", r.Guard, r.GuardDetail, tc.guard)
			}
			if tc.guard != cardiac.GuardNone && (r.VLAS != nil || s.Measured == nil) {
				t.Fatalf("withheld screen photo: vlas %v, measured image kept %v", r.VLAS, s.Measured != nil)
			}
			if p.refined.Load() != 0 {
				t.Fatal("a rectified screen photo was measured with the refinement stage")
			}
			resp := api.NewCardiacResponse(r, "v")
			if resp.PopDetected == nil || *resp.PopDetected != tc.pop {
				t.Fatalf("pop_detected in body: %v", resp.PopDetected)
			}
		})
	}
	// A plain grey file with no screen: measured as it is, pop_detected false.
	p := &fakePredictor{}
	s, err := PredictImage(context.Background(), p, PoP{}, gray.Bytes(), cardiac.PredictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Result.PopDetected || s.Analysis.PoPDetected || p.calls.Load() != 1 {
		t.Fatalf("plain file: %+v", s)
	}
	if p.refined.Load() != 1 {
		t.Fatal("a radiograph file was measured without the refinement stage")
	}
}

// possibleAnalyzer analyses every image as a plain file, possibly a
// screen photographed at an angle.
type possibleAnalyzer struct{ possible bool }

func (a possibleAnalyzer) AnalyzeBytes(b []byte) (*pop.Analysis, error) {
	return &pop.Analysis{Corners: pop.Corners{Width: 64, Height: 64}, PossibleScreen: a.possible}, nil
}

// measuringPredictor measures every image: code 1, VHS 10.
type measuringPredictor struct{}

func (measuringPredictor) ModelVersion() string { return "test" }

func (measuringPredictor) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	v, l := 10.0, 2.0
	return &cardiac.Result{Code: cardiac.CodeHighConfidence, VHS: &v, VLAS: &l, LandmarksDetected: true, Width: 64, Height: 64}, nil
}

func TestPredictImageWithholdsPossibleScreenPhotos(t *testing.T) {
	var gray bytes.Buffer
	png.Encode(&gray, image.NewGray(image.Rect(0, 0, 64, 64)))
	for _, possible := range []bool{false, true} {
		s, err := PredictImage(context.Background(), measuringPredictor{}, possibleAnalyzer{possible}, gray.Bytes(), cardiac.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := s.Result
		if !possible {
			if r.Code != cardiac.CodeHighConfidence || r.VHS == nil || r.Guard != cardiac.GuardNone {
				t.Fatalf("plain file: code %d vhs %v guard %q", r.Code, r.VHS, r.Guard)
			}
			continue
		}
		if r.Code != cardiac.CodeNoLandmarks || r.Guard != cardiac.GuardPossibleScreenPhoto || r.VHS != nil || r.VLAS != nil || r.LandmarksDetected || r.PopDetected {
			t.Fatalf("possible screen photo: code %d guard %q vhs %v vlas %v landmarks %v pop %v", r.Code, r.Guard, r.VHS, r.VLAS, r.LandmarksDetected, r.PopDetected)
		}
		if s.Measured == nil {
			t.Fatal("the withheld measurement lost its image: the landmarks cannot be reviewed")
		}
	}
}
