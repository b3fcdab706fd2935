package main

import (
	"fmt"
	"os"
	"path/filepath"

	"vetlens/app/capture"
	"vetlens/engine/pop"
)

// plainFiles analyses every file matching glob, all plain radiograph
// files, and reports how many were taken for screen photos, and for the
// learned finder how high p_screen reaches on the colour ones (those the
// presence model decides on). verbose prints one line per file.
func plainFiles(an capture.PoP, glob string, verbose bool) error {
	files, err := filepath.Glob(glob)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no files match %s", glob)
	}
	misread, colour, possible, flagged := 0, 0, 0, 0
	maxPresence := 0.0 // over the colour files; printed only when there are some
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		a, err := an.AnalyzeBytes(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if a.PoPDetected {
			misread++
		}
		if a.PossibleScreen {
			flagged++
		}
		if a.Learned != nil && a.Chroma >= pop.MinChroma {
			colour++
			maxPresence = max(maxPresence, a.Learned.Presence)
			if a.Learned.Presence >= pop.PossiblePresence {
				possible++
			}
		}
		if verbose {
			verdict := "file"
			switch {
			case a.PoPDetected:
				verdict = "taken for a screen photo"
			case a.PossibleScreen:
				verdict = "file, a possible screen photo (no number)"
			}
			fmt.Printf("%s %s (chroma %.1f, confidence %.2f%s)\n", f, verdict, a.Chroma, a.Corners.Confidence, learnedNote(a))
		}
	}
	fmt.Printf("pipeline: %s\nplain files: %d, taken for screen photos %d (correct %.1f %%)\n", an.ModelVersion(), len(files), misread, 100*float64(len(files)-misread)/float64(len(files)))
	fmt.Printf("files flagged as possible screen photos (measured without a number): %d\n", flagged)
	if colour > 0 {
		fmt.Printf("colour files (chroma >= %g): %d, p_screen at most %.3f, %d at PossiblePresence %.2f or more\n",
			float64(pop.MinChroma), colour, maxPresence, possible, pop.PossiblePresence)
	}
	return nil
}

// learnedNote describes the learned finder's evidence on a frame (empty
// for the classical pipeline): p_screen, the corner models' agreement and
// where the quad came from.
func learnedNote(a *pop.Analysis) string {
	if a.Learned == nil {
		return ""
	}
	l := a.Learned
	return fmt.Sprintf(", p_screen %.3f, agreement %.3f, source %s, classical %.2f, refined %v, cut_off %v, found %v", l.Presence, l.Agreement, l.Source, l.Classical, l.Refined, l.CutOff, a.Corners.Found)
}
