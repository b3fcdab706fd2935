// Command evalcardiac measures the shipped cardiac models on a held-out
// set written by models/train/sim/heldout.py, through the same engine the
// product runs, and writes the figures into the model card's section for
// that set.
//
//	go run ./bench/evalcardiac --data testdata/heldout --card models/CARDIAC_MODEL_CARD.md --section eval
//	go run ./bench/evalcardiac --data testdata/heldout-phantom --card models/CARDIAC_MODEL_CARD.md --section eval-phantom
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/imageproc"
	"vetlens/engine/ort"
	"vetlens/internal/config"
)

// Summary is what the evaluation found; it is printed as JSON and rendered
// into the model card.
type Summary struct {
	Radiographs          int            `json:"radiographs"`
	Negatives            int            `json:"negatives"`
	VHSMeasured          int            `json:"vhs_measured"`
	VHSMAE               num            `json:"vhs_mae"`
	VHSMedianAE          num            `json:"vhs_median_ae"`
	VHSP95AE             num            `json:"vhs_p95_ae"`
	VHSCoverage          num            `json:"vhs_coverage"`   // share of radiographs with a VHS
	VHSWithin05          num            `json:"vhs_within_0_5"` // share of returned VHS within 0.5 v
	VHSWithin10          num            `json:"vhs_within_1_0"` // within 1.0 v
	VHSMaxAE             num            `json:"vhs_max_ae"`     // the worst returned error
	Route                string         `json:"route"`
	VLASMeasured         int            `json:"vlas_measured"`
	VLASMAE              num            `json:"vlas_mae"`
	ClassAccuracy        num            `json:"class_accuracy"`
	NegativesRejected    num            `json:"negatives_rejected"`
	RadiographsRejected  num            `json:"radiographs_rejected"`
	LandmarkErrPctMedian num            `json:"landmark_err_pct_median"`
	PerLandmarkPct       map[string]num `json:"per_landmark_err_pct_median"`
	Codes                map[int]int    `json:"result_codes"`
	ByConfidence         map[string]agg `json:"by_confidence"`
	// Columns is how many radiographs the column route found a column on;
	// ColumnRatioMedian the median of its v over the labels' |A-B| / 6,
	// and ColumnWithin10 the share of those within 10 % of 1 (the
	// column's own accuracy, whatever the heart points and the guards do).
	Columns            int `json:"columns"`
	ColumnRatioMedian  num `json:"column_ratio_median"`
	ColumnWithin10     num `json:"column_within_10pct"`
	LatencyMedianMs    num `json:"latency_median_ms"`
	Square1024MedianMs num `json:"latency_1024_median_ms"`
}

// num is a figure that may be undefined (NaN: nothing measured); it is
// written to JSON as null.
type num float64

// MarshalJSON writes NaN and infinities as null.
func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

type agg struct {
	N             int `json:"n"`
	MedianVHSErr  num `json:"median_vhs_err"`
	MeanVHSErr    num `json:"mean_vhs_err"`
	MedianSpread  num `json:"median_spread"`
	errs, spreads []float64
}

