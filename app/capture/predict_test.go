package capture

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"testing"

	"vetlens/api"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiactest"
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
		{"a screen showing a radiograph, not corrected, gives code 7", textPNG("nocorr"), cardiac.CodePoPFailed, true, false, true, cardiac.GuardNone},
		{"a suspected screen showing no radiograph (a photo scene) is rejected as a file", textPNG("scene"), cardiac.CodeRejected, false, false, true, cardiac.GuardNone},
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
			if (resp.PopDetected != nil && *resp.PopDetected) != tc.pop || (resp.PopDetected == nil) != r.Rejected {
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

// displayRejecting is a validity double for screenshots: it rejects every
// image wider than maxW (the whole window, chrome and all) and measures
// any other (code 1, VHS 10, landmark k at (10+k, 20+k) in its own
// pixels). It records whether it was asked to render.
type displayRejecting struct {
	maxW     int
	calls    int
	rendered int
}

func (p *displayRejecting) ModelVersion() string { return "test" }

func (p *displayRejecting) Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error) {
	p.calls++
	if o.Render {
		p.rendered++
	}
	b := img.Bounds()
	r := &cardiac.Result{Width: b.Dx(), Height: b.Dy(), Spread: math.NaN()}
	if b.Dx() > p.maxW {
		r.Code, r.Rejected = cardiac.CodeRejected, true
		return r, nil
	}
	v, l := 10.0, 2.0
	r.Code, r.VHS, r.VLAS, r.LandmarksDetected, r.Spread = cardiac.CodeHighConfidence, &v, &l, true, 0.004
	for k := range r.Landmarks {
		r.Landmarks[k] = cardiac.Point{X: float64(10 + k), Y: float64(20 + k)}
	}
	r.ModelLandmarks = []cardiac.Landmarks{r.Landmarks}
	return r, nil
}

// TestPredictImageMeasuresTheDisplayedImageOfARejectedScreenshot: a
// viewer's screenshot that the validity model rejects as a whole is
// measured on the radiograph displayed inside it, with the positions in
// the screenshot's pixels and the annotated image drawn on the whole
// screenshot; a file it accepts, a rejected file with no displayed image
// and a screenshot whose displayed image is rejected too keep the whole
// file's answer.
func TestPredictImageMeasuresTheDisplayedImageOfARejectedScreenshot(t *testing.T) {
	ph := cardiactest.Find(t, "xraysim_1_640x480.png").Image(t)
	pb := ph.Bounds()
	at := image.Pt(230, 90)
	shot := image.NewRGBA(image.Rect(0, 0, pb.Dx()+300, pb.Dy()+140))
	draw.Draw(shot, shot.Bounds(), image.NewUniform(color.RGBA{30, 32, 36, 255}), image.Point{}, draw.Src)
	draw.Draw(shot, image.Rect(0, 0, shot.Bounds().Dx(), 40), image.NewUniform(color.RGBA{56, 58, 64, 255}), image.Point{}, draw.Src)
	for k := range 4 {
		draw.Draw(shot, image.Rect(10, 60+k*100, 200, 140+k*100), image.NewUniform(color.RGBA{72, 74, 80, 255}), image.Point{}, draw.Src)
	}
	draw.Draw(shot, pb.Sub(pb.Min).Add(at), ph, pb.Min, draw.Src)
	noise := image.NewGray(image.Rect(0, 0, 300, 200))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(i * 7919 % 251)
	}
	encode := func(m image.Image) []byte {
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cases := []struct {
		name       string
		in         []byte
		maxW       int
		wantCode   cardiac.Code
		screenshot bool
	}{
		{"a rejected screenshot is measured on its displayed image", encode(shot), pb.Dx(), cardiac.CodeHighConfidence, true},
		{"an accepted screenshot is measured whole", encode(shot), shot.Bounds().Dx(), cardiac.CodeHighConfidence, false},
		{"a rejected file with nothing displayed in it stays rejected", encode(noise), 100, cardiac.CodeRejected, false},
		{"a screenshot whose displayed image is rejected too stays rejected", encode(shot), pb.Dx() / 2, cardiac.CodeRejected, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &displayRejecting{maxW: tc.maxW}
			s, err := PredictImage(context.Background(), p, possibleAnalyzer{}, tc.in, cardiac.PredictOptions{Render: true})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Result
			whole := s.Measured.Bounds()
			if r.Code != tc.wantCode || r.Width != whole.Dx() || r.Height != whole.Dy() {
				t.Fatalf("code %d, size %dx%d; want code %d on the whole %v", r.Code, r.Width, r.Height, tc.wantCode, whole)
			}
			if !tc.screenshot {
				if !s.Screenshot.Empty() {
					t.Fatalf("Screenshot %v; want none", s.Screenshot)
				}
				return
			}
			want := pb.Sub(pb.Min).Add(at)
			if !s.Screenshot.In(want.Inset(-3)) || s.Screenshot.Dx() < want.Dx()-12 || s.Screenshot.Dy() < want.Dy()-12 {
				t.Fatalf("measured %v; the displayed image is %v", s.Screenshot, want)
			}
			for k, l := range r.Landmarks {
				w := cardiac.Point{X: float64(s.Screenshot.Min.X + 10 + k), Y: float64(s.Screenshot.Min.Y + 20 + k)}
				if l != w || r.ModelLandmarks[0][k] != w {
					t.Fatalf("landmark %d at %v (member %v); want %v in the screenshot's pixels", k, l, r.ModelLandmarks[0][k], w)
				}
			}
			if p.calls != 2 || p.rendered != 1 {
				t.Fatalf("%d predictions, %d asked to render; want the whole (rendered) then the displayed image (not)", p.calls, p.rendered)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(r.Rendered))
			if err != nil || cfg.Width != whole.Dx() || cfg.Height != whole.Dy() {
				t.Fatalf("rendered %dx%d (%v); want the whole screenshot %v", cfg.Width, cfg.Height, err, whole)
			}
		})
	}
}

