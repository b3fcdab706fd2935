package pop

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSizeForAspectMatchesTheTrainersTable checks SizeForAspect against
// models/reference/rectified_size.json, the table the training side's
// rectified_size (models/train/pop_rectified.py) is tested on too, so the
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
