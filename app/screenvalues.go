package app

import (
	"image"
	"math"

	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
)

// The engines' values as the desktop's screens hold and show them. The
// screens (ui) call app only (issue 44, "Arrows point down"): the types
// below are the engines' own, named here, so that a measurement's result
// and an edited landmark set pass between ui and the use cases unchanged.

// Point is a position in pixels of the measured image (continuous
// coordinates: the image spans [0,W] x [0,H]).
type Point = cardiac.Point

// Landmarks is one set of the 7 cardiac landmarks in image pixels, in the
// spec's class order (the indices below).
type Landmarks = cardiac.Landmarks

// The landmark indices, in the spec's class order (the order in which
// they are placed by hand).
const (
	// HeartTop is the carina, the top of the long axis.
	HeartTop = cardiac.HeartTop
	// HeartBottom is the cardiac apex, the bottom of the long axis.
	HeartBottom = cardiac.HeartBottom
	// HeartRight is the cranial end of the short axis.
	HeartRight = cardiac.HeartRight
	// HeartLeft is the caudal end of the short axis.
	HeartLeft = cardiac.HeartLeft
	// VLASPoint is the caudal border of the left atrium (VLAS).
	VLASPoint = cardiac.VLASPoint
	// VertebraA is the start of the vertebral ruler (T4's cranial endplate).
	VertebraA = cardiac.VertebraA
	// VertebraB is the end of the vertebral ruler (T9's caudal endplate).
	VertebraB = cardiac.VertebraB
	// NumLandmarks is the number of landmarks of a complete set (7).
	NumLandmarks = cardiac.NumLandmarks
)

// The cardiac outcomes a screen tells apart.
const (
	// GuardNone is a result's Guard when no guard withheld a value.
	GuardNone = cardiac.GuardNone
	// CodePoPFailed is the result code of a screen photo whose perspective
	// could not be corrected (code 7).
	CodePoPFailed = cardiac.CodePoPFailed
	// ConfidenceReview is the confidence of landmarks the model is unsure
	// of: the clinician should check them.
	ConfidenceReview = cardiac.ConfidenceReview
)

// ClampPoint keeps p inside an image of bounds b: each coordinate is held
// to [0, width] and [0, height] (the span SaveMeasurement accepts for a
// clinician's landmark).
func ClampPoint(p Point, b image.Rectangle) Point {
	return Point{
		X: math.Min(math.Max(p.X, 0), float64(b.Dx())),
		Y: math.Min(math.Max(p.Y, 0), float64(b.Dy())),
	}
}

// USGResult is a USG screening's result: the probability, risk tier,
// conformal set, ensemble spread and SHAP attributions.
type USGResult = usg.Result

// FeatureShap is one bloodwork value's SHAP attribution in a USGResult.
type FeatureShap = usg.FeatureShap

// NumBloodworkValues is the number of values of the bloodwork form (the
// USG model's features).
const NumBloodworkValues = usg.NumFeatures

// BloodworkKeys are the canonical keys of the bloodwork values in model
// order (the order of BloodworkNames and BloodworkUnits), as a stored
// screening's Features map is keyed.
func BloodworkKeys() []string { return usg.Features() }

// ModelInfo names the loaded models, for the About box.
type ModelInfo struct {
	// CardiacLoaded is set when a cardiac engine is loaded, and
	// CardiacVersion is then its ensemble's model version.
	CardiacLoaded  bool
	CardiacVersion string
	// USGLoaded is set when a USG engine is loaded, and USGVersion is
	// then its model version.
	USGLoaded  bool
	USGVersion string
}

// Models reports which models are loaded and their versions.
func (s *Status) Models() ModelInfo {
	var mi ModelInfo
	if s.cardiac != nil {
		mi.CardiacLoaded, mi.CardiacVersion = true, s.cardiac.ModelVersion()
	}
	if s.usg != nil {
		mi.USGLoaded, mi.USGVersion = true, s.usg.Version().ModelVersion
	}
	return mi
}

// CorrectionBase is what a further correction of the saved measurement
// replaces, for the patient it was saved for: the entry just stored when
// it superseded an earlier version (a correction), so that the chain of
// corrections stays linked; nil when that entry corrected nothing.
func (s Saved) CorrectionBase(id PatientID) *EntryRef {
	e := s.Entry
	if e.Supersedes == 0 {
		return nil
	}
	return &EntryRef{PatientID: id, Customer: DesktopCustomer, Seq: e.Seq, Kind: EntryKind(e), Time: e.Time}
}