// suspectAnalyzer analyses every image as a colour photo in which a
// screen (displayed image quad) was suspected but not corrected.
type suspectAnalyzer struct{ quad pop.Quad }

func (a suspectAnalyzer) AnalyzeBytes(b []byte) (*pop.Analysis, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return &pop.Analysis{Corners: pop.Corners{Quad: a.quad, Width: cfg.Width, Height: cfg.Height, Confidence: 0.4}, PoPDetected: true, Chroma: 10}, nil
}

// TestPredictImageCode7OnlyForAScreenShowingARadiograph: a frame whose
// suspected screen was not corrected gets code 7 when the whole frame,
// or the suspected screen's bounding box, is not rejected as a file;
// otherwise the file's rejection (code 6, pop_detected false).
func TestPredictImageCode7OnlyForAScreenShowingARadiograph(t *testing.T) {
	var frame bytes.Buffer
	noise := image.NewGray(image.Rect(0, 0, 400, 300))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(i * 7919 % 251) // no displayed image for ScreenshotViewport
	}
	png.Encode(&frame, noise)
	screen := pop.Quad{{X: 100, Y: 50}, {X: 300, Y: 60}, {X: 290, Y: 250}, {X: 110, Y: 240}} // box 200 x 200
	cases := []struct {
		name  string
		quad  pop.Quad
		maxW  int
		code  cardiac.Code
		calls int
	}{
		{"the whole frame is accepted: code 7", screen, 400, cardiac.CodePoPFailed, 1},
		{"the whole frame is rejected, the suspected screen accepted: code 7", screen, 250, cardiac.CodePoPFailed, 2},
		{"both rejected: code 6", screen, 150, cardiac.CodeRejected, 2},
		{"both rejected, a degenerate quad is not measured: code 6", pop.Quad{}, 150, cardiac.CodeRejected, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &displayRejecting{maxW: tc.maxW}
			s, err := PredictImage(context.Background(), p, suspectAnalyzer{tc.quad}, frame.Bytes(), cardiac.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := s.Result
			if r.Code != tc.code || r.PopDetected != (tc.code == cardiac.CodePoPFailed) || r.VHS != nil || r.LandmarksDetected || p.calls != tc.calls {
				t.Fatalf("code %d pop %v vhs %v landmarks %v calls %d; want code %d after %d calls", r.Code, r.PopDetected, r.VHS, r.LandmarksDetected, p.calls, tc.code, tc.calls)
			}
			if (s.Measured == nil) != (tc.code == cardiac.CodePoPFailed) {
				t.Fatalf("measured image %v for code %d", s.Measured != nil, r.Code)
			}
		})
	}
}
