package app_test

import (
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

// testPhantoms reads the engine's test phantoms (both generators) with
// their exact landmarks.
func testPhantoms(t *testing.T) []struct {
	File string
	L    cardiac.Landmarks
} {
	t.Helper()
	dir := filepath.Join("..", "engine", "cardiac", "testdata", "phantoms")
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Phantoms []struct {
			File      string
			Landmarks map[string][2]float64
		}
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	var out []struct {
		File string
		L    cardiac.Landmarks
	}
	for _, p := range truth.Phantoms {
		var l cardiac.Landmarks
		for i, name := range cardiac.ClassNames {
			xy := p.Landmarks[name]
			l[i] = cardiac.Point{X: xy[0], Y: xy[1]}
		}
		out = append(out, struct {
			File string
			L    cardiac.Landmarks
		}{filepath.Join(dir, p.File), l})
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
	imgs := make([]image.Image, len(phantoms))
	for i, p := range phantoms {
		b, err := os.ReadFile(p.File)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := imageproc.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		imgs[i] = img
	}
	for _, tc := range cases {
		hits := 0
		for i, p := range phantoms {
			l := p.L
			tc.move(&l)
			s := app.CheckVertebralSpan(imgs[i], l)
			ok := false
			switch {
			case tc.wantN == 0:
				ok = !s.Six()
			default:
				ok = s.Measured && math.Abs(s.Vertebrae-tc.wantN) < 0.45 && s.OffSix() == tc.flag && s.Six() == !tc.flag
			}
			if s.OffSix() != (s.Warning() != "") {
				t.Errorf("%s, %s: OffSix %v but warning %q", tc.name, p.File, s.OffSix(), s.Warning())
			}
			if s.OffSix() && !strings.Contains(s.Warning(), "not six") {
				t.Errorf("%s, %s: warning %q does not say the span is not six", tc.name, p.File, s.Warning())
			}
			t.Logf("%s, %s: %+v", tc.name, filepath.Base(p.File), s)
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
