package pop

import (
	"encoding/json"
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"

	"gocv.io/x/gocv"
)

// TestSizeForAspectMatchesTheTrainersTable checks SizeForAspect against
// models/reference/rectified_size.json, the table the training side's
// rectified_size (models/train/pop/rectified.py) is tested on too, so the
// rectified screen photos the cardiac models train on are sized as the
// product sizes them.
func TestSizeForAspectMatchesTheTrainersTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "models", "reference", "rectified_size.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Quad   [4][2]float64 `json:"quad"`
			Aspect float64       `json:"aspect"`
			Size   *[2]int       `json:"size"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 5 {
		t.Fatalf("only %d cases in the table", len(ref.Cases))
	}
	for i, c := range ref.Cases {
		var q Quad
		for k := range 4 {
			q[k] = Point{X: c.Quad[k][0], Y: c.Quad[k][1]}
		}
		w, h, err := SizeForAspect(q, c.Aspect)
		if c.Size == nil {
			if !errors.Is(err, ErrBadQuad) {
				t.Errorf("case %d: got %dx%d, %v; want ErrBadQuad", i, w, h, err)
			}
			continue
		}
		if err != nil || w != c.Size[0] || h != c.Size[1] {
			t.Errorf("case %d: got %dx%d, %v; want %dx%d", i, w, h, err, c.Size[0], c.Size[1])
		}
	}
}

// TestRectifyRegionIsACropOfRectify checks that a region warped alone
// (rectifyRegion, as snapViewport reads its bands) holds the pixels of the
// same region of the whole rectified image, for tilted quads and regions
// at the image's edges.
func TestRectifyRegionIsACropOfRectify(t *testing.T) {
	frame := gocv.NewMatWithSize(720, 1280, gocv.MatTypeCV8UC3)
	defer frame.Close()
	gocv.RandU(&frame, gocv.NewScalar(0, 0, 0, 0), gocv.NewScalar(255, 255, 255, 0))
	gocv.GaussianBlur(frame, &frame, image.Point{5, 5}, 1.5, 1.5, gocv.BorderReflect)
	quads := []Quad{
		{{200.3, 120.7}, {1010.2, 95.1}, {1050.9, 640.4}, {180.6, 600.2}},
		{{-40, 30}, {1300, -20}, {1250, 700}, {10, 760}}, // reaching out of the frame
		{{400, 200}, {700, 260}, {690, 430}, {390, 470}},
	}
	regions := [][4]int{{0, 0, 640, 7}, {96, 200, 544, 240}, {0, 100, 9, 300}, {630, 0, 640, 360}, {250, 352, 400, 360}}
	for qi, q := range quads {
		full, err := Rectify(frame, q, 640, 360)
		if err != nil {
			t.Fatal(err)
		}
		m, err := rectifyTransform(q, 640, 360)
		if err != nil {
			full.Close()
			t.Fatal(err)
		}
		for _, r := range regions {
			part, err := rectifyRegion(frame, m, r[0], r[1], r[2], r[3])
			if err != nil {
				t.Fatal(err)
			}
			crop := full.Region(image.Rect(r[0], r[1], r[2], r[3]))
			want := crop.Clone()
			crop.Close()
			diff := gocv.NewMat()
			gocv.AbsDiff(part, want, &diff)
			_, maxDiff, _, _ := gocv.MinMaxLoc(diff.Reshape(1, 0))
			if part.Cols() != r[2]-r[0] || part.Rows() != r[3]-r[1] || maxDiff != 0 {
				t.Errorf("quad %d region %v: %dx%d, largest difference from the crop %v", qi, r, part.Cols(), part.Rows(), maxDiff)
			}
			part.Close()
			want.Close()
			diff.Close()
		}
		m.Close()
		full.Close()
	}
	m, err := rectifyTransform(quads[0], 640, 360)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	empty, err := rectifyRegion(frame, m, 5, 5, 5, 9)
	empty.Close()
	if err == nil {
		t.Error("an empty region: no error")
	}
}
