package cardiac

import (
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"reflect"
	"strings"
	"testing"
)

// handLandmarks is the hand-computed 2000x1000 case: VHS 10, VLAS 2, laid
// out like a heart so the plausibility guards pass (the carina under the
// T4-T9 span, VLAS caudal of the long axis in the heart base).
var handLandmarks = Landmarks{
	HeartTop: {1000, 400}, HeartBottom: {1000, 900}, HeartRight: {800, 650}, HeartLeft: {1300, 650},
	VLASPoint: {1160, 520}, VertebraA: {700, 100}, VertebraB: {1300, 100},
}

// ensemble returns five models around base, each landmark jittered by
// +-d px in x for two models (spread = 2*d/sqrt(5)/max(W,H)), and peaks pk.
func ensemble(base Landmarks, d, pk float64) ([]Landmarks, [][NumLandmarks]float64) {
	var ms []Landmarks
	var ps [][NumLandmarks]float64
	for _, off := range []float64{d, -d, 0, 0, 0} {
		m := base
		for k := range m {
			m[k].X += off
		}
		ms = append(ms, m)
		var p [NumLandmarks]float64
		for k := range p {
			p[k] = pk
		}
		ps = append(ps, p)
	}
	return ms, ps
}

// TestResultCodes checks the codes newResult derives from the ensemble
// (the spec body built from them is tested in package api).
func TestResultCodes(t *testing.T) {
	good, goodPk := ensemble(handLandmarks, 3, 0.7)
	wild := append([]Landmarks(nil), good...)
	wild[0][VLASPoint].X += 200 // VLAS dispersion far over MaxVLASDispersion
	nan := append([]Landmarks(nil), good...)
	nan[2][HeartTop].X = math.NaN()
	lowPk := append([][NumLandmarks]float64(nil), goodPk...)
	for i := range lowPk {
		lowPk[i] = [NumLandmarks]float64{0.02, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02}
	}
	popFailed := newResult(2000, 1000, 0.9, good, goodPk)
	popFailed.MarkPoPCorrectionFailed()

	cases := []struct {
		name      string
		r         *Result
		code      Code
		vhs, vlas *float64
		finite    bool // the spread is finite
	}{
		{"code 1", newResult(2000, 1000, 0.9, good, goodPk), 1, ptr(10.0), ptr(2.0), true},
		{"code 4 VLAS dispersion", newResult(2000, 1000, 0.9, wild, goodPk), 4, ptr(10.0), nil, true},
		{"code 5 no peaks", newResult(2000, 1000, 0.9, good, lowPk), 5, nil, nil, true},
		{"code 0 NaN landmark", newResult(2000, 1000, 0.9, nan, goodPk), 0, nil, nil, false},
		{"code 0 NaN validity", newResult(2000, 1000, math.NaN(), nil, nil), 0, nil, nil, false},
		{"code 6 rejection", newResult(2000, 1000, 0.0123456, nil, nil), 6, nil, nil, false},
		{"code 7 PoP failed", popFailed, 7, nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.r.Code != tc.code {
				t.Fatalf("code %d, want %d", tc.r.Code, tc.code)
			}
			if !reflect.DeepEqual(tc.r.VHS, tc.vhs) || !reflect.DeepEqual(tc.r.VLAS, tc.vlas) {
				t.Errorf("vhs %v vlas %v, want %v %v", tc.r.VHS, tc.r.VLAS, tc.vhs, tc.vlas)
			}
			if isFinite(tc.r.Spread) != tc.finite {
				t.Errorf("spread %v, finite want %v", tc.r.Spread, tc.finite)
			}
		})
	}
	// heart_bottom (1000, 900) on 2000x1000, mean of the +-3 px jitter;
	// spread = (2*3^2/5)^0.5/2000 = 0.000949, rounded to 5 decimals.
	r := cases[0].r
	if hb := r.Landmarks[HeartBottom]; hb.X != 1000 || hb.Y != 900 {
		t.Errorf("heart_bottom %v, want (1000, 900)", hb)
	}
	if r.Spread != 0.00095 || r.Confidence != ConfidenceOptimal || r.PopDetected {
		t.Errorf("spread %v confidence %v pop %v", r.Spread, r.Confidence, r.PopDetected)
	}
	if !popFailed.PopDetected {
		t.Error("PoP failed result: PopDetected false")
	}
}

