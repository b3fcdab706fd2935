package cardiac

import (
	"context"
	"image"
	"math"

	"vetlens/engine/imageproc"
)

// Levelling a tilted spine (docs/cardiac.md, "Levelling a tilted spine").
// Real lateral radiographs often show the spine 15-30 degrees off the
// horizontal (an oblique patient, or a viewer crop that follows the
// thorax), further than the models ever saw in training (the simulator's
// in-plane rotation and the training augmentation reach about 15 degrees
// each). The engine reads the spine's direction from the first pass's
// Vertebra A-B and, where it is tilted by MinLevelDeg or more from
// CanonicalSpineDeg, measures the image again turned so that the spine
// lies as in training; the second pass's landmarks, mapped back into the
// image, are the result.
const (
	// CanonicalSpineDeg is the direction of Vertebra A to B that training
	// images show, in degrees below the horizontal towards the tail
	// (positive: B lower than A): the median over the simulator's
	// validation radiographs with the head put on the left.
	CanonicalSpineDeg = 1.5
	// MinLevelDeg is the smallest tilt that is levelled: the 90th
	// percentile of the tilts training showed the models (the simulator's
	// anatomy and rotation with the augmentation's turns, 15 degrees); a
	// smaller tilt is inside what they learned, and turning the image
	// costs resolution (the grown canvas).
	MinLevelDeg = 15.0
	// MaxLevelDirectionSDDeg is the largest standard deviation of the
	// members' own A-B directions under which their mean direction is
	// trusted enough to turn the image by it.
	MaxLevelDirectionSDDeg = 2.0
	// levelMaxSideFactor keeps the turned copy's longer side at least this
	// many times the landmark models' input side (under twice that; enough
	// for their box resampling, and cheap).
	levelMaxSideFactor = 2
)

// SpineTilt is the turn, in degrees counter-clockwise on screen, that
// brings the direction of Vertebra A to B in l to CanonicalSpineDeg
// (mirrored for a head on the right): the angle imageproc.RotateGray
// takes to level the spine. It is 0 where A and B coincide or are not
// finite.
func SpineTilt(l Landmarks) float64 {
	d := Point{l[VertebraB].X - l[VertebraA].X, l[VertebraB].Y - l[VertebraA].Y}
	if !isFinite(d.X) || !isFinite(d.Y) || (d.X == 0 && d.Y == 0) {
		return 0
	}
	if d.X >= 0 { // head on the left: A to B points right
		return math.Atan2(d.Y, d.X)*180/math.Pi - CanonicalSpineDeg
	}
	// Head on the right: a mirrored image turns the other way.
	return -(math.Atan2(d.Y, -d.X)*180/math.Pi - CanonicalSpineDeg)
}

// level measures img again turned by SpineTilt of the first pass's
// ensemble mean when that is MinLevelDeg or more, and returns each
// model's landmarks mapped back into img's pixels with their peaks and
// the turn applied; otherwise it returns the first pass unchanged and 0.
func (e *Engine) level(ctx context.Context, img image.Image, models []Landmarks, peaks [][NumLandmarks]float64) ([]Landmarks, [][NumLandmarks]float64, float64, error) {
	deg := SpineTilt(EnsembleMean(models))
	if math.Abs(deg) < MinLevelDeg || spineTiltSD(models) > MaxLevelDirectionSDDeg {
		return models, peaks, 0, nil
	}
	side := 0
	for _, m := range e.landmarks {
		side = max(side, m.size)
	}
	rot := imageproc.RotateGray(img, deg, levelMaxSideFactor*side)
	turned, turnedPeaks, err := e.runLandmarks(ctx, rot.Image, e.landmarks)
	if err != nil {
		return nil, nil, 0, err
	}
	for i := range turned {
		for k, p := range turned[i] {
			x, y := rot.ToOriginal(p.X, p.Y)
			turned[i][k] = Point{x, y}
		}
	}
	return turned, turnedPeaks, deg, nil
}

// spineTiltSD is the standard deviation of SpineTilt over the models'
// own landmarks, in degrees: how far they agree on the spine's direction.
func spineTiltSD(models []Landmarks) float64 {
	tilts := make([]float64, len(models))
	for i, m := range models {
		tilts[i] = SpineTilt(m)
	}
	return stdDev(tilts)
}
