package app_test

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/dogheart"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiactest"
)

// testPhantom is one of the engine's test phantoms, decoded.
type testPhantom struct {
	cardiactest.Phantom
	Img image.Image
}

// testPhantoms reads the engine's test phantoms (both generators) and
// decodes each once.
func testPhantoms(t *testing.T) []testPhantom {
	t.Helper()
	var out []testPhantom
	for _, p := range cardiactest.Phantoms(t) {
		out = append(out, testPhantom{p, p.Image(t)})
	}
	if len(out) < 12 {
		t.Fatalf("%d test phantoms, want both generators' 6 each", len(out))
	}
	return out
}

// TestCheckVertebralSpan: on the test phantoms of both generators the
// exact T4-T9 span counts six vertebrae, a span a vertebra short or long
// (B moved, or A moved a vertebra cranially) is flagged with its count,
// and a span of six vertebrae' length laid in the lung is not counted as
// six.
func TestCheckVertebralSpan(t *testing.T) {
	cases := []struct {
		name   string
		move   func(l *cardiac.Landmarks)
		wantN  float64 // expected count, 0: must not be taken for six
		flag   bool
		minHit int // of 12 phantoms, at least this many measured and as expected
	}{
		{"exact", func(*cardiac.Landmarks) {}, 6, false, 11},
		{"B one vertebra short", func(l *cardiac.Landmarks) { l[cardiac.VertebraB] = along(*l, 5.0/6) }, 5, true, 11},
		{"B one vertebra long", func(l *cardiac.Landmarks) { l[cardiac.VertebraB] = along(*l, 7.0/6) }, 7, true, 10},
		{"A one vertebra cranial", func(l *cardiac.Landmarks) { l[cardiac.VertebraA] = along(*l, -1.0/6) }, 7, true, 10},
		{"in the lung", func(l *cardiac.Landmarks) {
			a, b := l[cardiac.VertebraA], l[cardiac.VertebraB]
			d := cardiac.Point{X: -(b.Y - a.Y) * 4 / 6, Y: (b.X - a.X) * 4 / 6} // four vertebrae off the column
			if d.Y < 0 {
				d = cardiac.Point{X: -d.X, Y: -d.Y} // ventrally (image y grows ventrally)
			}
			l[cardiac.VertebraA] = cardiac.Point{X: a.X + d.X, Y: a.Y + d.Y}
			l[cardiac.VertebraB] = cardiac.Point{X: b.X + d.X, Y: b.Y + d.Y}
		}, 0, false, 12},
	}
	phantoms := testPhantoms(t)
	for _, tc := range cases {
		hits := 0
		for _, p := range phantoms {
			l := p.Landmarks
			tc.move(&l)
			s := app.CheckVertebralSpan(p.Img, l)
			ok := false
			switch {
			case tc.wantN == 0:
				ok = !s.Six()
			default:
				ok = s.Measured && math.Abs(s.Vertebrae-tc.wantN) < 0.45 && s.OffSix() == tc.flag && s.Six() == !tc.flag
			}
			if s.OffSix() != (s.Warning() != "") {
				t.Errorf("%s, %s: OffSix %v but warning %q", tc.name, p.Name, s.OffSix(), s.Warning())
			}
			if s.OffSix() && !strings.Contains(s.Warning(), "not six") {
				t.Errorf("%s, %s: warning %q does not say the span is not six", tc.name, p.Name, s.Warning())
			}
			t.Logf("%s, %s: %+v", tc.name, p.Name, s)
			if ok {
				hits++
			}
		}
		if hits < tc.minHit {
			t.Errorf("%s: %d of %d phantoms as expected, want at least %d", tc.name, hits, len(phantoms), tc.minHit)
		}
	}
}

// along is the point a fraction f of the way from Vertebra A to B.
func along(l cardiac.Landmarks, f float64) cardiac.Point {
	a, b := l[cardiac.VertebraA], l[cardiac.VertebraB]
	return cardiac.Point{X: a.X + f*(b.X-a.X), Y: a.Y + f*(b.Y-a.Y)}
}

