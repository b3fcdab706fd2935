// Command evalpop measures the PoP pipeline on composites written by
// models/train/pop/composites.py: corner error (share of the frame
// diagonal), corners found on usable frames, radiograph files (grey, and
// tinted, cropped or bordered exports) misread as screen photos, quality
// verdicts and, with --models, VHS error on screen
// photos. Usage:
//
//	go run ./bench/evalpop --data DIR [--models DIR] [--pop-models DIR] [--ort-lib PATH] [-v]
//
// --pop-models runs the learned screen finder (engine/pop Models) instead
// of the classical one, and adds figures per family (display, layout,
// room) for pop/variety.py composites. Screen photos whose displayed image
// is cut off by the frame (cut_off) count as unusable.
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

	"vetlens/app/capture"
	"vetlens/engine/imageproc"
	"vetlens/engine/ort"
	"vetlens/engine/pop"
	"vetlens/engine/pop/poport"
	"vetlens/internal/config"
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
	Display   string          `json:"display"`
	Layout    string          `json:"layout"`
	Room      string          `json:"room"`
	CutOff    bool            `json:"cut_off"`
	// DisplayedFile is the displayed radiograph saved as a plain file
	// (vscreen composites), for VHS on the same image without the screen.
	DisplayedFile string `json:"displayed_file"`
	// DisplayedSize is the displayed radiograph's width and height in
	// pixels (vscreen composites), for the rectified aspect's error.
	DisplayedSize []float64 `json:"displayed_size"`
}

