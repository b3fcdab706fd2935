// Command evalpop measures the PoP pipeline on composites written by
// models/train/pop_composites.py: corner error (share of the frame
// diagonal), corners found on usable frames, radiograph files (grey, and
// tinted, cropped or bordered exports) misread as screen photos, quality
// verdicts and, with --models, VHS error on screen
// photos. Usage:
//
//	go run ./bench/evalpop --data DIR [--models DIR] [--ort-lib PATH] [-v]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"vetlens/engine/pop"
)

type item struct {
	File      string          `json:"file"`
	Kind      string          `json:"kind"`
	Usable    bool            `json:"usable"`
	Corners   [][2]float64    `json:"corners"`
	Screen    [][2]float64    `json:"screen"`
	Mode      string          `json:"mode"`
	Width     int             `json:"width"`
	Height    int             `json:"height"`
	VHS       float64         `json:"vhs"`
	Sequence  *int            `json:"sequence"`
	Frame     int             `json:"frame"`
	Landmarks json.RawMessage `json:"landmarks"`
	Variant   json.RawMessage `json:"variant"`
}

func main() {
	data := flag.String("data", "", "directory with truth_*.json and images")
	models := flag.String("models", "", "cardiac models directory (enables VHS and session figures)")
	ortLib := flag.String("ort-lib", "", "ONNX Runtime shared library")
	verbose := flag.Bool("v", false, "one line per frame")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "evalpop: --data required")
		os.Exit(2)
	}
	if err := run(context.Background(), *data, *models, *ortLib, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "evalpop:", err)
		os.Exit(1)
	}
}

