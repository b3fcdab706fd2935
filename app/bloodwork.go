package app

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"vetlens/app/repo"
	"vetlens/engine/usg"
)

// Units the desktop's bloodwork form offers. The model takes creatinine
// in mg/dL and lymphocytes per µL (spec usg-v1).
const (
	UnitMgDL         = "mg/dL"
	UnitUmolL        = "µmol/L"
	UnitPerUL        = "/µL"
	UnitThousandPerU = "10³/µL"
)

// creatinineUmolPerMg is the conversion the spec's auto-correction uses.
const creatinineUmolPerMg = 88.4

// Feature indexes in model order (usg.Features).
const (
	featBUN = iota
	featCreatinine
	featHGB
	featLymphocytes
	featAge
)

// BloodworkAge is the index of Age (months) among the form's values.
const BloodworkAge = featAge

// BloodworkUnits are the units of the form's five values, in model order;
// creatinine and lymphocytes are selectable.
func BloodworkUnits(creatinine, lymphocytes string) [usg.NumFeatures]string {
	return [usg.NumFeatures]string{UnitMgDL, creatinine, "g/dL", lymphocytes, "months"}
}

// BloodworkNames are the form's value names in model order, without units.
func BloodworkNames() [usg.NumFeatures]string {
	return [usg.NumFeatures]string{"BUN", "Creatinine", "Hemoglobin", "Lymphocytes (absolute)", "Age"}
}

// BloodworkForm is the desktop's bloodwork screening form.
type BloodworkForm struct {
	// PatientID is the patient ("" none: not logged under a patient).
	PatientID PatientID
	// Values are the numbers as entered, in model order.
	Values [usg.NumFeatures]float64
	// CreatinineUnit is UnitMgDL (default) or UnitUmolL.
	CreatinineUnit string
	// LymphocyteUnit is UnitPerUL (default) or UnitThousandPerU.
	LymphocyteUnit string
	// KeepAsEntered turns off the automatic unit correction of a value
	// (the clinician undid it): the value is then taken as entered, in
	// its selected unit, and refused when implausible.
	KeepAsEntered [usg.NumFeatures]bool
}

// Correction is one automatic unit correction of an entered value.
type Correction struct {
	// Feature is the value's index in model order.
	Feature int
	// Entered is the value as entered, Used the value the model got.
	Entered, Used float64
	// Text says it in words, e.g. "Creatinine 265 mg/dL looks like
	// µmol/L: 3.00 mg/dL used".
	Text string
	// Field is the value used as the form's field shows it, in the
	// field's unit ("3.00"), so the form shows what was screened.
	Field string
}

// units resolves the form's units (defaults) and checks them.
func (f BloodworkForm) units() ([usg.NumFeatures]string, error) {
	c, l := f.CreatinineUnit, f.LymphocyteUnit
	if c == "" {
		c = UnitMgDL
	}
	if l == "" {
		l = UnitPerUL
	}
	if c != UnitMgDL && c != UnitUmolL {
		return [usg.NumFeatures]string{}, errf(KindInvalid, "creatinine unit %q: %s or %s", c, UnitMgDL, UnitUmolL)
	}
	if l != UnitPerUL && l != UnitThousandPerU {
		return [usg.NumFeatures]string{}, errf(KindInvalid, "lymphocyte unit %q: %s or %s", l, UnitPerUL, UnitThousandPerU)
	}
	return BloodworkUnits(c, l), nil
}

// PrepareBloodwork converts the form's values to the model's units, runs
// the service's own validation (usg.NewRequest, as the API's parser does:
// the automatic unit corrections and plausible ranges) and reports each correction in words.
// A corrected value the clinician chose to keep as entered is refused
// with the plausible range, so nothing is guessed silently.
func PrepareBloodwork(f BloodworkForm) (*usg.Request, []Correction, error) {
	units, err := f.units()
	if err != nil {
		return nil, nil, err
	}
	names := BloodworkNames()
	model := f.Values
	for i, v := range model {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, errf(KindInvalid, "%s: not a number", names[i])
		}
	}
	if units[featCreatinine] == UnitUmolL {
		model[featCreatinine] = f.Values[featCreatinine] / creatinineUmolPerMg
	}
	if units[featLymphocytes] == UnitThousandPerU {
		model[featLymphocytes] = f.Values[featLymphocytes] * 1000
	}
	req, err := usg.NewRequest(model)
	if err != nil {
		// A *usg.RangeError: its text, as the API's out_of_range says it.
		return nil, nil, errf(KindInvalid, "%s", err)
	}
	var out []Correction
	for i := range model {
		used := req.Values[i]
		if used == model[i] {
			continue
		}
		c := Correction{Feature: i, Entered: f.Values[i], Used: used, Field: num(used)}
		switch i {
		case featCreatinine:
			c.Text = fmt.Sprintf("Creatinine %s mg/dL is implausibly high for mg/dL and looks like µmol/L: %.2f mg/dL used", num(f.Values[i]), used)
			c.Field = fmt.Sprintf("%.2f", used)
			if f.KeepAsEntered[i] {
				return nil, nil, errf(KindInvalid, "creatinine %s mg/dL is above the plausible range (at most 30 mg/dL): check the value, or choose %s if it was measured in %s", num(f.Values[i]), UnitUmolL, UnitUmolL)
			}
		case featLymphocytes:
			c.Text = fmt.Sprintf("Lymphocytes %s /µL is implausibly low and looks like 10³/µL: %s /µL used", num(f.Values[i]), num(used))
			if f.KeepAsEntered[i] {
				return nil, nil, errf(KindInvalid, "lymphocytes %s /µL is below the plausible range (at least 50 /µL): check the value, or choose %s if it was counted in thousands", num(f.Values[i]), UnitThousandPerU)
			}
		default:
			c.Text = fmt.Sprintf("%s %s corrected to %s", names[i], num(f.Values[i]), num(used))
		}
		out = append(out, c)
	}
	req.Warnings = nil
	for _, c := range out {
		req.Warnings = append(req.Warnings, c.Text)
	}
	req.UUID = f.PatientID.String()
	return req, out, nil
}

