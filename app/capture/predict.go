// Package capture runs the picture-of-picture (PoP) capture sessions of the
// cardiac v3 spec and the PoP-aware single-image prediction: frames of a
// radiograph photographed on a monitor are perspective-corrected
// (engine/pop) and measured by the cardiac engine. It does not bill: it
// returns outcomes, and the caller bills on completion. docs/pop.md
// documents the API and the rules.
package capture

import (
	"context"
	"fmt"
	"image"
	"math"

	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/engine/pop"
)

// Predictor is what capture needs from the cardiac engine
// (*cardiac.Engine implements it).
type Predictor interface {
	Predict(ctx context.Context, img image.Image, o cardiac.PredictOptions) (*cardiac.Result, error)
	ModelVersion() string
}

// Analyzer is the PoP pipeline: corners, PoP detection, rectification and
// frame quality of an encoded frame. PoP (below) is the real one; tests
// may substitute a double.
type Analyzer interface {
	AnalyzeBytes(b []byte) (*pop.Analysis, error)
}

// PoP is the engine/pop pipeline as an Analyzer: the learned screen
// finder when Models is set (loaded by the command line with
// engine/pop/poport.Load, so app links no model runtime), the classical
// geometry otherwise.
type PoP struct {
	// Models is the loaded PoP model family; nil runs the classical
	// pipeline.
	Models *pop.Models
}

// AnalyzeBytes analyses an encoded frame with the learned pipeline
// (Models.AnalyzeBytes) or, without models, pop.AnalyzeBytes.
func (p PoP) AnalyzeBytes(b []byte) (*pop.Analysis, error) {
	if p.Models != nil {
		return p.Models.AnalyzeBytes(context.Background(), b)
	}
	return pop.AnalyzeBytes(b)
}

// CornersBytes finds the displayed image's corners in an encoded frame
// with the learned finder or, without models, the classical detector.
// Decode errors wrap imageproc's sentinels.
func (p PoP) CornersBytes(ctx context.Context, b []byte) (pop.Corners, error) {
	if p.Models != nil {
		return p.Models.DetectCornersBytes(ctx, b)
	}
	return pop.DetectCornersBytes(b)
}

// ModelsLoaded is the number of PoP model files loaded (0 for the
// classical pipeline).
func (p PoP) ModelsLoaded() int { return p.Models.Count() }

// ModelVersion is the learned family's version, or the classical
// pipeline's (pop.Version).
func (p PoP) ModelVersion() string { return p.Models.Version() }

// Single is the PoP-aware prediction of one image.
type Single struct {
	// Result is the cardiac result. When a screen photo was corrected, its
	// positions (and Width, Height) refer to the rectified image, and
	// PopDetected is set. When a screen showing a radiograph was found
	// but could not be corrected (ShowsRadiograph), it is code 7
	// (CorrectionFailed) and carries no positions.
	Result *cardiac.Result
	// Analysis is what the PoP pipeline found.
	Analysis *pop.Analysis
	// Measured is the image the positions refer to: the rectified image
	// when a screen photo was corrected, else the decoded input; nil for
	// code 7 (nothing is reported on it).
	Measured image.Image
	// Screenshot is, when the input was rejected as a whole and the
	// displayed image inside it (a viewer's screenshot, or a radiograph
	// in a border; pop.ScreenshotViewport) was measured in its place,
	// that image's rectangle in Measured's pixels; empty otherwise. The
	// positions still refer to Measured, the whole input.
	Screenshot image.Rectangle
}

// MirrorProblem measures img mirrored (cardiac.PredictOptions.Mirror) and
// says why a VHS of vhs on img cannot be trusted: the mirror gives no VHS,
// or one more than DefaultVHSAgreement away ("" when they agree; o is
// used as given, with Mirror set and Render cleared). The models were
// trained to follow mirroring, so on an image they measure well the two
// agree; a screen photo they misread often moves (docs/pop.md, "Single
// screen photos").
func MirrorProblem(ctx context.Context, p Predictor, img image.Image, vhs float64, o cardiac.PredictOptions) (string, error) {
	o.Mirror, o.Render = true, false
	m, err := p.Predict(ctx, img, o)
	if err != nil {
		return "", fmt.Errorf("predict on the mirrored rectified image: %w", err)
	}
	switch {
	case m.VHS == nil:
		return fmt.Sprintf("mirrored, the screen photo gives no VHS (result code %d)", m.Code), nil
	case math.Abs(*m.VHS-vhs) > DefaultVHSAgreement:
		return fmt.Sprintf("mirrored, the screen photo's VHS moves from %.2f to %.2f", vhs, *m.VHS), nil
	}
	return "", nil
}

