package cardiac

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"math"

	"vetlens/engine/manifest"
)

// RoleRefine is the manifest role of the refinement models: the second
// stage, run on a crop around the first stage's landmarks
// (docs/cardiac.md, "Refinement stage"). Same tensors as RoleLandmark.
const RoleRefine = "cardiac_refine"

// refineMinSide is the smallest crop side (pixels) worth refining; a
// smaller box keeps the first stage's landmarks. Equal to MIN_SIDE in
// models/train/cardiac/refine.py.
const refineMinSide = 16

// refineMargin reads the crop margin from the cardiac family's params
// ("refine_margin"); it is required when refinement models are shipped.
func refineMargin(fam manifest.Family, needed bool) (float64, error) {
	if !needed {
		return 0, nil
	}
	var p struct {
		Margin *float64 `json:"refine_margin"`
	}
	if len(fam.Params) > 0 {
		if err := json.Unmarshal(fam.Params, &p); err != nil {
			return 0, fmt.Errorf("cardiac family params: %w", err)
		}
	}
	if p.Margin == nil || !(*p.Margin >= 0 && *p.Margin <= 2) {
		return 0, fmt.Errorf("%s models need the cardiac family param refine_margin in [0,2]", RoleRefine)
	}
	return *p.Margin, nil
}

// RefineBox is the refinement crop around landmarks l of a w x h image,
// as models/train/cardiac/refine.py defines it: the landmarks' extent padded by
// margin times its larger side, outward to whole pixels, clipped to the
// image. ok is false when a landmark is not finite or the box is smaller
// than refineMinSide on a side.
func RefineBox(l Landmarks, w, h int, margin float64) (box image.Rectangle, ok bool) {
	lo := Point{math.Inf(1), math.Inf(1)}
	hi := Point{math.Inf(-1), math.Inf(-1)}
	for _, p := range l {
		if !isFinite(p.X) || !isFinite(p.Y) {
			return image.Rectangle{}, false
		}
		lo = Point{math.Min(lo.X, p.X), math.Min(lo.Y, p.Y)}
		hi = Point{math.Max(hi.X, p.X), math.Max(hi.Y, p.Y)}
	}
	pad := margin * math.Max(hi.X-lo.X, hi.Y-lo.Y)
	// Clamp in float first: a wild landmark must not overflow int.
	clamp := func(v float64, limit int) int { return int(math.Min(math.Max(v, 0), float64(limit))) }
	box = image.Rect(clamp(math.Floor(lo.X-pad), w), clamp(math.Floor(lo.Y-pad), h),
		clamp(math.Ceil(hi.X+pad), w), clamp(math.Ceil(hi.Y+pad), h))
	return box, box.Dx() >= refineMinSide && box.Dy() >= refineMinSide
}

// refineStage re-measures on the crop around the first stage's ensemble
// mean and returns the refinement models' landmarks (pixels of img) and
// peaks. Where no usable crop exists (non-finite or degenerate first-stage
// landmarks) the first stage's results come back unchanged, and the result
// code then reports them as the first stage found them.
func (e *Engine) refineStage(ctx context.Context, img image.Image, models []Landmarks, peaks [][NumLandmarks]float64) ([]Landmarks, [][NumLandmarks]float64, error) {
	b := img.Bounds()
	box, ok := RefineBox(EnsembleMean(models), b.Dx(), b.Dy(), e.margin)
	if !ok {
		return models, peaks, nil
	}
	crop := cropImage(img, box.Add(b.Min))
	rm, rp, err := e.runLandmarks(ctx, crop, e.refine)
	if err != nil {
		return nil, nil, fmt.Errorf("refinement stage: %w", err)
	}
	off := Point{float64(box.Min.X), float64(box.Min.Y)}
	for i := range rm {
		for k := range rm[i] {
			rm[i][k] = Point{rm[i][k].X + off.X, rm[i][k].Y + off.Y}
		}
	}
	return rm, rp, nil
}

// cropImage returns the part r of img sharing its pixels where the image
// type allows (every standard type does), else a copy.
func cropImage(img image.Image, r image.Rectangle) image.Image {
	if s, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return s.SubImage(r)
	}
	dst := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(dst, dst.Bounds(), img, r.Min, draw.Src)
	return dst
}