// num prints a number as entered: the shortest form.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// BloodworkResult is the outcome of ScreenBloodwork.
type BloodworkResult struct {
	Response    *usg.Response
	Corrections []Correction
	// Repeat is set when the patient's latest screening, within the last
	// 24 hours, had the same values: its result is shown again and
	// nothing is logged or metered.
	Repeat bool
}

// repeatWindow is how long an identical screening counts as a repeat.
const repeatWindow = 24 * time.Hour

// ScreenBloodwork runs the desktop's bloodwork screening (feline urine
// concentration, USG): PrepareBloodwork, then PredictUSG as the desktop
// customer, logged under the patient with the values as entered. The
// model is feline: a patient recorded as a dog is refused (KindInvalid).
// Pressing Screen again with the same values for the same patient within
// 24 hours logs nothing and returns the earlier result (Repeat).
func (s *USG) ScreenBloodwork(ctx context.Context, f BloodworkForm) (BloodworkResult, error) {
	var out BloodworkResult
	if s.usg == nil {
		return out, ErrUSGUnavailable
	}
	id := f.PatientID
	req, corr, err := PrepareBloodwork(f)
	if err != nil {
		return out, err
	}
	out.Corrections = corr
	if id != "" {
		p, _, err := s.patients.patientDetails(ctx, id)
		if err != nil {
			return out, err
		}
		if Species(p.Species) == SpeciesDog {
			return out, errf(KindInvalid, "bloodwork screening predicts urine concentration in cats only; %s is recorded as a dog", patientName(p))
		}
		if prev, ok, err := s.lastScreening(ctx, id, req); err != nil {
			return out, err
		} else if ok {
			out.Response, out.Repeat = prev, true
			return out, nil
		}
	}
	if err := s.accounts.ensureDesktop(ctx); err != nil {
		return out, err
	}
	units, _ := f.units()
	names := BloodworkNames()
	entered := make([]EnteredValue, usg.NumFeatures)
	for i := range entered {
		entered[i] = EnteredValue{Name: names[i], Value: f.Values[i], Unit: units[i]}
	}
	resp, err := s.predictLogged(ctx, DesktopCaller(), req, entered)
	if err != nil {
		return out, err
	}
	out.Response = resp
	return out, nil
}

// patientName is "Rex (Rex-1)", or the id alone without a name.
func patientName(p repo.Patient) string {
	if p.Name == "" {
		return "patient " + p.ID.String()
	}
	return fmt.Sprintf("%s (%s)", p.Name, p.ID)
}

// lastScreening returns the result of the patient's latest desktop
// screening when it had the same model inputs and is within repeatWindow.
func (s *USG) lastScreening(ctx context.Context, id PatientID, req *usg.Request) (*usg.Response, bool, error) {
	logs, err := s.repos.USGLog.ListPatient(ctx, id)
	if err != nil {
		return nil, false, fmt.Errorf("usg log: %w", err)
	}
	for i := len(logs) - 1; i >= 0; i-- {
		l := logs[i]
		if l.Customer != DesktopCustomer || l.Hidden != nil {
			continue
		}
		if s.clock.Now().Sub(l.Time) > repeatWindow {
			return nil, false, nil
		}
		in, err := decodeUSGLogInputs(l)
		if err != nil {
			return nil, false, err
		}
		for j, k := range usg.Features() {
			if v, ok := in.Features[k]; !ok || v != req.Values[j] {
				return nil, false, nil
			}
		}
		res, err := decodeUSGLogResult(l)
		if err != nil {
			return nil, false, err
		}
		return &usg.Response{Result: res}, true, nil
	}
	return nil, false, nil
}