// ScreenPhotoProblem says why a corrected screen photo (analysis an,
// measured as a VHS of vhs on its rectified image img) gets no number:
// first FrameProblem (guard cardiac.GuardScreenPhotoQuality), then
// MirrorProblem (cardiac.GuardScreenPhotoUnstable). It returns
// cardiac.GuardNone and "" when the number stands. PredictImage applies
// it; bench/evalpop counts with it.
func ScreenPhotoProblem(ctx context.Context, p Predictor, an *pop.Analysis, img image.Image, vhs float64, o cardiac.PredictOptions) (cardiac.Guard, string, error) {
	if prob := FrameProblem(an, MinCornerConfidence); prob != "" {
		return cardiac.GuardScreenPhotoQuality, prob, nil
	}
	prob, err := MirrorProblem(ctx, p, img, vhs, o)
	if err != nil || prob == "" {
		return cardiac.GuardNone, "", err
	}
	return cardiac.GuardScreenPhotoUnstable, prob, nil
}

// PredictImage detects whether b (JPEG or PNG) is a photograph of a
// screen; if so it rectifies the display area and measures the rectified
// image, withholding the numbers (code 5, Result.GuardDetail saying why)
// when ScreenPhotoProblem names a problem: a capture session would not
// keep the frame, or the mirrored rectified image measures more than
// DefaultVHSAgreement apart. Otherwise it
// measures b as it is, withholding the numbers (code 5,
// cardiac.GuardPossibleScreenPhoto) when the image may still be a screen
// photographed at an angle (pop.Analysis.PossibleScreen). A frame in
// which a screen was suspected but not corrected gets code 7 only when
// it shows a radiograph (ShowsRadiograph); otherwise it gets the plain
// file's answer (a photo scene: code 6). Decode errors wrap imageproc's
// sentinels.
func PredictImage(ctx context.Context, p Predictor, a Analyzer, b []byte, o cardiac.PredictOptions) (*Single, error) {
	an, err := a.AnalyzeBytes(b)
	if err != nil {
		return nil, fmt.Errorf("pop analysis: %w", err)
	}
	if an.Corrected {
		o.SkipRefinement = true // a rectified screen photo: first stage only (docs/cardiac.md)
		r, err := p.Predict(ctx, an.Rectified, o)
		if err != nil {
			return nil, fmt.Errorf("predict on rectified image: %w", err)
		}
		r.PopDetected = true
		if r.Code.HasVHS() {
			guard, prob, err := ScreenPhotoProblem(ctx, p, an, an.Rectified, *r.VHS, o)
			if err != nil {
				return nil, err
			}
			if guard != cardiac.GuardNone {
				r.Withhold(guard, prob)
			}
		}
		return &Single{Result: r, Analysis: an, Measured: an.Rectified}, nil
	}
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	if an.PoPDetected {
		// Only a rejection of it is reported (below): the first stage is
		// enough.
		o.SkipRefinement = true
	}
	s, err := predictFile(ctx, p, an, img, o)
	if err != nil {
		return nil, err
	}
	if an.PoPDetected {
		// A screen suspected, not corrected: code 7 only where the frame
		// shows a radiograph (ShowsRadiograph); else the file's answer.
		shows, err := ShowsRadiograph(ctx, p, an, img, s.Result)
		if err != nil {
			return nil, err
		}
		if shows {
			return &Single{Result: CorrectionFailed(an), Analysis: an}, nil
		}
	}
	if an.PossibleScreen {
		s.Result.Withhold(cardiac.GuardPossibleScreenPhoto, "")
	}
	return s, nil
}

// CorrectionFailed is the result of a frame in which a screen showing a
// radiograph was found but could not be corrected: code 7
// (cardiac.Result.MarkPoPCorrectionFailed), no numbers, not billable.
func CorrectionFailed(an *pop.Analysis) *cardiac.Result {
	r := &cardiac.Result{Width: an.Corners.Width, Height: an.Corners.Height, Spread: math.NaN(), ClassifierConfidence: math.NaN()}
	r.MarkPoPCorrectionFailed()
	return r
}

