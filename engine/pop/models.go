package pop

import (
	"errors"
	"fmt"
	"image"
	"math"

	"gocv.io/x/gocv"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// The PoP model family (models/manifest.json, family "pop"; docs/pop.md,
// "Learned screen finder"). Every model runs on a working copy of the
// frame whose long side is WorkSide pixels, as in training.
const (
	// FamilyName is the manifest family of the PoP models.
	FamilyName = "pop"
	// RoleCornersA and RoleCornersB are the two corner-heatmap models:
	// frame 3 x 160 x 160 -> points 8 x 2 (screen TL, TR, BR, BL, then
	// displayed image TL, TR, BR, BL, as shares of the frame's width and
	// height) and spread 8. Their agreement is the corners' confidence.
	RoleCornersA = "pop_corners_a"
	RoleCornersB = "pop_corners_b"
	// RolePresence is the screen-present classifier: frame 3 x 160 x 160
	// -> p_screen (a photographed display showing an image; plain
	// radiograph files, rooms without a screen and black frames are 0).
	RolePresence = "pop_presence"
	// RoleViewport finds the displayed radiograph inside the rectified
	// screen: grey 1 x 128 x 128 -> points 4 x 2 (shares of the rectified
	// screen) and spread 4.
	RoleViewport = "pop_viewport"
	// RoleQuality rates the rectified displayed image: grey 1 x 128 x 128
	// -> problems 3 (probabilities: blurred, glare over the heart, moire).
	RoleQuality = "pop_quality"

	// WorkSide is the long side of the working copy the models see.
	WorkSide = 512
	// frameSide and cropSide are the model input sizes.
	frameSide, cropSide = 160, 128
	// ExpectedModels is the size of the PoP family.
	ExpectedModels = 5
)

// Decision thresholds of the learned finder, set on development
// composites (pop/variety.py, split train, seeds 30,800,000+; docs/pop.md).
const (
	// MinPresence is the p_screen from which a colour frame is a screen
	// photo. Set for the .7 presence model (trained with plain-file
	// negatives of both simulator worlds) on development data, in the gap
	// between the two: 102 of 105 usable development screen photos score
	// 0.30 or more (the other three under 0.07), and the colour validation
	// radiograph files of both worlds score under 0.16 but for one (0.57,
	// its corners not found). Checked on 1,000 development frames: it
	// takes 866 of the 881 usable, as many as .3 did at 0.15.
	// experiments/2026-pop-journal.md, "Presence model .7".
	MinPresence = 0.2
	// maxAgreement is the mean distance between the two corner models'
	// screen corners, as a share of the frame diagonal, at which the
	// corners' confidence reaches 0.
	maxAgreement = 0.04
	// cutOffMargin: a displayed-image corner further outside the frame
	// than this share of the diagonal makes the frame cut off.
	cutOffMargin = 0.005
	// MaxGlareHeart, MaxBlurred: the quality model's probabilities above
	// which a frame has glare over the heart or is blurred.
	MaxGlareHeart, MaxBlurred = 0.5, 0.5
	// learnedMinAngle is the smallest interior angle (degrees) of a
	// learned quad: perspective up to 45 degrees with roll.
	learnedMinAngle = 25
	// classicalAgreement is the largest mean distance, as a share of the
	// frame diagonal, between the classical and the learned screen quads
	// at which both are taken to be the same screen.
	classicalAgreement = 0.05
	// priorTolerance is how far (mean corner distance over the diagonal)
	// a classical candidate may lie from the learned screen quad when the
	// learned quad guides the classical search.
	priorTolerance = 0.1
	// guidedAgreement is the largest disagreement of the two corner models
	// (as maxAgreement) at which the learned quad still guides the
	// classical search: twice maxAgreement. The guided search only keeps
	// a quad the edges support (classical confidence), so a learned quad
	// too uncertain to count as found on its own still tells which edges
	// are the screen (a wall picture or a desk otherwise wins).
	guidedAgreement = 2 * maxAgreement
	// viewportAgreement is the largest mean corner distance (share of the
	// diagonal) between the classical displayed area (its viewer viewport,
	// or the whole screen when it found none) and the viewport model's
	// snapped area at which the classical one is kept. 0.5 %: the snapped
	// viewport is itself fitted on the displayed image's edges, and the
	// classical area differs from it mostly when it is another area (the
	// whole screen around a letterboxed radiograph or a light viewer's
	// panels, a viewer window instead of its viewport); 3 % before. Set on
	// development frames (experiments/2026-pop-journal.md, "Gates").
	viewportAgreement = 0.005
)

// Models is the loaded PoP model family. Its methods are safe for
// concurrent use.
type Models struct {
	cornersA, cornersB, presence, viewport, quality infer.Session
	version                                         string
}

// LoadModelsWith loads the five PoP models listed in dir/manifest.json
// after verifying their checksums, opening each with open. The product
// opens them in ONNX Runtime through engine/pop/poport.Load; package pop
// itself links no model runtime.
func LoadModelsWith(dir string, open infer.Opener) (*Models, error) {
	m, err := manifest.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("pop models: %w", err)
	}
	fam, err := m.Family(FamilyName)
	if err != nil {
		return nil, fmt.Errorf("pop models: %w", err)
	}
	out := &Models{version: fam.ModelVersion}
	slots := []struct {
		role string
		s    *infer.Session
	}{{RoleCornersA, &out.cornersA}, {RoleCornersB, &out.cornersB}, {RolePresence, &out.presence}, {RoleViewport, &out.viewport}, {RoleQuality, &out.quality}}
	for _, sl := range slots {
		es := m.ByRole(sl.role)
		if len(es) != 1 {
			out.Close()
			return nil, fmt.Errorf("pop models: manifest has %d models of role %s, want 1", len(es), sl.role)
		}
		if err := m.Verify(es[0]); err != nil {
			out.Close()
			return nil, fmt.Errorf("pop models: %w", err)
		}
		s, err := open(m.Path(es[0]), es[0].Inputs, es[0].Outputs)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("pop models: %w", err)
		}
		*sl.s = s
	}
	return out, nil
}