func main() {
	data := flag.String("data", "", "directory with truth_*.json and images")
	models := flag.String("models", "", "cardiac models directory (enables VHS and session figures)")
	ortLib := flag.String("ort-lib", "", "ONNX Runtime shared library")
	verbose := flag.Bool("v", false, "one line per frame")
	popModels := flag.String("pop-models", "", "PoP models directory: run the learned screen finder")
	truthCorners := flag.Bool("truth-corners", false, "measure VHS on screen photos rectified from the true displayed-image corners at the true aspect (the floor set by the photo itself, without corner error)")
	plain := flag.String("plain", "", "glob of plain radiograph files (no truth needed): count those taken for screen photos, then stop")
	flag.Parse()
	if *data == "" && *plain == "" {
		fmt.Fprintln(os.Stderr, "evalpop: --data or --plain required")
		os.Exit(2)
	}
	an := capture.PoP{}
	if *popModels != "" {
		if err := ort.Init(*ortLib, config.ORTLibraryCandidates()...); err != nil {
			fmt.Fprintln(os.Stderr, "evalpop:", err)
			os.Exit(1)
		}
		pm, err := poport.Load(*popModels)
		if err != nil {
			fmt.Fprintln(os.Stderr, "evalpop:", err)
			os.Exit(1)
		}
		defer pm.Close()
		an.Models = pm
	}
	if *plain != "" {
		if err := plainFiles(an, *plain, *verbose); err != nil {
			fmt.Fprintln(os.Stderr, "evalpop:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), an, *data, *models, *ortLib, *verbose, *truthCorners); err != nil {
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

func run(ctx context.Context, an capture.PoP, dir, models, ortLib string, verbose, truthCorners bool) error {
	items, err := load(dir)
	if err != nil {
		return err
	}
	var m *measurer
	if models != "" {
		if m, err = newMeasurer(models, ortLib, an); err != nil {
			return err
		}
		defer m.close()
	}
	var errs, errsFull, errsViewer, errsScreen []float64
	byFam := map[string][]float64{}
	famN := map[string]int{}
	detected := 0
	var usable, found, radio, misread, exports, exportsMisread, unusable, unusableFound, unusableGood, usableGood int
	// ...Kept: the frames a single photo gets a number from
	// (capture.ScreenPhotoProblem), as /v3/predict answers them.
	var vhsErrKept, pairPhotoKept, pairFileKept []float64
	var vhsErr, vhsErrDirect, pairPhoto, pairFile, pairDiff, pairSigned, aspErr, aspPaired, aspTruthQuad, aspOwnQuad, geoErr, geoPaired []float64
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
		a, err := an.AnalyzeBytes(b)
		if err != nil {
			return fmt.Errorf("%s: %w", it.File, err)
		}
		if it.CutOff {
			it.Usable = false
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
			if a.PoPDetected {
				detected++
			}
			fams := []string{"display/" + it.Display, "layout/" + it.Layout, "room/" + it.Room}
			if it.Display != "" {
				for _, f := range fams {
					famN[f]++
				}
			}
			e := math.NaN()
			vhsNote, ownAE, ge := "", math.NaN(), math.NaN()
			if a.Corrected {
				found++
				e = cornerErr(a.Corners.Quad, it)
				errs = append(errs, e)
				if it.Display != "" {
					for _, f := range fams {
						byFam[f] = append(byFam[f], e)
					}
				}
				errsScreen = append(errsScreen, quadErr(a.Corners.Screen, it.Screen, it))
				if it.Mode == "viewer" {
					errsViewer = append(errsViewer, e)
				} else {
					errsFull = append(errsFull, e)
				}
				if a.Quality.OK() {
					usableGood++
				}
				ae := math.NaN()
				if a.Rectified != nil && len(it.DisplayedSize) == 2 && it.DisplayedSize[1] > 0 {
					r := a.Rectified.Bounds()
					truthAsp := it.DisplayedSize[0] / it.DisplayedSize[1]
					ae = (float64(r.Dx())/float64(r.Dy()))/truthAsp - 1
					aspErr = append(aspErr, ae)
					if len(it.Corners) == 4 {
						var tq pop.Quad
						for i := range 4 {
							tq[i] = pop.Point{X: it.Corners[i][0], Y: it.Corners[i][1]}
						}
						ta, _ := pop.Aspect(tq, it.Width, it.Height)
						aspTruthQuad = append(aspTruthQuad, ta/truthAsp-1)
					}
					oa, _ := pop.Aspect(a.Corners.Quad, it.Width, it.Height)
					ownAE = oa/truthAsp - 1
					aspOwnQuad = append(aspOwnQuad, ownAE)
				}
				if a.Rectified != nil {
					r := a.Rectified.Bounds()
					if v, ok := rectifiedTruthVHS(it, a.Corners.Quad, r.Dx(), r.Dy()); ok {
						ge = v - it.VHS
						geoErr = append(geoErr, ge)
					}
				}
				if m != nil && (a.Rectified != nil || truthCorners) {
					var rb []byte
					if truthCorners {
						if rb, err = rectifyTruth(filepath.Join(dir, it.File), it); err != nil {
							return err
						}
					} else {
						// The product's bytes: what a session or /v3/predict
						// measures (encoded on demand since ffb9fd6).
						if err := a.EncodeRectified(); err != nil {
							return fmt.Errorf("%s: %w", it.File, err)
						}
						rb = a.RectifiedJPEG
					}
					rimg, _, err := imageproc.Decode(rb)
					if err != nil {
						return fmt.Errorf("%s: decode rectified photo: %w", it.File, err)
					}
					if v, code, ok := m.vhsCodeImage(ctx, rimg, true); ok {
						kept, err := m.answered(ctx, a, rimg, v)
						if err != nil {
							return err
						}
						if kept {
							vhsErrKept = append(vhsErrKept, math.Abs(v-it.VHS))
						}
						vhsNote = fmt.Sprintf(" code=%d kept=%v vhs=%.2f truth=%.2f aspect_err=%+.1f%% ownquad_aspect_err=%+.1f%% geometric_vhs_err=%+.2f", code, kept, v, it.VHS, 100*ae, 100*ownAE, ge)
						vhsErr = append(vhsErr, math.Abs(v-it.VHS))
						vhsByMode[it.Mode] = append(vhsByMode[it.Mode], math.Abs(v-it.VHS))
						if it.DisplayedFile != "" {
							fb, err := os.ReadFile(filepath.Join(dir, it.DisplayedFile))
							if err != nil {
								return err
							}
							if fv, ok := m.vhs(ctx, fb, false); ok {
								pairPhoto = append(pairPhoto, math.Abs(v-it.VHS))
								pairFile = append(pairFile, math.Abs(fv-it.VHS))
								pairDiff = append(pairDiff, math.Abs(v-fv))
								pairSigned = append(pairSigned, v-fv)
								if kept {
									pairPhotoKept = append(pairPhotoKept, math.Abs(v-it.VHS))
									pairFileKept = append(pairFileKept, math.Abs(fv-it.VHS))
								}
								aspPaired = append(aspPaired, ae)
								geoPaired = append(geoPaired, ge)
								vhsNote += fmt.Sprintf(" file_vhs=%.2f", fv)
							}
						}
					}
				}
			}
			if verbose {
				// A missed frame: why (Failure, the learned evidence) and
				// how far its quads were from the truth all the same.
				miss := ""
				if !a.Corrected {
					miss = fmt.Sprintf(" MISSED failure=%q err_if_taken=%.2f%% screen_err=%.2f%%%s", a.Failure, 100*cornerErr(a.Corners.Quad, it), 100*quadErr(a.Corners.Screen, it.Screen, it), learnedNote(a))
				} else if a.Learned != nil {
					miss = fmt.Sprintf(" source=%s refined=%v screen_err=%.2f%% p_screen=%.3f", a.Learned.Source, a.Learned.Refined, 100*quadErr(a.Corners.Screen, it.Screen, it), a.Learned.Presence)
				}
				fmt.Printf("%s %s %s/%s/%s conf=%.2f viewer=%v err=%.2f%% aligned=%s q=%+v quad=%s%s%s\n", it.File, it.Mode, it.Display, it.Layout, it.Room, a.Corners.Confidence, a.Corners.Viewer, 100*e, sideDevs(a.Corners.Screen), a.Quality, quadString(a.Corners.Quad), miss, vhsNote)
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
				fmt.Printf("%s %s conf=%.2f corrected=%v q=%+v quad=%s%s\n", it.File, it.Kind, a.Corners.Confidence, a.Corrected, a.Quality, quadString(a.Corners.Quad), learnedNote(a))
			}
		}
	}
	fmt.Printf("pipeline: %s\n", an.ModelVersion())
	fmt.Printf("usable screen frames: %d, corners found %d (%.1f %%), pop_detected %d (%.1f %%)\n", usable, found, 100*float64(found)/float64(max(1, usable)), detected, 100*float64(detected)/float64(max(1, usable)))
	for _, f := range sortedFams(famN) {
		fmt.Printf("  %-22s frames %3d found %3d (%.1f %%) corner error median %.2f %% p95 %.2f %%\n", f, famN[f], len(byFam[f]), 100*float64(len(byFam[f]))/float64(max(1, famN[f])), 100*pct(byFam[f], 0.5), 100*pct(byFam[f], 0.95))
	}
	fmt.Printf("corner error, %% of diagonal: median %.2f, p95 %.2f (full screen n=%d median %.2f p95 %.2f; viewer n=%d median %.2f p95 %.2f)\n",
		100*pct(errs, 0.5), 100*pct(errs, 0.95), len(errsFull), 100*pct(errsFull, 0.5), 100*pct(errsFull, 0.95),
		len(errsViewer), 100*pct(errsViewer, 0.5), 100*pct(errsViewer, 0.95))
	fmt.Printf("monitor active area (Corners.Screen vs truth screen), %% of diagonal: median %.2f, p95 %.2f\n", 100*pct(errsScreen, 0.5), 100*pct(errsScreen, 0.95))
	if len(aspErr) > 0 {
		for _, x := range []struct {
			name string
			v    []float64
		}{{"rectified aspect against the displayed radiograph's", aspErr},
			{"  aspect from the vanishing points of the true quad", aspTruthQuad},
			{"  aspect from the vanishing points of the found quad", aspOwnQuad}} {
			abs := absAll(x.v)
			fmt.Printf("%s (n=%d): signed median %+.2f %%, |error| median %.2f %% p95 %.2f %%\n", x.name, len(x.v), 100*pct(x.v, 0.5), 100*pct(abs, 0.5), 100*pct(abs, 0.95))
		}
	}
	if len(geoErr) > 0 {
		abs := absAll(geoErr)
		fmt.Printf("VHS of the true landmarks carried through the found rectification (n=%d): MAE %.3f v, p95 %.3f v, signed median %+.3f v\n",
			len(geoErr), mean(abs), pct(abs, 0.95), pct(geoErr, 0.5))
	}
	fmt.Printf("usable frames passing quality: %d of %d found\n", usableGood, found)
	fmt.Printf("radiograph files: %d, misread as screen photos %d (correct %.1f %%)\n", radio, misread, 100*float64(radio-misread)/float64(max(1, radio)))
	if exports > 0 {
		fmt.Printf("radiograph exports (tinted, cropped, bordered files): %d, misread as screen photos %d (correct %.1f %%)\n", exports, exportsMisread, 100*float64(exports-exportsMisread)/float64(exports))
	}
	fmt.Printf("unusable frames: %d, corrected %d, passing quality %d\n", unusable, unusableFound, unusableGood)
	if len(seqs) > 0 {
		if err := readiness(an, dir, seqs, verbose); err != nil {
			return err
		}
	}
	if m != nil {
		fmt.Printf("VHS MAE on screen photos: %.3f v (n=%d); on the plain radiograph files: %.3f v (n=%d)\n",
			mean(vhsErr), len(vhsErr), mean(vhsErrDirect), len(vhsErrDirect))
		if len(pairPhoto) > 0 {
			fmt.Printf("VHS on the same radiographs (n=%d): MAE as screen photos %.3f v, as files %.3f v (difference %+.3f v); mean |photo - file| %.3f v\n",
				len(pairPhoto), mean(pairPhoto), mean(pairFile), mean(pairPhoto)-mean(pairFile), mean(pairDiff))
			fmt.Printf("VHS photo - file, signed: mean %+.3f v, median %+.3f v; correlation with the rectified aspect's error %.2f, with the rectification's own VHS error %.2f\n",
				mean(pairSigned), pct(pairSigned, 0.5), correlation(pairSigned, aspPaired), correlation(pairSigned, geoPaired))
		}
		fmt.Printf("VHS as a single photo is answered (no number when capture.ScreenPhotoProblem): %d of %d returned, MAE %.3f v, over 1 v %d (of all measured: %d)\n",
			len(vhsErrKept), len(vhsErr), mean(vhsErrKept), countOver(vhsErrKept, 1), countOver(vhsErr, 1))
		if len(pairPhotoKept) > 0 {
			fmt.Printf("  on the same radiographs (n=%d): MAE as screen photos %.3f v, as files %.3f v (difference %+.3f v)\n",
				len(pairPhotoKept), mean(pairPhotoKept), mean(pairFileKept), mean(pairPhotoKept)-mean(pairFileKept))
		}
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