func ptr(v float64) *float64 { return &v }

func TestRender(t *testing.T) {
	for _, sz := range [][2]int{{2000, 1000}, {600, 1100}, {64, 48}} {
		w, h := sz[0], sz[1]
		img := image.NewGray(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = uint8(60 + i%7)
		}
		var l Landmarks
		for k, p := range handLandmarks {
			l[k] = Point{p.X * float64(w) / 2000, p.Y * float64(h) / 1000}
		}
		models, pk := ensemble(l, 1, 0.7)
		r := newResult(w, h, 0.9, models, pk)
		jpg, err := RenderJPEG(img, r)
		if err != nil {
			t.Fatal(err)
		}
		out, err := jpeg.Decode(strings.NewReader(string(jpg)))
		if err != nil {
			t.Fatalf("%v: rendered JPEG does not decode: %v", sz, err)
		}
		if out.Bounds() != img.Bounds() {
			t.Fatalf("%v: rendered size %v", sz, out.Bounds())
		}
		// Drawn pixels are coloured; the input is grey.
		colored := 0
		b := out.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				cr, cg, cb, _ := out.At(x, y).RGBA()
				if max(cr, cg, cb)-min(cr, cg, cb) > 0x3000 {
					colored++
				}
			}
		}
		if colored < w*h/1000 {
			t.Errorf("%v: only %d coloured pixels drawn", sz, colored)
		}
		if w < 200 {
			continue // the value panel covers most of a tiny image
		}
		// The landmark colour is at heart_top.
		ht := r.Landmarks[HeartTop]
		cr, cg, cb, _ := out.At(int(ht.X), int(ht.Y)).RGBA()
		if !(cr > 0xb000 && cg < 0x8000 && cb < 0x8000) {
			t.Errorf("%v: heart_top pixel is %x %x %x, want red", sz, cr, cg, cb)
		}
	}
	// Rejected and NaN results still render without panicking.
	img := image.NewGray(image.Rect(0, 0, 100, 80))
	nan, pk := ensemble(handLandmarks, 1, 0.7)
	nan[0][HeartTop].X = math.NaN()
	for _, r := range []*Result{newResult(100, 80, 0.1, nil, nil), newResult(100, 80, 0.9, nan, pk)} {
		if _, err := RenderJPEG(img, r); err != nil {
			t.Errorf("code %d: %v", r.Code, err)
		}
	}
}

func TestLabelRect(t *testing.T) {
	b := image.Rect(0, 0, 400, 300)
	var placed []image.Rectangle
	// Three landmarks a few pixels apart: no two labels overlap.
	for _, p := range []Point{{200, 150}, {206, 150}, {200, 156}} {
		r := labelRect(b, "heart_top", p, 2, 1, placed)
		for _, q := range placed {
			if r.Overlaps(q) {
				t.Errorf("label %v for %v overlaps %v", r, p, q)
			}
		}
		placed = append(placed, r)
	}
	// All seven numbered labels of a report, landmarks in a tight cluster
	// (a small heart on a large image): none overlaps another.
	placed = nil
	for i, p := range []Point{{200, 150}, {204, 152}, {198, 147}, {203, 146}, {201, 155}, {196, 151}, {206, 149}} {
		r := labelRect(b, fmt.Sprint(i+1), p, 2, 2, placed)
		for _, q := range placed {
			if r.Overlaps(q) {
				t.Errorf("label %d %v overlaps %v", i+1, r, q)
			}
		}
		placed = append(placed, r)
	}
	// Near the edges the box moves inside the image.
	for _, p := range []Point{{399, 150}, {0, 0}, {399, 299}, {5, 299}} {
		if r := labelRect(b, "Vertebra B", p, 2, 2, nil); !r.In(b) {
			t.Errorf("label %v for %v leaves the image", r, p)
		}
	}
}
