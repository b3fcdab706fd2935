// Package heldout reads the held-out folder format that
// models/train/sim/heldout.py writes (truth.json beside the images): the
// evaluation tools (bench/evalcardiac, bench/spancheck) and the learning
// loop's phantom regression set (app/learn) read it here; and the
// per-image dump that `bench/evalcardiac --dump` writes and
// `bench/spancheck --dump` and models/train/cardiac/calibrate_spread.py read.
package heldout

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"vetlens/engine/cardiac"
)

// Item is one image of a held-out folder with its truth.
type Item struct {
	File       string                `json:"file"`
	Radiograph bool                  `json:"radiograph"`
	Width      int                   `json:"width"`
	Height     int                   `json:"height"`
	VHS        float64               `json:"vhs"`
	VLAS       float64               `json:"vlas"`
	Landmarks  map[string][2]float64 `json:"landmarks"`
}

// Point is the truth's landmark called name (cardiac.ClassNames).
func (it Item) Point(name string) (cardiac.Point, bool) {
	p, ok := it.Landmarks[name]
	return cardiac.Point{X: p[0], Y: p[1]}, ok
}

// Truth is a held-out folder's truth.json.
type Truth struct {
	// Generator names the world the images come from (written into the
	// model card's eval block).
	Generator string `json:"generator"`
	Items     []Item `json:"items"`
}

// ReadTruth reads dir/truth.json.
func ReadTruth(dir string) (Truth, error) {
	var t Truth
	b, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		return t, fmt.Errorf("read held-out truth: %w", err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("parse held-out truth %s: %w", dir, err)
	}
	return t, nil
}

// DumpLine is one image's truth and result, for calibrating thresholds.
// Negatives (not radiographs) carry only their file, code and
// p_radiograph.
type DumpLine struct {
	File     string  `json:"file"`
	Negative bool    `json:"negative,omitempty"`
	VHS      float64 `json:"vhs"`
	VLAS     float64 `json:"vlas"`
	Code     int     `json:"code"`
	Guard    string  `json:"guard,omitempty"`
	// PRadiograph is the validity classifier's output (rejected below
	// cardiac.ValidityThreshold).
	PRadiograph float64           `json:"p_radiograph"`
	PredVHS     *float64          `json:"pred_vhs"`
	PredVLAS    *float64          `json:"pred_vlas"`
	Spread      *float64          `json:"spread"` // null when not finite (a rejected image has none)
	Landmarks   cardiac.Landmarks `json:"landmarks"`
	// Members are each ensemble member's landmarks (none when rejected).
	Members []cardiac.Landmarks `json:"members,omitempty"`
	// VertebralPeriod is guard 8's score along the reported Vertebra A-B
	// for every radiograph not rejected, also where another guard
	// withheld the VHS first and the engine did not measure it.
	VertebralPeriod *float64 `json:"vertebral_period,omitempty"`
	// LevelledDeg is the turn the engine measured the image under to
	// level a tilted spine (cardiac.Result.LevelledDeg; 0: as it is).
	LevelledDeg float64 `json:"levelled_deg,omitempty"`
	// Column is what the column route found (cardiac.Result.Column;
	// absent on the span route or where no column was found).
	Column *cardiac.Column `json:"column,omitempty"`
	// ColumnVHS is the VHS of the reported heart points over the
	// column's v, also where a guard withheld the VHS (NaN-free: absent
	// when no column was found).
	ColumnVHS *float64 `json:"column_vhs,omitempty"`
	// SilhouetteGap is cardiac.Result.SilhouetteGap, absent where no
	// silhouette measured the heart.
	SilhouetteGap *float64 `json:"silhouette_gap,omitempty"`
	// SilhouetteDoubt is the silhouette's cardiac.HeartAxes.Doubt, absent
	// where no silhouette measured the heart.
	SilhouetteDoubt *float64 `json:"silhouette_doubt,omitempty"`
	// HeartVHSSD is how far the members' VHS over the column's v
	// disagree (cardiac.Result.HeartVHSSD), where a column was found.
	HeartVHSSD *float64 `json:"heart_vhs_sd,omitempty"`
}

// ReadDump reads a dump (one JSON DumpLine a line) by file name.
func ReadDump(path string) (map[string]DumpLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dump: %w", err)
	}
	defer f.Close()
	out := map[string]DumpLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var d DumpLine
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("parse dump %s line %d: %w", path, n, err)
		}
		out[d.File] = d
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read dump %s: %w", path, err)
	}
	return out, nil
}

// Quantile is the q-quantile of x (the sorted value at floor(q * n),
// the largest for q = 1), NaN when x is empty.
func Quantile(x []float64, q float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[int(math.Min(float64(len(s)-1), math.Floor(q*float64(len(s)))))]
}

// ShareWithin is the share of x at or below lim, NaN when x is empty.
func ShareWithin(x []float64, lim float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	n := 0
	for _, v := range x {
		if v <= lim {
			n++
		}
	}
	return float64(n) / float64(len(x))
}

// Mean is the mean of x, NaN when x is empty.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
