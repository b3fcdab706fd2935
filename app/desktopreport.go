package app

import (
	"fmt"
	"image"
	"strings"
	"time"

	"vetlens/app/repo"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
)

// LandmarkNames are the landmarks' plain names, in the spec's class
// order, as the report's legend and the screens name them.
var LandmarkNames = [cardiac.NumLandmarks]string{
	cardiac.HeartTop:    "Carina",
	cardiac.HeartBottom: "Cardiac apex",
	cardiac.HeartRight:  "Cranial heart border",
	cardiac.HeartLeft:   "Caudal heart border",
	cardiac.VLASPoint:   "Left atrium (VLAS)",
	cardiac.VertebraA:   "Vertebra T4 (start)",
	cardiac.VertebraB:   "Vertebra T9 (end)",
}

// ReportImage draws the measurement for a report: the measured image with
// the landmarks in effect (the clinician's when given, edited or placed
// by hand, on any image), numbered 1-7 (LandmarkNames gives the legend),
// axes, ruler and values.
func ReportImage(m *Measurement, clinician *cardiac.Landmarks) (image.Image, Values) {
	return reportImage(m, clinician, false)
}

// reportImage is ReportImage, leaving the clinician's VLAS out with
// dropVLAS (its point is one the model doubted: CheckDoubt).
func reportImage(m *Measurement, clinician *cardiac.Landmarks, dropVLAS bool) (image.Image, Values) {
	r := *m.Result
	v := Values{VHS: r.VHS, VLAS: r.VLAS, AxesPerpendicular: r.AxesPerpendicular}
	if clinician != nil {
		v = EditedValues(*clinician)
		if dropVLAS {
			v.VLAS = nil
		}
		r.Landmarks = *clinician
		r.ModelLandmarks = []cardiac.Landmarks{*clinician} // drawn even where the model had none
		r.Rejected = false
		r.Geometry = cardiac.Measure(*clinician)
		r.VHS, r.VLAS = v.VHS, v.VLAS
	}
	var labels [cardiac.NumLandmarks]string
	for k := range labels {
		labels[k] = fmt.Sprint(k + 1)
	}
	return cardiac.RenderLabelled(m.Image, &r, labels), v
}

// ReportDetails is what a report says beyond the measurement: the
// patient's record and the clinic's letterhead.
type ReportDetails struct {
	Patient repo.Patient
	Clinic  report.Clinic
}

// DesktopReport is the one-page report of a reviewed measurement as req
// would save it (report.WritePDF writes it): the clinic, the animal and
// owner, the findings in plain words against the patient's species or
// breed range (named with its source), the kind of measurement (model,
// corrected or manual) with the model's values beside the clinician's,
// the model's confidence for model values only, the vertebral span check
// of the landmarks in effect (where the image let it count them), and the
// annotated image with numbered landmarks and their legend. There is no
// report for an image the model rejected, unless the clinician confirmed it is a
// radiograph and placed the landmarks, nor for a measurement without a
// VHS (KindInvalid). req is not otherwise checked: the report shows what
// is on screen, saved or not.
func DesktopReport(req SaveRequest, date time.Time, d ReportDetails) (report.Report, error) {
	m := req.Measurement
	if m == nil || m.Result == nil || m.Image == nil {
		return report.Report{}, errf(KindInvalid, "nothing measured to report")
	}
	kind, _ := req.kind() // not checked: an unknown kind is labelled so
	var lm *cardiac.Landmarks
	if kind.Clinician() {
		lm = req.Landmarks
	}
	r := m.Result
	if r.Rejected && (lm == nil || !req.ConfirmedRadiograph) {
		return report.Report{}, errf(KindInvalid, "the model rejected this image as not a radiograph: there is no report for it (confirm it is a radiograph and place the landmarks by hand to measure it)")
	}
	dropVLAS, err := req.checkDoubt(kind)
	if err != nil {
		return report.Report{}, err
	}
	img, v := reportImage(m, lm, dropVLAS)
	if v.VHS == nil {
		return report.Report{}, errf(KindInvalid, "no heart size was measured on this image: there is nothing to report")
	}
	p := d.Patient
	if p.ID == "" {
		p.ID = req.PatientID
	}
	if mm := StudyMismatch(m, p); mm != nil {
		return report.Report{}, errf(KindInvalid, "the file's patient tags contradict patient %s (%s): switch to the file's patient, or keep %s with the mismatch acknowledged",
			p.ID, strings.Join(mm.Differences, "; "), p.ID)
	}
	ref := ReferenceForPatient(p)
	rep := report.Report{
		Clinic: d.Clinic, PatientID: req.PatientID.String(), Date: date, Image: img, VHS: v.VHS, VLAS: v.VLAS,
		Kind:         kind.Label(),
		Result:       "Model result: " + r.Code.Description(),
		Findings:     []string{HeartSize(v.VHS, ref).Line, LeftAtrium(v.VLAS, ref).Line},
		Reading:      Reading(v.VHS, v.VLAS, ref),
		ModelVersion: m.ModelVersion,
		VHSRange:     ref.VHSLabel() + ", mean ± 2 SD",
		VLASRange:    ref.VLASLabel(),
		Animal:       animalFields(p, date),
	}
	if ref.Note != "" {
		rep.VHSRange += "; " + ref.Note
	}
	if ref.HasVLAS && ref.VLAS.Low <= 0 {
		rep.VLASRange = ref.VLASLabel() + ", cut-off for left atrial enlargement"
	}
	for k, name := range LandmarkNames {
		rep.Legend = append(rep.Legend, report.LegendItem{Number: k + 1, Name: name, Color: cardiac.LandmarkColor(k)})
	}
	if kind == MeasurementModel && !r.Rejected && r.Confidence != "" {
		rep.Confidence = string(r.Confidence)
	}
	if lm != nil {
		rep.Clinician, rep.ModelVHS, rep.ModelVLAS = true, r.VHS, r.VLAS
	}
	if s := m.SpanCheck(lm); s != nil {
		rep.Span = s.ReportLine()
	}
	return rep, nil
}

// animalFields are the record's details as the report lists them.
func animalFields(p repo.Patient, on time.Time) []report.Field {
	var out []report.Field
	add := func(label, v string) {
		if v != "" {
			out = append(out, report.Field{Label: label, Value: v})
		}
	}
	add("Name", p.Name)
	sp := p.Species
	if sp != "" && p.Breed != "" {
		sp += ", " + p.Breed
	} else if p.Breed != "" {
		sp = p.Breed
	}
	add("Species", sp)
	add("Sex", p.Sex)
	if months, ok := Age(p.BirthDate, on); ok {
		add("Age", fmt.Sprintf("%s (born %s)", AgeText(months), p.BirthDate))
	}
	add("Weight", weightText(p.WeightKg))
	add("Owner", p.Owner)
	return out
}