// ShowsRadiograph says whether a frame in which a screen was suspected
// but not corrected (an.PoPDetected && !an.Corrected) shows a radiograph
// on it, the condition for code 7 (docs/pop.md, "A screen suspected, not
// corrected"). The rule: the frame measured as a plain file (whole, the
// result given as whole, or the displayed image inside it: predictFile)
// is not rejected, or the suspected displayed image's bounding box
// (an.Corners.Quad, clipped to the frame), measured as a file, is not
// rejected. "Rejected" is the cardiac engine's own code 6: the validity
// classifier under cardiac.ValidityThreshold, or the checks of "Not a
// thorax" (docs/cardiac.md). A photo scene whose rectangles (pictures,
// windows, doors) made a screen candidate passes neither, and so gets
// the plain file's answer, code 6: code 7 means "a screen really found,
// retake it", not "something rectangular".
func ShowsRadiograph(ctx context.Context, p Predictor, an *pop.Analysis, img image.Image, whole *cardiac.Result) (bool, error) {
	if !whole.Rejected {
		return true, nil
	}
	crop, ok := quadCrop(img, an.Corners.Quad)
	if !ok {
		return false, nil
	}
	r, err := p.Predict(ctx, crop, cardiac.PredictOptions{SkipRefinement: true})
	if err != nil {
		return false, fmt.Errorf("predict on the suspected screen: %w", err)
	}
	return !r.Rejected, nil
}

// suspectedScreenShows is ShowsRadiograph for a frame not yet measured:
// it measures img as a plain file first (predictFile, nothing rendered).
func suspectedScreenShows(ctx context.Context, p Predictor, an *pop.Analysis, img image.Image) (bool, error) {
	s, err := predictFile(ctx, p, an, img, cardiac.PredictOptions{SkipRefinement: true})
	if err != nil {
		return false, err
	}
	return ShowsRadiograph(ctx, p, an, img, s.Result)
}

// quadCrop is img cropped to q's bounding box clipped to img; false when
// img cannot be cropped or the box is smaller than imageproc.MinSide on
// a side, or is the whole image (measured already).
func quadCrop(img image.Image, q pop.Quad) (image.Image, bool) {
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return nil, false
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range q {
		x0, y0, x1, y1 = math.Min(x0, c.X), math.Min(y0, c.Y), math.Max(x1, c.X), math.Max(y1, c.Y)
	}
	b := img.Bounds()
	r := image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1))).Add(b.Min).Intersect(b)
	if r.Dx() < imageproc.MinSide || r.Dy() < imageproc.MinSide || r == b {
		return nil, false
	}
	return sub.SubImage(r), true
}

// predictFile measures a file that is not a screen photo: the whole
// file, and, only if the validity model rejects that, the displayed image
// inside it where there is one (pop.ScreenshotViewport: a viewer's
// screenshot, or a radiograph pasted on a page or padded), since the
// radiograph, not the toolbars, panels or page around it, is what the
// validity model and the landmark models are for. The displayed image's
// result replaces the rejection unless it is rejected too; it is moved
// into the whole file's pixels (cardiac.Result.Offset) and
// Single.Screenshot says which rectangle was measured.
func predictFile(ctx context.Context, p Predictor, an *pop.Analysis, img image.Image, o cardiac.PredictOptions) (*Single, error) {
	r, err := p.Predict(ctx, img, o)
	if err != nil {
		return nil, err
	}
	whole := &Single{Result: r, Analysis: an, Measured: img}
	if !r.Rejected {
		return whole, nil
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return whole, nil
	}
	rect, ok := pop.ScreenshotViewport(img)
	if !ok {
		return whole, nil
	}
	s, err := predictViewport(ctx, p, an, img, sub.SubImage(rect), rect, o)
	if err != nil || s.Result.Rejected {
		return whole, err
	}
	return s, nil
}

// predictViewport measures the displayed image part (at rect in img) and
// returns the result in img's pixels, rendered on img when o asks.
func predictViewport(ctx context.Context, p Predictor, an *pop.Analysis, img, part image.Image, rect image.Rectangle, o cardiac.PredictOptions) (*Single, error) {
	po := o
	po.Render = false
	r, err := p.Predict(ctx, part, po)
	if err != nil {
		return nil, fmt.Errorf("predict on the displayed image of a screenshot: %w", err)
	}
	b := img.Bounds()
	r.Offset(rect.Min.Sub(b.Min), b.Dx(), b.Dy())
	if o.Render && !r.Rejected {
		if r.Rendered, err = cardiac.RenderJPEG(img, r); err != nil {
			return nil, fmt.Errorf("render screenshot result: %w", err)
		}
	}
	return &Single{Result: r, Analysis: an, Measured: img, Screenshot: rect.Sub(b.Min)}, nil
}