func sizeClass(vhs float64) string {
	switch {
	case vhs < 8.2:
		return "small"
	case vhs <= 10:
		return "normal"
	default:
		return "large"
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	data := flag.String("data", "testdata/heldout", "held-out folder with truth.json")
	models := flag.String("models", "", "models directory (default: the usual resolution)")
	card := flag.String("card", "", "model card to update between the eval markers")
	lib := flag.String("ort-lib", "", "ONNX Runtime library")
	firstStage := flag.Bool("first-stage", false, "measure the first stage alone (no refinement models); not with --card")
	noLevel := flag.Bool("no-level", false, "measure every image as it is, without levelling a tilted spine; not with --card")
	section := flag.String("section", "eval", "the card's section: between <!-- NAME:begin --> and <!-- NAME:end -->")
	route := flag.String("route", "column", "how v is measured: column (the column the image shows; shipped) or span (the models' Vertebra A-B)")
	dump := flag.String("dump", "", "write one JSON line per image (truth, prediction, code, guard, spread, p_radiograph, vertebral period score; negatives flagged) to this file")
	mirror := flag.Bool("mirror", false, "measure every image mirrored left to right (VHS is unchanged by a mirror; landmark errors are not meaningful); not with --card")
	flag.Parse()
	if (*noLevel || *mirror) && *card != "" {
		fmt.Fprintln(os.Stderr, "evalcardiac: --no-level measures something other than the product; not with --card")
		os.Exit(2)
	}
	if *firstStage && *card != "" {
		fmt.Fprintln(os.Stderr, "evalcardiac: --first-stage measures a pipeline that is not shipped; it cannot update the card")
		os.Exit(2)
	}
	opts := cardiac.DefaultOptions()
	opts.FirstStageOnly = *firstStage
	opts.Route = cardiac.Route(*route)
	if opts.Route != cardiac.RouteColumn && opts.Route != cardiac.RouteSpan {
		fmt.Fprintln(os.Stderr, "evalcardiac: --route is column or span")
		os.Exit(2)
	}
	if err := run(*data, config.ModelsDir(*models), *card, *section, *dump, *lib, opts, cardiac.PredictOptions{NoLevel: *noLevel, Mirror: *mirror}); err != nil {
		fmt.Fprintln(os.Stderr, "evalcardiac:", err)
		os.Exit(1)
	}
}

func run(data, modelsDir, card, section, dump, lib string, opts cardiac.Options, po cardiac.PredictOptions) error {
	tf, err := heldout.ReadTruth(data)
	if err != nil {
		return err
	}
	if err := ort.Init(lib, config.ORTLibraryCandidates()...); err != nil {
		return err
	}
	eng, err := cardiacort.Load(modelsDir, opts)
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := context.Background()
	var dumpEnc *json.Encoder
	if dump != "" {
		f, err := os.Create(dump)
		if err != nil {
			return fmt.Errorf("create dump: %w", err)
		}
		defer f.Close()
		dumpEnc = json.NewEncoder(f)
	}
	s := Summary{Codes: map[int]int{}, ByConfidence: map[string]agg{}}
	var vhsErr, vlasErr, lat, lat1024, lmErr, colRatio, colOff []float64
	perLandmark := map[string][]float64{}
	correctClass, rejectedNeg, rejectedPos := 0, 0, 0
	for _, it := range tf.Items {
		img, err := os.ReadFile(filepath.Join(data, it.File))
		if err != nil {
			return err
		}
		t0 := time.Now()
		res, err := eng.PredictBytes(ctx, img, po)
		ms := float64(time.Since(t0).Microseconds()) / 1000
		if err != nil {
			return fmt.Errorf("%s: %w", it.File, err)
		}
		lat = append(lat, ms)
		if it.Width == 1024 && it.Height == 1024 {
			lat1024 = append(lat1024, ms)
		}
		rejected := res.Code == cardiac.CodeRejected
		if !it.Radiograph {
			if dumpEnc != nil {
				// what let a negative through, where one was not rejected
				line := heldout.DumpLine{File: it.File, Negative: true, Code: int(res.Code), Guard: string(res.Guard),
					PRadiograph: res.ClassifierConfidence, Column: res.Column}
				if c := res.Column; c != nil && c.V > 0 {
					sd := res.HeartVHSSD
					line.HeartVHSSD = &sd
				}
				if err := dumpEnc.Encode(line); err != nil {
					return fmt.Errorf("dump: %w", err)
				}
			}
			s.Negatives++
			if rejected {
				rejectedNeg++
			}
			continue
		}
		s.Radiographs++
		s.Codes[int(res.Code)]++
		if dumpEnc != nil {
			line := heldout.DumpLine{File: it.File, VHS: it.VHS, VLAS: it.VLAS, Code: int(res.Code), Guard: string(res.Guard), LevelledDeg: res.LevelledDeg,
				PRadiograph: res.ClassifierConfidence, PredVHS: res.VHS, PredVLAS: res.VLAS, Landmarks: res.Landmarks,
				Members: res.ModelLandmarks, VertebralPeriod: res.VertebralPeriod, Column: res.Column}
			if c := res.Column; c != nil && c.V > 0 {
				vhs := res.Geometry.VHS // the heart axes over the column's v
				line.ColumnVHS = &vhs
				sd := res.HeartVHSSD
				line.HeartVHSSD = &sd
			}
			if g := res.SilhouetteGap; !math.IsNaN(g) && res.Silhouette != nil {
				line.SilhouetteGap = &g
				d := res.Silhouette.Doubt
				line.SilhouetteDoubt = &d
			}
			if line.VertebralPeriod == nil && !rejected {
				if line.VertebralPeriod, err = periodScore(img, res.Landmarks); err != nil {
					return fmt.Errorf("%s: %w", it.File, err)
				}
			}
			if !math.IsNaN(res.Spread) && !math.IsInf(res.Spread, 0) {
				line.Spread = &res.Spread
			}
			if err := dumpEnc.Encode(line); err != nil {
				return fmt.Errorf("dump: %w", err)
			}
		}
		if rejected {
			rejectedPos++
			continue
		}
		if r, ok := columnRatio(res.Column, it); ok {
			colRatio, colOff = append(colRatio, r), append(colOff, math.Abs(r-1))
		}
		if res.VHS == nil {
			continue
		}
		e := math.Abs(*res.VHS - it.VHS)
		vhsErr = append(vhsErr, e)
		if sizeClass(*res.VHS) == sizeClass(it.VHS) {
			correctClass++
		}
		if res.VLAS != nil {
			vlasErr = append(vlasErr, math.Abs(*res.VLAS-it.VLAS))
		}
		diag := math.Hypot(float64(it.Width), float64(it.Height))
		for k, name := range cardiac.ClassNames {
			tp, ok := it.Point(name)
			if !ok {
				continue
			}
			pct := 100 * res.Landmarks[k].Dist(tp) / diag
			lmErr = append(lmErr, pct)
			perLandmark[name] = append(perLandmark[name], pct)
		}
		level := string(res.Confidence)
		a := s.ByConfidence[level]
		a.N++
		a.errs = append(a.errs, e)
		a.spreads = append(a.spreads, res.Spread)
		s.ByConfidence[level] = a
	}
	for k, a := range s.ByConfidence {
		a.MedianVHSErr = num(median(a.errs))
		a.MeanVHSErr = num(heldout.Mean(a.errs))
		a.MedianSpread = num(median(a.spreads))
		s.ByConfidence[k] = a
	}
	s.VHSMeasured, s.VLASMeasured = len(vhsErr), len(vlasErr)
	s.Route = string(opts.Route)
	if s.Radiographs > 0 {
		s.VHSCoverage = num(float64(s.VHSMeasured) / float64(s.Radiographs))
	}
	s.VHSWithin05, s.VHSWithin10, s.VHSMaxAE = num(heldout.ShareWithin(vhsErr, 0.5)), num(heldout.ShareWithin(vhsErr, 1.0)), num(heldout.Quantile(vhsErr, 1))
	s.VHSMAE, s.VHSMedianAE, s.VHSP95AE = num(heldout.Mean(vhsErr)), num(median(vhsErr)), num(heldout.Quantile(vhsErr, 0.95))
	s.VLASMAE = num(heldout.Mean(vlasErr))
	if s.VHSMeasured > 0 {
		s.ClassAccuracy = num(float64(correctClass) / float64(s.VHSMeasured))
	}
	if s.Negatives > 0 {
		s.NegativesRejected = num(float64(rejectedNeg) / float64(s.Negatives))
	}
	if s.Radiographs > 0 {
		s.RadiographsRejected = num(float64(rejectedPos) / float64(s.Radiographs))
	}
	s.LandmarkErrPctMedian = num(median(lmErr))
	s.PerLandmarkPct = map[string]num{}
	for k, v := range perLandmark {
		s.PerLandmarkPct[k] = num(median(v))
	}
	s.LatencyMedianMs, s.Square1024MedianMs = num(median(lat)), num(median(lat1024))
	s.Columns, s.ColumnRatioMedian = len(colRatio), num(median(colRatio))
	s.ColumnWithin10 = num(heldout.ShareWithin(colOff, 0.1))
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	fmt.Println(string(out))
	if card != "" {
		return writeCard(card, section, tf.Generator, s)
	}
	return nil
}

// columnRatio is the found column's v over the labels' |A-B| / 6; false
// without a column (the span route, none found) or without both labels.
func columnRatio(c *cardiac.Column, it heldout.Item) (float64, bool) {
	if c == nil || !(c.V > 0) {
		return 0, false
	}
	a, okA := it.Point(cardiac.ClassNames[cardiac.VertebraA])
	b, okB := it.Point(cardiac.ClassNames[cardiac.VertebraB])
	if !okA || !okB || !(a.Dist(b) > 0) {
		return 0, false
	}
	return c.V / (a.Dist(b) / 6), true
}

// periodScore decodes the image and scores it along the landmarks' A-B.
func periodScore(b []byte, l cardiac.Landmarks) (*float64, error) {
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode for the vertebral period: %w", err)
	}
	s := cardiac.VertebralPeriodScore(img, l[cardiac.VertebraA], l[cardiac.VertebraB])
	return &s, nil
}

