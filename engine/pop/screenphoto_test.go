package pop

import (
	"path/filepath"
	"testing"

	"gocv.io/x/gocv"
)

// frameDecision is one case of a decision on a frame's chroma, p_screen,
// corners and file frame (ScreenPhoto, PossibleScreen).
type frameDecision struct {
	name      string
	chroma    float64
	presence  float64
	c         Corners
	fileFrame bool
	want      bool
}

func TestScreenPhoto(t *testing.T) {
	sure := Corners{Found: true, Confidence: MinGreyCornerConfidence}
	weak := Corners{Found: true, Confidence: MinGreyCornerConfidence - 0.01}
	lost := Corners{Found: false, Confidence: 0.99}
	grey := MinChroma - 0.1
	for _, tc := range []frameDecision{
		{"colour, presence at MinPresence", MinChroma, MinPresence, lost, false, true},
		{"colour, presence under MinPresence", 12, MinPresence - 0.001, sure, false, false},
		{"colour, the file's own frame", 12, 1, sure, true, false},
		{"grey, sure presence, confident corners", grey, MinGreyPresence, sure, false, true},
		{"grey, presence under MinGreyPresence", grey, MinGreyPresence - 0.001, sure, false, false},
		{"grey, corners under MinGreyCornerConfidence", grey, 1, weak, false, false},
		{"grey, corners not found", grey, 1, lost, false, false},
		{"grey, the file's own frame", grey, 1, sure, true, false},
	} {
		if got := ScreenPhoto(tc.chroma, tc.presence, tc.c, tc.fileFrame); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

// TestLearnedGreyScreenPhotos: the screen-photo fixtures converted to grey
// (a camera's monochrome mode, a photo greyed before upload) are still
// taken for screen photos and corrected, most of them; the grey radiograph
// files beside them are not (TestLearnedOnComposites).
func TestLearnedGreyScreenPhotos(t *testing.T) {
	m := testModels(t)
	set := "testdata/truth_screen.json"
	n, found := 0, 0
	for _, it := range loadTruth(t, set) {
		if it.CutOff {
			continue
		}
		colour, err := DecodeFrame(readFrame(t, filepath.Join(filepath.Dir(set), it.File)))
		if err != nil {
			t.Fatal(err)
		}
		g := gocv.NewMat()
		gocv.CvtColor(colour, &g, gocv.ColorBGRToGray)
		gocv.CvtColor(g, &colour, gocv.ColorGrayToBGR)
		g.Close()
		a, err := m.Analyze(t.Context(), colour)
		colour.Close()
		if err != nil {
			t.Fatal(err)
		}
		if a.Chroma >= MinChroma {
			t.Fatalf("%s: chroma %.2f after conversion to grey", it.File, a.Chroma)
		}
		n++
		if a.PoPDetected && a.Corrected {
			found++
			if e := cornerError(a.Corners.Quad, it); e > learnedMaxErr {
				t.Errorf("%s: corner error %.2f %% of the diagonal", it.File, 100*e)
			}
		}
	}
	if n == 0 || 4*found < 3*n {
		t.Fatalf("grey screen photos detected and corrected: %d of %d, want at least three quarters", found, n)
	}
	t.Logf("grey screen photos detected and corrected: %d of %d", found, n)
}