// TestImportDatasetCountsSpans: importing a DogHeart folder counts each
// label's Vertebra A-B span with the image's own vertebral length and
// names the cases whose span is not six vertebrae; an image without a
// column is imported but not counted.
func TestImportDatasetCountsSpans(t *testing.T) {
	src := t.TempDir()
	var noColumn string
	var shortB cardiac.Point
	for _, p := range testPhantoms(t) {
		if !strings.Contains(p.Name, "xraysim_1_") && !strings.Contains(p.Name, "xraysim_3_") {
			continue
		}
		img := p.Img
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		l := p.Landmarks
		stem := "exact"
		if strings.Contains(p.Name, "xraysim_3_") {
			stem, l[cardiac.VertebraB] = "b-on-t8", along(l, 5.0/6)
			shortB = l[cardiac.VertebraB]
		}
		if err := dogheart.WriteCase(src, stem, buf.Bytes(), dogheart.SixPoints(l)); err != nil {
			t.Fatal(err)
		}
		if noColumn == "" { // the same labels on a flat grey image
			buf.Reset()
			if err := png.Encode(&buf, flatLike(img)); err != nil {
				t.Fatal(err)
			}
			noColumn = "flat"
			if err := dogheart.WriteCase(src, noColumn, buf.Bytes(), dogheart.SixPoints(l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	pool := t.TempDir()
	sum, err := app.ImportDataset(t.Context(), src, pool)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Written != 3 || sum.SpanCounted != 2 || len(sum.SpanNotSix) != 1 {
		t.Fatalf("summary %+v, want 3 written, 2 counted, 1 not six", sum)
	}
	// The case named is the one with B on T8.
	got, err := dogheart.ReadLabel(pool, sum.SpanNotSix[0])
	if err != nil {
		t.Fatal(err)
	}
	if b := (cardiac.Point{X: got[5][0], Y: got[5][1]}); b.Dist(shortB) > 1e-3 {
		t.Errorf("case %s named, with B at %v; the case with B on T8 has it at %v", sum.SpanNotSix[0], b, shortB)
	}
}

// TestDesktopReportStatesTheSpanCheck: the PDF report of a hand placement
// states the span check of the clinician's points: six on the exact
// span, not six with B on T8; an image without a column states none.
func TestDesktopReportStatesTheSpanCheck(t *testing.T) {
	var p testPhantom
	for _, q := range testPhantoms(t) {
		if strings.Contains(q.Name, "xraysim_1_") {
			p = q
		}
	}
	img, flat := p.Img, flatLike(p.Img)
	short := p.Landmarks
	short[cardiac.VertebraB] = along(p.Landmarks, 5.0/6)
	for _, tc := range []struct {
		name string
		img  image.Image
		l    cardiac.Landmarks
		want string // "" for no line
	}{
		{"exact", img, p.Landmarks, "about 5.8 vertebrae from A to B (six expected)"},
		{"B on T8", img, short, "about 4.9 vertebrae from A to B, not six"},
		{"no column", flat, p.Landmarks, ""},
	} {
		b := img.Bounds()
		m := &app.Measurement{Result: &cardiac.Result{Width: b.Dx(), Height: b.Dy(), Code: cardiac.CodeNoLandmarks}, Image: tc.img, ModelVersion: "m-1"}
		l := tc.l
		rep, err := app.DesktopReport(app.SaveRequest{Measurement: m, Landmarks: &l, Kind: app.MeasurementManual, PatientID: "Rex"}, time.Now(), app.ReportDetails{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == "" && rep.Span != "" || !strings.Contains(rep.Span, tc.want) {
			t.Errorf("%s: span line %q, want %q", tc.name, rep.Span, tc.want)
		}
	}
}

// flatLike is a flat grey image of img's size: no vertebral column.
func flatLike(img image.Image) *image.Gray {
	flat := image.NewGray(img.Bounds())
	for i := range flat.Pix {
		flat.Pix[i] = 120
	}
	return flat
}