func writeCard(path, section, generator string, s Summary) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	begin, end := "<!-- "+section+":begin -->", "<!-- "+section+":end -->"
	text := string(b)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: eval markers missing", path)
	}
	var w strings.Builder
	fmt.Fprintf(&w, "%s\nMeasured by `make eval` on %s: %d radiograph phantoms (%s) and %d negatives, none seen in training, run through the Go engine exactly as `vetlens predict` runs them, on the %s route.\n\n",
		begin, time.Now().UTC().Format("2006-01-02"), s.Radiographs, generator, s.Negatives, s.Route)
	w.WriteString("| metric | value | target |\n|---|---|---|\n")
	fmt.Fprintf(&w, "| VHS MAE (vertebrae), %d measured | %.3f | <= 0.25 |\n", s.VHSMeasured, s.VHSMAE)
	fmt.Fprintf(&w, "| VHS median / 95th percentile / worst abs. error | %.3f / %.3f / %.2f | |\n", s.VHSMedianAE, s.VHSP95AE, s.VHSMaxAE)
	fmt.Fprintf(&w, "| radiographs with a VHS (coverage) | %.1f %% | |\n", 100*s.VHSCoverage)
	fmt.Fprintf(&w, "| returned VHS within 0.5 / 1.0 v | %.1f %% / %.1f %% | |\n", 100*s.VHSWithin05, 100*s.VHSWithin10)
	fmt.Fprintf(&w, "| VLAS MAE (vertebrae), %d measured | %.3f | <= 0.2 |\n", s.VLASMeasured, s.VLASMAE)
	fmt.Fprintf(&w, "| small / normal / large (<8.2, 8.2-10, >10) accuracy | %.1f %% | >= 95 %% |\n", 100*s.ClassAccuracy)
	if s.Negatives > 0 {
		fmt.Fprintf(&w, "| negatives rejected | %.1f %% | >= 98 %% |\n", 100*s.NegativesRejected)
	} else { // a set of radiographs alone says nothing about negatives
		w.WriteString("| negatives rejected | (no negatives in this set) | >= 98 % |\n")
	}
	fmt.Fprintf(&w, "| radiographs falsely rejected | %.1f %% | <= 1 %% |\n", 100*s.RadiographsRejected)
	if s.Columns > 0 {
		fmt.Fprintf(&w, "| the column's v over the labels' \\|A-B\\|/6, %d columns found: median / within 10 %% | %.3f / %.1f %% | |\n", s.Columns, s.ColumnRatioMedian, 100*s.ColumnWithin10)
	}
	fmt.Fprintf(&w, "| median landmark error (%% of image diagonal) | %.2f %% | |\n", s.LandmarkErrPctMedian)
	for _, name := range cardiac.ClassNames {
		fmt.Fprintf(&w, "| median error of %s (%% of diagonal) | %.2f %% | |\n", name, s.PerLandmarkPct[name])
	}
	fmt.Fprintf(&w, "| median latency per image, all sizes / 1024x1024 (ms, this machine) | %.0f / %.0f | |\n", s.LatencyMedianMs, s.Square1024MedianMs)
	codes := make([]int, 0, len(s.Codes))
	for c := range s.Codes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var cs []string
	for _, c := range codes {
		cs = append(cs, fmt.Sprintf("%d: %d", c, s.Codes[c]))
	}
	fmt.Fprintf(&w, "\nResult codes on radiographs: %s.\n\n", strings.Join(cs, ", "))
	w.WriteString("Confidence against error (VHS, vertebrae):\n\n| level | images | median abs. error | mean abs. error | median spread |\n|---|---|---|---|---|\n")
	for _, lvl := range []string{"optimal", "good", "review"} {
		a := s.ByConfidence[lvl]
		fmt.Fprintf(&w, "| %s | %d | %.3f | %.3f | %.5f |\n", lvl, a.N, a.MedianVHSErr, a.MeanVHSErr, a.MedianSpread)
	}
	w.WriteString(end)
	text = text[:i] + w.String() + text[j+len(end):]
	return os.WriteFile(path, []byte(text), 0o644)
}