func load(dir string) ([]item, error) {
	files, err := filepath.Glob(filepath.Join(dir, "truth_*.json"))
	if err != nil {
		return nil, err
	}
	var all []item
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Items []item `json:"items"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, doc.Items...)
	}
	return all, nil
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(len(s)-1, i))]
}

func run(ctx context.Context, dir, models, ortLib string, verbose bool) error {
	items, err := load(dir)
	if err != nil {
		return err
	}
	var m *measurer
	if models != "" {
		if m, err = newMeasurer(models, ortLib); err != nil {
			return err
		}
		defer m.close()
	}
	var errs, errsFull, errsViewer, errsScreen []float64
	var usable, found, radio, misread, exports, exportsMisread, unusable, unusableFound, unusableGood, usableGood int
	var vhsErr, vhsErrDirect []float64
	vhsByMode := map[string][]float64{}
	seqs := map[string][]item{}
	for _, it := range items {
		if it.Sequence != nil {
			key := fmt.Sprintf("sequence/%03d", *it.Sequence)
			if it.Kind != "sequence" {
				key = fmt.Sprintf("unusable/%03d", *it.Sequence)
			}
			seqs[key] = append(seqs[key], it)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, it.File))
		if err != nil {
			return err
		}
		a, err := pop.AnalyzeBytes(b)
		if err != nil {
			return fmt.Errorf("%s: %w", it.File, err)
		}
		switch {
		case it.Kind == "radiograph_export":
			exports++
			if a.PoPDetected {
				exportsMisread++
			}
			if verbose {
				var v bytes.Buffer
				_ = json.Compact(&v, it.Variant)
				fmt.Printf("%s %s pop=%v conf=%.2f chroma=%.1f aligned=%s frame_sides=%d quad=%s\n", it.File, v.String(), a.PoPDetected, a.Corners.Confidence, a.Chroma, sideDevs(a.Corners.Screen), a.Corners.FrameSides(), quadString(a.Corners.Screen))
			}
		case it.Kind == "radiograph":
			radio++
			if a.PoPDetected {
				misread++
			}
			if m != nil {
				if v, ok := m.vhs(ctx, b, false); ok {
					vhsErrDirect = append(vhsErrDirect, math.Abs(v-it.VHS))
				}
			}
		case it.Usable:
			usable++
			e := math.NaN()
			if a.Corrected {
				found++
				e = cornerErr(a.Corners.Quad, it)
				errs = append(errs, e)
				errsScreen = append(errsScreen, quadErr(a.Corners.Screen, it.Screen, it))
				if it.Mode == "viewer" {
					errsViewer = append(errsViewer, e)
				} else {
					errsFull = append(errsFull, e)
				}
				if a.Quality.OK() {
					usableGood++
				}
				if m != nil {
					if v, ok := m.vhs(ctx, a.RectifiedJPEG, true); ok {
						vhsErr = append(vhsErr, math.Abs(v-it.VHS))
						vhsByMode[it.Mode] = append(vhsByMode[it.Mode], math.Abs(v-it.VHS))
					}
				}
			}
			if verbose {
				fmt.Printf("%s %s conf=%.2f viewer=%v err=%.2f%% aligned=%s q=%+v quad=%s\n", it.File, it.Mode, a.Corners.Confidence, a.Corners.Viewer, 100*e, sideDevs(a.Corners.Screen), a.Quality, quadString(a.Corners.Quad))
			}
		default:
			unusable++
			if a.Corrected {
				unusableFound++
				if a.Quality.OK() {
					unusableGood++
				}
			}
			if verbose {
				fmt.Printf("%s %s conf=%.2f corrected=%v q=%+v\n", it.File, it.Kind, a.Corners.Confidence, a.Corrected, a.Quality)
			}
		}
	}
	fmt.Printf("usable screen frames: %d, corners found %d (%.1f %%)\n", usable, found, 100*float64(found)/float64(max(1, usable)))
	fmt.Printf("corner error, %% of diagonal: median %.2f, p95 %.2f (full screen n=%d median %.2f p95 %.2f; viewer n=%d median %.2f p95 %.2f)\n",
		100*pct(errs, 0.5), 100*pct(errs, 0.95), len(errsFull), 100*pct(errsFull, 0.5), 100*pct(errsFull, 0.95),
		len(errsViewer), 100*pct(errsViewer, 0.5), 100*pct(errsViewer, 0.95))
	fmt.Printf("monitor active area (Corners.Screen vs truth screen), %% of diagonal: median %.2f, p95 %.2f\n", 100*pct(errsScreen, 0.5), 100*pct(errsScreen, 0.95))
	fmt.Printf("usable frames passing quality: %d of %d found\n", usableGood, found)
	fmt.Printf("radiograph files: %d, misread as screen photos %d (correct %.1f %%)\n", radio, misread, 100*float64(radio-misread)/float64(max(1, radio)))
	if exports > 0 {
		fmt.Printf("radiograph exports (tinted, cropped, bordered files): %d, misread as screen photos %d (correct %.1f %%)\n", exports, exportsMisread, 100*float64(exports-exportsMisread)/float64(exports))
	}
	fmt.Printf("unusable frames: %d, corrected %d, passing quality %d\n", unusable, unusableFound, unusableGood)
	if len(seqs) > 0 {
		if err := readiness(dir, seqs, verbose); err != nil {
			return err
		}
	}
	if m != nil {
		fmt.Printf("VHS MAE on screen photos: %.3f v (n=%d); on the plain radiograph files: %.3f v (n=%d)\n",
			mean(vhsErr), len(vhsErr), mean(vhsErrDirect), len(vhsErrDirect))
		fmt.Printf("VHS MAE on screen photos by mode: full screen %.3f v (n=%d), viewer %.3f v (n=%d)\n",
			mean(vhsByMode["fullscreen"]), len(vhsByMode["fullscreen"]), mean(vhsByMode["viewer"]), len(vhsByMode["viewer"]))
		if len(seqs) > 0 {
			if err := m.sessions(ctx, dir, seqs); err != nil {
				return err
			}
		}
	}
	return nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// cornerErr is the mean distance of the four corners to the truth, as a
// share of the frame diagonal.
func cornerErr(q pop.Quad, it item) float64 { return quadErr(q, it.Corners, it) }

// quadErr is the mean distance of q's corners to truth, over the diagonal.
func quadErr(q pop.Quad, truth [][2]float64, it item) float64 {
	var s float64
	for i := range 4 {
		s += math.Hypot(q[i].X-truth[i][0], q[i].Y-truth[i][1])
	}
	return s / 4 / math.Hypot(float64(it.Width), float64(it.Height))
}

// sideDevs lists each side's angle to the nearer image axis (degrees).
func sideDevs(q pop.Quad) string {
	var p []string
	for i := range 4 {
		p = append(p, fmt.Sprintf("%.2f", pop.Quad{q[i], q[(i+1)%4], q[i], q[(i+1)%4]}.AxisDeviation()))
	}
	return strings.Join(p, "/")
}

func quadString(q pop.Quad) string {
	var p []string
	for _, c := range q {
		p = append(p, fmt.Sprintf("%.1f,%.1f", c.X, c.Y))
	}
	return strings.Join(p, ",")
}
