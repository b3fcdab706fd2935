package main

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiacort"
	"vetlens/engine/imageproc"
	"vetlens/engine/ort"
	"vetlens/engine/pop"
	"vetlens/internal/config"
)

// measurer runs the cardiac engine for VHS and session figures.
type measurer struct {
	eng *cardiac.Engine
	an  capture.PoP
}

func newMeasurer(models, ortLib string, an capture.PoP) (*measurer, error) {
	if err := ort.Init(ortLib, config.ORTLibraryCandidates()...); err != nil {
		return nil, err
	}
	eng, err := cardiacort.Load(models, cardiac.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("load cardiac models from %s: %w", models, err)
	}
	return &measurer{eng: eng, an: an}, nil
}

func (m *measurer) close() { m.eng.Close() }

// vhs measures encoded image bytes; ok is false when no VHS resulted.
// screenPhoto is set for a rectified screen photo, which the product
// measures with the first stage only (app/capture sets SkipRefinement).
func (m *measurer) vhs(ctx context.Context, b []byte, screenPhoto bool) (float64, bool) {
	v, _, ok := m.vhsCode(ctx, b, screenPhoto)
	return v, ok
}

// vhsCode is vhs with the result code the engine gave.
func (m *measurer) vhsCode(ctx context.Context, b []byte, screenPhoto bool) (float64, cardiac.Code, bool) {
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return 0, 0, false
	}
	return m.vhsCodeImage(ctx, img, screenPhoto)
}

// vhsCodeImage is vhsCode on a decoded image.
func (m *measurer) vhsCodeImage(ctx context.Context, img image.Image, screenPhoto bool) (float64, cardiac.Code, bool) {
	r, err := m.eng.Predict(ctx, img, cardiac.PredictOptions{SkipRefinement: screenPhoto})
	if err != nil || r.VHS == nil {
		return 0, 0, false
	}
	return *r.VHS, r.Code, true
}

// answered reports whether a single screen photo (analysis a, rectified
// image img measured as a VHS of vhs) keeps its number as /v3/predict
// answers it: capture.ScreenPhotoProblem names no problem.
func (m *measurer) answered(ctx context.Context, a *pop.Analysis, img image.Image, vhs float64) (bool, error) {
	g, _, err := capture.ScreenPhotoProblem(ctx, m.eng, a, img, vhs, cardiac.PredictOptions{SkipRefinement: true})
	return g == cardiac.GuardNone, err
}

// sessions plays each sequence through a capture session with the real
// engine and reports how many complete within 5 frames, and whether any
// sequence of unusable frames completes.
func (m *measurer) sessions(ctx context.Context, dir string, seqs map[string][]item) error {
	var usable, within5, completed, unusable, unusableDone int
	var vhsErr []float64
	keys := sortedKeys(seqs)
	for _, k := range keys {
		frames := seqs[k]
		sort.Slice(frames, func(i, j int) bool { return frames[i].Frame < frames[j].Frame })
		mgr := capture.NewManager(capture.DefaultConfig(), m.eng, m.an, nil)
		st, err := mgr.Start(app.SessionOwner{}, 0)
		if err != nil {
			return err
		}
		done := -1
		var best float64
		last := ""
		for i, f := range frames {
			b, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				return err
			}
			out, err := mgr.Frame(ctx, "", st.ID, b)
			if err != nil {
				return fmt.Errorf("%s: %w", f.File, err)
			}
			last = fmt.Sprintf("%s %s after %d frames", out.Status, out.Error, i+1)
			if out.Status == app.StatusComplete {
				done = i + 1
				if out.Result.VHS != nil {
					best = *out.Result.VHS
				}
				break
			}
		}
		if strings.HasPrefix(k, "unusable") {
			unusable++
			if done > 0 {
				unusableDone++
			}
			fmt.Printf("  session %s (unusable frames only): %s\n", k, last)
			continue
		}
		usable++
		if done > 0 {
			completed++
			vhsErr = append(vhsErr, abs(best-frames[0].VHS))
			if done <= 5 {
				within5++
			}
		}
		if done > 0 {
			fmt.Printf("  session %s: complete after %d frames, VHS %.2f (truth %.2f)\n", k, done, best, frames[0].VHS)
		} else {
			fmt.Printf("  session %s: not complete after %d frames\n", k, len(frames))
		}
	}
	fmt.Printf("sessions on 8-frame sequences: %d, complete within 5 frames %d (%.1f %%), complete at all %d, VHS MAE of completed %.3f v\n",
		usable, within5, 100*float64(within5)/float64(max(1, usable)), completed, mean(vhsErr))
	fmt.Printf("sessions on unusable-only sequences: %d, completed %d\n", unusable, unusableDone)
	return nil
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func sortedKeys(m map[string][]item) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

// readiness is the PoP side of the session criterion without models: for
// each sequence, after how many frames 3 frames were corrected with
// passing quality (a necessary condition for completing).
func readiness(an capture.PoP, dir string, seqs map[string][]item, verbose bool) error {
	need := capture.DefaultConfig().GoodFramesNeeded
	var usable, within5, unusable, unusableReady int
	for _, k := range sortedKeys(seqs) {
		frames := seqs[k]
		sort.Slice(frames, func(i, j int) bool { return frames[i].Frame < frames[j].Frame })
		ok, at := 0, -1
		for i, f := range frames {
			b, err := os.ReadFile(filepath.Join(dir, f.File))
			if err != nil {
				return err
			}
			a, err := an.AnalyzeBytes(b)
			if err == nil && a.Corrected && a.Quality.OK() {
				ok++
			}
			if verbose && err == nil {
				fmt.Printf("%s usable=%v corrected=%v conf=%.2f err=%.2f%% problems=%v sharp=%.0f glare=%.2f\n", f.File, f.Usable, a.Corrected,
					a.Corners.Confidence, 100*cornerErr(a.Corners.Quad, f), a.Quality.Problems, a.Quality.Sharpness, a.Quality.Glare)
			}
			if ok >= need && at < 0 {
				at = i + 1
			}
		}
		if strings.HasPrefix(k, "unusable") {
			unusable++
			if at > 0 {
				unusableReady++
			}
			continue
		}
		usable++
		if at > 0 && at <= 5 {
			within5++
		}
	}
	fmt.Printf("sequences (PoP side only): %d, with %d corrected good-quality frames within 5 frames: %d (%.1f %%); unusable-only sequences reaching it: %d of %d\n",
		usable, need, within5, 100*float64(within5)/float64(max(1, usable)), unusableReady, unusable)
	return nil
}
