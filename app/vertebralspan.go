package app

import (
	"fmt"
	"image"

	"vetlens/engine/cardiac"
)

// SpanCheck is the vertebral span check of one Vertebra A-B span: the
// image's own count of the vertebrae it covers (cardiac.CountSpan, the
// count guard 9 withholds a model's VHS on), worded for the clinician.
// VHS counts in vertebrae from T4's cranial to T9's caudal endplate, so a
// span a vertebra too short or too long moves VHS by about a sixth of its
// value (1.7 v at VHS 10), whoever placed the points.
type SpanCheck struct{ cardiac.SpanCount }

// Warning is the clinician's note for a span that is not six vertebrae,
// "" otherwise.
func (s SpanCheck) Warning() string {
	if !s.OffSix() {
		return ""
	}
	return fmt.Sprintf("Vertebra A-B covers about %.1f vertebrae by the image's own vertebral length (%.0f px), not six: check that A is on T4's cranial endplate and B on T9's caudal endplate.",
		s.Vertebrae, s.PeriodPixels)
}

// Summary is one line on the check for the measurement's details.
func (s SpanCheck) Summary() string {
	if !s.Measured {
		return "Vertebral span: the image's vertebral length could not be measured along Vertebra A-B, so the span was not counted."
	}
	return fmt.Sprintf("Vertebral span: A-B covers about %.1f vertebrae of %.0f px, the column's own repeat along it (six expected).", s.Vertebrae, s.PeriodPixels)
}

// ReportLine is the check as the PDF report states it, "" where the
// span was not counted.
func (s SpanCheck) ReportLine() string {
	switch {
	case !s.Measured:
		return ""
	case s.OffSix():
		return fmt.Sprintf("Vertebral span checked against the image: about %.1f vertebrae from A to B, not six; Vertebra A or B may be on the wrong vertebra.", s.Vertebrae)
	}
	return fmt.Sprintf("Vertebral span checked against the image: about %.1f vertebrae from A to B (six expected).", s.Vertebrae)
}

// CheckVertebralSpan counts the vertebrae between landmarks l's Vertebra
// A and B on img, the image they were placed on (pixels).
func CheckVertebralSpan(img image.Image, l cardiac.Landmarks) SpanCheck {
	return SpanCheck{cardiac.CountSpan(img, l[cardiac.VertebraA], l[cardiac.VertebraB])}
}

// SpanCheck is the vertebral span check of the landmarks in effect on
// m.Image: clinician's when given (moved or placed by hand), else the
// model's where it found them; nil without an image or landmarks.
func (m *Measurement) SpanCheck(clinician *cardiac.Landmarks) *SpanCheck {
	var l cardiac.Landmarks
	switch {
	case m.Image == nil:
		return nil
	case clinician != nil:
		l = *clinician
	case m.HasModelLandmarks():
		l = m.Result.Landmarks
	default:
		return nil
	}
	s := CheckVertebralSpan(m.Image, l)
	return &s
}
