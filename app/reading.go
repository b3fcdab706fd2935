package app

import "fmt"

// Finding is one measurement stated as a clinician says it.
type Finding struct {
	// Line is the finding in plain words, e.g. "Heart size: enlarged
	// (VHS 11.2; breed range 10.0-13.2)".
	Line string
	// Abnormal is set when the value lies outside the range.
	Abnormal bool
}

// HeartSize states a VHS against the patient's reference range.
func HeartSize(vhs *float64, ref Reference) Finding {
	rng := fmt.Sprintf("%s %s", ref.VHS.Scope(), ref.VHS.Describe())
	if vhs == nil {
		return Finding{Line: fmt.Sprintf("Heart size: not measured (%s)", rng)}
	}
	word, abnormal := "normal", false
	switch {
	case *vhs > ref.VHS.High:
		word, abnormal = "enlarged", true
	case ref.VHS.Low > 0 && *vhs < ref.VHS.Low:
		word, abnormal = "small", true
	}
	return Finding{Line: fmt.Sprintf("Heart size: %s (VHS %.1f; %s)", word, *vhs, rng), Abnormal: abnormal}
}

// LeftAtrium states a VLAS against the species' cut-off.
func LeftAtrium(vlas *float64, ref Reference) Finding {
	switch {
	case !ref.HasVLAS && vlas == nil:
		return Finding{Line: "Left atrium: not measured"}
	case !ref.HasVLAS:
		return Finding{Line: fmt.Sprintf("Left atrium: VLAS %.1f (no published range for this species)", *vlas)}
	case vlas == nil:
		return Finding{Line: fmt.Sprintf("Left atrium: not measured (reference %s)", ref.VLAS.Describe())}
	case *vlas >= ref.VLAS.High:
		return Finding{Line: fmt.Sprintf("Left atrium: enlarged (VLAS %.1f; reference %s)", *vlas, ref.VLAS.Describe()), Abnormal: true}
	}
	return Finding{Line: fmt.Sprintf("Left atrium: normal (VLAS %.1f; reference %s)", *vlas, ref.VLAS.Describe())}
}

// Reading puts VHS and VLAS in plain words against the patient's ranges:
// one sentence a clinician would write in the notes. nil values were not
// measured.
func Reading(vhs, vlas *float64, ref Reference) string {
	if vhs == nil {
		return "No heart size could be measured on this image."
	}
	var s string
	switch h := HeartSize(vhs, ref); {
	case !h.Abnormal:
		s = "The heart size is within the " + ref.VHS.Scope() + "."
	case *vhs > ref.VHS.High:
		s = fmt.Sprintf("The heart is larger than the %s (VHS above %.1f), consistent with cardiomegaly.", ref.VHS.Scope(), ref.VHS.High)
	default:
		s = fmt.Sprintf("The heart is smaller than the %s (VHS below %.1f).", ref.VHS.Scope(), ref.VHS.Low)
	}
	switch {
	case vlas == nil:
		s += " The left atrium could not be measured."
	case !ref.HasVLAS:
		s += " No published VLAS range applies to this species."
	case *vlas >= ref.VLAS.High:
		s += fmt.Sprintf(" The left atrium appears enlarged (VLAS %.1f or more).", ref.VLAS.High)
	default:
		s += " The left atrium size is normal."
	}
	return s
}
