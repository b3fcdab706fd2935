// Command spancheck measures how well the vertebral column's own period
// (cardiac.MeasureColumnPeriod) counts the vertebrae a Vertebra A-B span
// covers, on a held-out folder (truth.json, as models/train/sim/heldout.py
// writes it): on the exact spans, on spans made a vertebra too short or
// too long, and, given an evalcardiac --dump of the same folder, on the
// models' spans. It prints, for each minimum score, how often a span of
// six is miscounted and how often a wrong span is caught by the rule
// "warn when the count is outside 6 +/- tolerance" (app.CheckVertebralSpan).
//
//	go run ./bench/spancheck --data testdata/heldout --dump /tmp/dump.jsonl
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

// span is one A-B span to count: its true number of vertebrae (spans of
// the exact landmarks are 6 by definition) and what was measured on it.
type span struct {
	kind     string
	truth    float64
	count    float64
	score    float64
	measured bool
	// vhsErr is the returned VHS's absolute error for a models' span
	// whose result carried a VHS, else NaN.
	vhsErr float64
}

func main() {
	data := flag.String("data", "testdata/heldout", "held-out folder with truth.json")
	dump := flag.String("dump", "", "evalcardiac --dump of the same folder: also count the models' spans")
	tol := flag.Float64("tolerance", cardiac.SpanCountTolerance, "a count within 6 +/- tolerance is six vertebrae")
	flag.Parse()
	if err := run(*data, *dump, *tol); err != nil {
		fmt.Fprintln(os.Stderr, "spancheck:", err)
		os.Exit(1)
	}
}

func run(data, dump string, tol float64) error {
	tf, err := heldout.ReadTruth(data)
	if err != nil {
		return err
	}
	model := map[string]heldout.DumpLine{}
	if dump != "" {
		if model, err = heldout.ReadDump(dump); err != nil {
			return err
		}
	}
	var spans []span
	for _, it := range tf.Items {
		if !it.Radiograph {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(data, it.File))
		if err != nil {
			return err
		}
		img, _, err := imageproc.Decode(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", it.File, err)
		}
		a, _ := it.Point(cardiac.ClassNames[cardiac.VertebraA])
		bb, _ := it.Point(cardiac.ClassNames[cardiac.VertebraB])
		along := func(f float64) cardiac.Point { return cardiac.Point{X: a.X + f*(bb.X-a.X), Y: a.Y + f*(bb.Y-a.Y)} }
		count := func(kind string, truth float64, p, q cardiac.Point) span {
			c, ok := cardiac.MeasureColumnPeriod(img, p, q)
			return span{kind: kind, truth: truth, count: c.Vertebrae(p.Dist(q)), score: c.Score, measured: ok, vhsErr: math.NaN()}
		}
		spans = append(spans,
			count("exact (6)", 6, a, bb),
			count("B one vertebra short (5)", 5, a, along(5.0/6)),
			count("B one vertebra long (7)", 7, a, along(7.0/6)),
			count("A one vertebra cranial (7)", 7, along(-1.0/6), bb),
			count("half a vertebra long (6.5)", 6.5, a, along(6.5/6)),
		)
		if d, ok := model[it.File]; ok && d.Code != 6 {
			p, q := d.Landmarks[cardiac.VertebraA], d.Landmarks[cardiac.VertebraB]
			s := count("models' span", 6*p.Dist(q)/a.Dist(bb), p, q)
			if d.PredVHS != nil {
				s.vhsErr = math.Abs(*d.PredVHS - d.VHS)
			}
			spans = append(spans, s)
		}
	}
	kinds := []string{"exact (6)", "half a vertebra long (6.5)", "B one vertebra short (5)", "B one vertebra long (7)", "A one vertebra cranial (7)", "models' span"}
	fmt.Printf("%s: %d spans; a count within 6 +/- %.2f is six vertebrae\n", data, len(spans), tol)
	for _, k := range kinds {
		var counts []float64
		n := 0
		for _, s := range spans {
			if s.kind == k {
				n++
				if s.measured {
					counts = append(counts, s.count)
				}
			}
		}
		if n == 0 {
			continue
		}
		slices.Sort(counts)
		fmt.Printf("\n%s: %d spans, %d measured; count p5 %.2f, median %.2f, p95 %.2f\n", k, n, len(counts), q(counts, 0.05), q(counts, 0.5), q(counts, 0.95))
		fmt.Printf("  min score | counted | warned (count off six) |")
		if k == "models' span" {
			fmt.Printf(" warned when truly within 0.5 of six | caught when truly 0.5+ off | when 1+ off |")
		}
		fmt.Println()
		for _, ms := range []float64{0.3, 0.4, 0.5, 0.6, 0.7} {
			var counted, warned, okN, okWarned, offN, offCaught, off1N, off1Caught int
			for _, s := range spans {
				if s.kind != k {
					continue
				}
				use := s.measured && s.score >= ms
				warn := use && math.Abs(s.count-6) > tol
				if use {
					counted++
				}
				if warn {
					warned++
				}
				switch d := math.Abs(s.truth - 6); {
				case d < 0.5:
					okN++
					if warn {
						okWarned++
					}
				default:
					offN++
					if warn {
						offCaught++
					}
					if d >= 1 {
						off1N++
						if warn {
							off1Caught++
						}
					}
				}
			}
			fmt.Printf("  %.1f | %d (%.0f %%) | %d (%.0f %%) |", ms, counted, pct(counted, n), warned, pct(warned, n))
			if k == "models' span" {
				fmt.Printf(" %d of %d | %d of %d | %d of %d |", okWarned, okN, offCaught, offN, off1Caught, off1N)
			}
			fmt.Println()
		}
		if k == "models' span" {
			returned(spans, tol)
		}
	}
	return nil
}

// returned prints, for the models' spans whose result carried a VHS, how
// many the span check would warn about and the VHS error of each group.
func returned(spans []span, tol float64) {
	var warned, quiet []float64
	for _, s := range spans {
		if s.kind != "models' span" || math.IsNaN(s.vhsErr) {
			continue
		}
		if s.measured && s.score >= cardiac.MinSpanCountScore && math.Abs(s.count-6) > tol {
			warned = append(warned, s.vhsErr)
		} else {
			quiet = append(quiet, s.vhsErr)
		}
	}
	fmt.Printf("  results with a VHS (min score %.1f): %d warned, VHS MAE %.3f (max %.2f); %d not, VHS MAE %.3f (max %.2f)\n",
		cardiac.MinSpanCountScore, len(warned), heldout.Mean(warned), maxOf(warned), len(quiet), heldout.Mean(quiet), maxOf(quiet))
}

func maxOf(x []float64) float64 {
	m := math.NaN()
	for _, v := range x {
		if math.IsNaN(m) || v > m {
			m = v
		}
	}
	return m
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

func q(x []float64, p float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return x[int(math.Round(p*float64(len(x)-1)))]
}
