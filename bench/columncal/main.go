// Command columncal measures the column finder (cardiac.FindColumn) on a
// held-out or validation folder (truth.json, as models/train/sim/heldout.py
// writes it) and prints what its two calibrated numbers are chosen from:
// the exact vertebral unit over the measured period
// (cardiac.ColumnVertebraFactor) and how many periods T4's cranial
// endplate lies cranial of the carina's foot (cardiac.ColumnCarinaPeriods),
// with the column score's distribution and the VHS error of the exact
// heart points over the column's v. The prior is the exact landmarks, or,
// with --dump (an evalcardiac --dump of the same folder), the models'
// ensemble mean, as the engine sees it.
//
//	go run ./bench/columncal --data testdata/validation
//	go run ./bench/columncal --data testdata/validation-phantom --dump /tmp/dump.jsonl
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"vetlens/app/learn/heldout"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
)

func main() {
	data := flag.String("data", "testdata/validation", "folder with truth.json")
	dump := flag.String("dump", "", "evalcardiac --dump of the same folder: use the models' landmarks as the prior")
	flag.Parse()
	if err := run(*data, *dump); err != nil {
		fmt.Fprintln(os.Stderr, "columncal:", err)
		os.Exit(1)
	}
}

func run(data, dump string) error {
	tf, err := heldout.ReadTruth(data)
	if err != nil {
		return err
	}
	var d map[string]heldout.DumpLine
	if dump != "" {
		if d, err = heldout.ReadDump(dump); err != nil {
			return err
		}
	}
	var factor, carina, score, vhsErr, aErr []float64
	found, total := 0, 0
	for _, it := range tf.Items {
		if !it.Radiograph {
			continue
		}
		var truth cardiac.Landmarks
		for k, name := range cardiac.ClassNames {
			p, ok := it.Point(name)
			if !ok {
				return fmt.Errorf("%s: no %s in the truth", it.File, name)
			}
			truth[k] = p
		}
		prior := truth
		if d != nil {
			line, ok := d[it.File]
			if !ok || line.Code == int(cardiac.CodeRejected) || line.Code == 0 {
				continue
			}
			prior = line.Landmarks
		}
		total++
		b, err := os.ReadFile(filepath.Join(data, it.File))
		if err != nil {
			return err
		}
		img, _, err := imageproc.Decode(b)
		if err != nil {
			return fmt.Errorf("%s: %w", it.File, err)
		}
		c, ok := cardiac.FindColumn(img, prior)
		if !ok {
			continue
		}
		found++
		v := truth[cardiac.VertebraA].Dist(truth[cardiac.VertebraB]) / 6
		factor = append(factor, v/c.Period)
		foot := dot(sub(truth[cardiac.HeartTop], truth[cardiac.VertebraA]), c.Dir)
		carina = append(carina, foot/c.Period)
		score = append(score, c.Score)
		g := cardiac.Measure(truth)
		vhsErr = append(vhsErr, math.Abs((g.LongAxis+g.ShortAxis)/c.V-it.VHS))
		aErr = append(aErr, c.A().Dist(truth[cardiac.VertebraA])/v)
		if e := vhsErr[len(vhsErr)-1]; e > 1 {
			fmt.Printf("worst: %s VHS error %.2f v, period %.1f px against exact v %.1f px, score %.2f A %.0f,%.0f B %.0f,%.0f tA %.0f,%.0f tB %.0f,%.0f\n", it.File, e, c.Period, v, c.Score,
				c.A().X, c.A().Y, c.B().X, c.B().Y, truth[cardiac.VertebraA].X, truth[cardiac.VertebraA].Y, truth[cardiac.VertebraB].X, truth[cardiac.VertebraB].Y)
		}
	}
	fmt.Printf("%s: %d radiographs, column found on %d\n", data, total, found)
	q := func(name string, x []float64) {
		fmt.Printf("%-34s p5 %.3f  p25 %.3f  median %.3f  p75 %.3f  p95 %.3f\n", name,
			heldout.Quantile(x, 0.05), heldout.Quantile(x, 0.25), heldout.Quantile(x, 0.5), heldout.Quantile(x, 0.75), heldout.Quantile(x, 0.95))
	}
	q("exact v / period", factor)
	q("carina foot from A (periods)", carina)
	q("column score", score)
	q("|VHS(exact heart, column v) - truth|", vhsErr)
	q("|A - exact A| (v)", aErr)
	for _, cut := range []float64{0.3, 0.4, 0.45, 0.5, 0.6, 0.7} {
		var e []float64
		for i, s := range score {
			if s >= cut {
				e = append(e, vhsErr[i])
			}
		}
		fmt.Printf("score >= %.2f: %3d kept, VHS MAE %.3f, within 0.5 v %.1f %%, max %.2f\n", cut, len(e), heldout.Mean(e), 100*heldout.ShareWithin(e, 0.5), heldout.Quantile(e, 1))
	}
	return nil
}

func dot(p, q cardiac.Point) float64 { return p.X*q.X + p.Y*q.Y }
func sub(p, q cardiac.Point) cardiac.Point {
	return cardiac.Point{X: p.X - q.X, Y: p.Y - q.Y}
}