// Close releases the sessions.
func (m *Models) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, s := range []infer.Session{m.cornersA, m.cornersB, m.presence, m.viewport, m.quality} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// Count is the number of PoP model files loaded (0 for nil).
func (m *Models) Count() int {
	if m == nil {
		return 0
	}
	n := 0
	for _, s := range []infer.Session{m.cornersA, m.cornersB, m.presence, m.viewport, m.quality} {
		if s != nil {
			n++
		}
	}
	return n
}

// Version is the family's model_version (Version when m is nil: the
// classical pipeline).
func (m *Models) Version() string {
	if m == nil {
		return Version
	}
	return m.version
}

// Learned is what the learned finder measured on a frame.
type Learned struct {
	// Presence is p_screen.
	Presence float64
	// Agreement is the mean distance between the two corner models'
	// screen corners over the frame diagonal.
	Agreement float64
	// CutOff: a displayed-image corner lies outside the frame.
	CutOff bool
	// Refined: the classical edge fit moved the screen quad onto the
	// display's edges (sub-pixel).
	Refined bool
	// Blurred, GlareHeart and Moire are the quality model's
	// probabilities; NaN when it did not run.
	Blurred, GlareHeart, Moire float64
	// Source is where the corners came from: "learned", or "classical"
	// when the classical detector's quad was taken (see detect).
	Source string
	// Classical is the classical detector's confidence (0 when it found
	// no candidate).
	Classical float64
}

// workCopy resizes frame (BGR) so its long side is WorkSide (area
// averaging down, bilinear up). The caller closes it.
func workCopy(frame gocv.Mat) gocv.Mat {
	W, H := frame.Cols(), frame.Rows()
	s := float64(WorkSide) / float64(max(W, H))
	w, h := max(1, int(math.Round(float64(W)*s))), max(1, int(math.Round(float64(H)*s)))
	out := gocv.NewMat()
	interp := gocv.InterpolationArea
	if s > 1 {
		interp = gocv.InterpolationLinear
	}
	gocv.Resize(frame, &out, image.Point{w, h}, 0, 0, interp)
	return out
}

// frameTensor is the corner and presence models' input: the working copy
// stretched to frameSide x frameSide (area averaging, as in training),
// RGB over 255, channel-major.
func frameTensor(work gocv.Mat) infer.Tensor {
	b := gocv.NewMat()
	defer b.Close()
	gocv.Resize(work, &b, image.Point{frameSide, frameSide}, 0, 0, gocv.InterpolationArea)
	px := b.ToBytes()
	n := frameSide * frameSide
	x := make([]float32, 3*n)
	for i := range n {
		// BGR -> RGB planes.
		x[i] = float32(px[3*i+2]) / 255
		x[n+i] = float32(px[3*i+1]) / 255
		x[2*n+i] = float32(px[3*i]) / 255
	}
	return infer.Tensor{Shape: []int64{1, 3, frameSide, frameSide}, Data: x}
}

// cropTensor rectifies quad q of the working copy (work pixels) to a grey
// cropSide square, the viewport and quality models' input.
func cropTensor(work gocv.Mat, q Quad) (infer.Tensor, error) {
	r, err := Rectify(work, q, cropSide, cropSide)
	defer r.Close()
	if err != nil {
		return infer.Tensor{}, err
	}
	g := gocv.NewMat()
	defer g.Close()
	gocv.CvtColor(r, &g, gocv.ColorBGRToGray)
	px := g.ToBytes()
	x := make([]float32, len(px))
	for i, v := range px {
		x[i] = float32(v) / 255
	}
	return infer.Tensor{Shape: []int64{1, 1, cropSide, cropSide}, Data: x}, nil
}

// points converts n model points (shares) into a slice of Points scaled
// by w and h.
func points(d []float32, n int, w, h float64) []Point {
	out := make([]Point, n)
	for i := range n {
		out[i] = Point{float64(d[2*i]) * w, float64(d[2*i+1]) * h}
	}
	return out
}

func quadOfPoints(p []Point) Quad { return Quad{p[0], p[1], p[2], p[3]} }

func meanQuadDist(a, b Quad) float64 {
	var s float64
	for i := range 4 {
		s += dist(a[i], b[i])
	}
	return s / 4
}
