// Command code7 counts which frames get result code 7 ("screen found,
// correction failed") through capture.PredictImage with the shipped
// models, before and after the rule that code 7 needs a screen showing a
// radiograph (capture.ShowsRadiograph; docs/pop.md, "A screen suspected,
// not corrected"). Before the rule a frame got code 7 exactly when
// pop.Analysis.PoPDetected && !Corrected, so one run gives both. Usage:
//
//	go run ./bench/code7 --models models --pop-models models [-v] GLOB...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/ort"
	"vetlens/engine/pop/poport"
	"vetlens/internal/config"
)

func main() {
	models := flag.String("models", "models", "cardiac models directory")
	popModels := flag.String("pop-models", "models", "PoP models directory")
	ortLib := flag.String("ort-lib", "", "ONNX Runtime shared library")
	verbose := flag.Bool("v", false, "one line per frame")
	flag.Parse()
	if err := run(*models, *popModels, *ortLib, *verbose, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "code7:", err)
		os.Exit(1)
	}
}

func run(models, popModels, ortLib string, verbose bool, globs []string) error {
	if err := ort.Init(ortLib, config.ORTLibraryCandidates()...); err != nil {
		return err
	}
	pm, err := poport.Load(popModels)
	if err != nil {
		return err
	}
	defer pm.Close()
	eng, err := cardiacort.Load(models, cardiac.DefaultOptions())
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := context.Background()
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			return err
		}
		var n, before7, after7, moved, popBefore, popAfter int
		codes := map[cardiac.Code]int{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			s, err := capture.PredictImage(ctx, eng, capture.PoP{Models: pm}, b, cardiac.PredictOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			an, r := s.Analysis, s.Result
			n++
			codes[r.Code]++
			was7 := an.PoPDetected && !an.Corrected
			if was7 {
				before7++
				popBefore++
				if r.Code != cardiac.CodePoPFailed {
					moved++
				}
			} else if r.PopDetected {
				popBefore++
			}
			if r.Code == cardiac.CodePoPFailed {
				after7++
			}
			if r.PopDetected {
				popAfter++
			}
			if verbose {
				fmt.Printf("%s before=%v after=%d p=%.3f conf=%.2f failure=%q\n", filepath.Base(f), was7, r.Code, r.ClassifierConfidence, an.Corners.Confidence, an.Failure)
			}
		}
		fmt.Printf("%s: %d frames; code 7 before %d, after %d; moved from 7 to another code %d; pop_detected before %d, after %d; codes after %v\n",
			g, n, before7, after7, moved, popBefore, popAfter, codes)
	}
	return nil
}
