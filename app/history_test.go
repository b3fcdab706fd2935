package app

import (
	"context"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"
	"time"

	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
)

// TestHistoryVersions: a save is stored once; an earlier measurement
// reopens with its image and landmarks; its correction is a new entry
// linked to it, both kept; removal hides with a reason and an audit
// event.
func TestHistoryVersions(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	res, l := landmarkResult()
	img := image.NewGray(image.Rect(0, 0, 400, 300))
	img.SetGray(10, 10, color.Gray{Y: 200})
	m := &Measurement{Result: res, Image: img, ModelVersion: "fake-1"}
	first, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: m})
	if err != nil || first.Repeat || !first.Entry.HasImage || first.Entry.Seq == 0 {
		t.Fatalf("first save %+v %v", first, err)
	}
	clk.Add(time.Minute)
	again, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: m})
	if err != nil || !again.Repeat || again.Entry.Seq != first.Entry.Seq {
		t.Fatalf("second save %+v %v", again, err)
	}
	// Another patient, or other landmarks, is a new measurement.
	if sv, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella", Measurement: m}); err != nil || sv.Repeat {
		t.Fatalf("other patient %+v %v", sv, err)
	}

	re, err := s.Patients.ReopenMeasurement(ctx, "Rex", DesktopCustomer, first.Entry.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if re.Base == nil || re.Base.Seq != first.Entry.Seq || re.Base.Kind != MeasurementModel || re.Result.Landmarks != l ||
		re.Image.Bounds() != img.Bounds() || color.GrayModel.Convert(re.Image.At(10, 10)).(color.Gray).Y != 200 || *re.Result.VHS != 10 {
		t.Fatalf("reopened %+v", re)
	}
	// Saving the reopened one unchanged stores nothing.
	if sv, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: re}); err != nil || !sv.Repeat {
		t.Fatalf("unchanged reopened save %+v %v", sv, err)
	}
	moved := l
	moved[cardiac.HeartBottom].Y += 20
	corr, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: re, Landmarks: &moved})
	if err != nil || corr.Repeat || corr.Entry.Supersedes != first.Entry.Seq || *corr.Entry.VHS != 11 || *corr.Entry.ModelVHS != 10 {
		t.Fatalf("correction %+v %v", corr, err)
	}
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Bella", Measurement: re, Landmarks: &moved}); KindOf(err) != KindInvalid {
		t.Fatalf("correction saved under another patient: %v", err)
	}
	rec, err := s.Patients.Patient(ctx, "Rex")
	if err != nil || len(rec.Cardiac) != 2 {
		t.Fatalf("record %+v %v", rec, err)
	}
	if rec.Cardiac[0].SupersededBy != corr.Entry.Seq || rec.Cardiac[0].Current() || !rec.Cardiac[1].Current() {
		t.Fatalf("versions %+v", rec.Cardiac)
	}
	// The correction reopens as edited, with the model's values.
	re2, err := s.Patients.ReopenMeasurement(ctx, "Rex", DesktopCustomer, corr.Entry.Seq)
	if err != nil || re2.Base.Kind != MeasurementEdited || *re2.Result.VHS != 10 || re2.Result.Landmarks != moved {
		t.Fatalf("reopened correction %+v %v", re2, err)
	}

	// Removal needs a reason, keeps the entry and records who and why.
	if _, err := s.Patients.HideEntry(ctx, "Rex", DesktopCustomer, corr.Entry.Seq, " "); KindOf(err) != KindInvalid {
		t.Fatalf("no reason: %v", err)
	}
	if _, err := s.Patients.HideEntry(ctx, "Rex", DesktopCustomer, 999, "wrong patient"); KindOf(err) != KindNotFound {
		t.Fatalf("unknown entry: %v", err)
	}
	h, err := s.Patients.HideEntry(ctx, "Rex", DesktopCustomer, corr.Entry.Seq, "wrong  patient")
	if err != nil || h.Hidden == nil || h.Hidden.Reason != "wrong patient" {
		t.Fatalf("hide %+v %v", h, err)
	}
	if _, err := s.Patients.HideEntry(ctx, "Rex", DesktopCustomer, corr.Entry.Seq, "again"); KindOf(err) != KindConflict {
		t.Fatalf("hide twice: %v", err)
	}
	rec, _ = s.Patients.Patient(ctx, "Rex")
	if len(rec.Cardiac) != 2 || rec.Cardiac[1].Hidden == nil || rec.Cardiac[1].Current() {
		t.Fatalf("after hiding %+v", rec.Cardiac)
	}
	var actions []string
	for _, a := range rec.Audit {
		actions = append(actions, a.Action+":"+a.Reason)
	}
	if strings.Join(actions, ",") != "corrected:,hidden:wrong patient" {
		t.Fatalf("audit %v", actions)
	}
	// The API's history of the desktop customer leaves out the hidden
	// correction; the version it corrected is in effect again.
	if rec.Cardiac[0].SupersededBy != 0 || !rec.Cardiac[0].Current() {
		t.Fatalf("after removing its correction: %+v", rec.Cardiac[0])
	}
	if h, err := s.Cardiac.history(ctx, DesktopCaller(), "Rex"); err != nil || wireHistoric(h.VHS) != `[["2026-03-01",10]]` {
		t.Fatalf("historic_vhs %+v %v", h, err)
	}
	// API entries keep no image: they cannot be reopened.
	lan := newCaller(t, s, "lan-pc", TierPaygo)
	if _, err := s.Cardiac.PredictSingle(ctx, lan, &CardiacRequest{Images: [][]byte{codeImage(t, 2)}, UUID: "Rex"}); err != nil {
		t.Fatal(err)
	}
	rec, _ = s.Patients.Patient(ctx, "Rex")
	var api CardiacEntry
	for _, e := range rec.Cardiac {
		if e.Customer == "lan-pc" {
			api = e
		}
	}
	if api.Seq == 0 {
		t.Fatalf("API entry not in the record: %+v", rec.Cardiac)
	}
	if _, err := s.Patients.ReopenMeasurement(ctx, "Rex", api.Customer, api.Seq); KindOf(err) != KindNotFound || !strings.Contains(err.Error(), "no image kept") {
		t.Fatalf("reopen API entry: %v", err)
	}
}

func TestScreenBloodwork(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	rewire(t, s, func(d *Deps, _ *Config) { d.USG = fakeUSG{} })
	vals := [usg.NumFeatures]float64{30, 160, 12, 2.0, 120}
	form := BloodworkForm{PatientID: "Tom", Values: vals, CreatinineUnit: UnitUmolL, LymphocyteUnit: UnitThousandPerU}
	out, err := s.USG.ScreenBloodwork(ctx, form)
	if err != nil || out.Repeat || len(out.Corrections) != 0 {
		t.Fatalf("first %+v %v", out, err)
	}
	// Screen pressed again: nothing logged.
	if out, err := s.USG.ScreenBloodwork(ctx, form); err != nil || !out.Repeat || out.Response.Result.ProbabilityImpaired != 0.7 {
		t.Fatalf("repeat %+v %v", out, err)
	}
	rec, _ := s.Patients.Patient(ctx, "Tom")
	if len(rec.USG) != 1 {
		t.Fatalf("%d log entries", len(rec.USG))
	}
	v := rec.USG[0]
	if v.Entered[1] != (EnteredValue{Name: "Creatinine", Value: 160, Unit: UnitUmolL}) || v.Entered[3].Unit != UnitThousandPerU ||
		v.Features[usg.FeatureLymphocytes] != 2000 || math.Abs(v.Features[usg.FeatureCreatinine]-1.80995) > 1e-5 {
		t.Fatalf("logged %+v", v)
	}
	// A day later the same values are a new screening.
	clk.Add(25 * time.Hour)
	if out, err := s.USG.ScreenBloodwork(ctx, form); err != nil || out.Repeat {
		t.Fatalf("next day %+v %v", out, err)
	}
	// Removing a screening hides it with the reason, once; the same
	// values then screen anew.
	if _, err := s.Patients.HideScreening(ctx, "Tom", v.Seq, "x"); KindOf(err) != KindInvalid {
		t.Fatalf("short reason: %v", err)
	}
	if _, err := s.Patients.HideScreening(ctx, "Bella", v.Seq, "wrong patient"); KindOf(err) != KindNotFound {
		t.Fatalf("other patient's screening: %v", err)
	}
	rec, _ = s.Patients.Patient(ctx, "Tom")
	last := rec.USG[len(rec.USG)-1]
	if h, err := s.Patients.HideScreening(ctx, "Tom", last.Seq, "entered twice"); err != nil || h.Hidden == nil || h.Hidden.Reason != "entered twice" {
		t.Fatalf("hide %+v %v", h, err)
	}
	if _, err := s.Patients.HideScreening(ctx, "Tom", last.Seq, "again"); KindOf(err) != KindConflict {
		t.Fatalf("hide twice: %v", err)
	}
	if out, err := s.USG.ScreenBloodwork(ctx, form); err != nil || out.Repeat {
		t.Fatalf("after removal %+v %v", out, err)
	}
	rec, _ = s.Patients.Patient(ctx, "Tom")
	if len(rec.USG) != 3 || rec.USG[1].Hidden == nil || rec.USG[2].Hidden != nil || rec.Audit[len(rec.Audit)-1].Reason != "entered twice" {
		t.Fatalf("after removal %+v audit %+v", rec.USG, rec.Audit)
	}
	// A dog is refused, nothing logged.
	if _, err := s.Patients.SavePatient(ctx, repoPatient("Rex", "dog")); err != nil {
		t.Fatal(err)
	}
	form.PatientID = "Rex"
	if _, err := s.USG.ScreenBloodwork(ctx, form); KindOf(err) != KindInvalid || !strings.Contains(err.Error(), "cats only") {
		t.Fatalf("dog: %v", err)
	}
	if rec, _ := s.Patients.Patient(ctx, "Rex"); len(rec.USG) != 0 {
		t.Fatalf("dog logged %+v", rec.USG)
	}
}

func TestPrepareBloodwork(t *testing.T) {
	for _, tc := range []struct {
		name    string
		form    BloodworkForm
		used    [usg.NumFeatures]float64
		corr    string
		wantErr string
	}{
		{name: "spec units", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 1.8, 12, 2000, 120}}, used: [usg.NumFeatures]float64{30, 1.8, 12, 2000, 120}},
		{name: "selected units", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 221, 12, 1.5, 120}, CreatinineUnit: UnitUmolL, LymphocyteUnit: UnitThousandPerU},
			used: [usg.NumFeatures]float64{30, 2.5, 12, 1500, 120}},
		{name: "creatinine auto-corrected", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 221, 12, 2000, 120}}, used: [usg.NumFeatures]float64{30, 2.5, 12, 2000, 120},
			corr: "Creatinine 221 mg/dL is implausibly high for mg/dL and looks like µmol/L: 2.50 mg/dL used"},
		{name: "lymphocytes auto-corrected", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 2, 12, 1.5, 120}}, used: [usg.NumFeatures]float64{30, 2, 12, 1500, 120},
			corr: "Lymphocytes 1.5 /µL is implausibly low and looks like 10³/µL: 1500 /µL used"},
		{name: "correction undone", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 221, 12, 2000, 120}, KeepAsEntered: [usg.NumFeatures]bool{1: true}},
			wantErr: "creatinine 221 mg/dL is above the plausible range"},
		{name: "lymphocyte correction undone", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 2, 12, 1.5, 120}, KeepAsEntered: [usg.NumFeatures]bool{3: true}},
			wantErr: "lymphocytes 1.5 /µL is below the plausible range"},
		{name: "out of range", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 2, 12, 2000, 9000}}, wantErr: "outside the plausible range"},
		{name: "bad unit", form: BloodworkForm{Values: [usg.NumFeatures]float64{30, 2, 12, 2000, 100}, CreatinineUnit: "mmol/L"}, wantErr: `creatinine unit "mmol/L"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, cs, err := PrepareBloodwork(tc.form)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || KindOf(err) != KindInvalid {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.used {
				if d := req.Values[i] - tc.used[i]; d > 1e-9 || d < -1e-9 {
					t.Fatalf("used %v, want %v", req.Values, tc.used)
				}
			}
			var texts []string
			for _, c := range cs {
				texts = append(texts, c.Text)
			}
			if strings.Join(texts, ";") != tc.corr || strings.Join(req.Warnings, ";") != tc.corr {
				t.Fatalf("corrections %q warnings %q, want %q", texts, req.Warnings, tc.corr)
			}
		})
	}
}

// TestDesktopUseCountedNotCharged: the desktop's own measurements are
// counted for the usage statistics at no charge; an API customer's call
// is billed as before.
func TestDesktopUseCountedNotCharged(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	m, err := s.Cardiac.MeasureDesktop(ctx, "Rex", codeImage(t, 1))
	if err != nil || !m.Billing.Billable || m.Billing.Rate == nil || *m.Billing.Rate != 0 {
		t.Fatalf("desktop measurement %+v %v", m, err)
	}
	lan := newCaller(t, s, "lan-pc", TierPaygo)
	if _, err := s.Cardiac.PredictSingle(ctx, lan, &CardiacRequest{Images: [][]byte{codeImage(t, 1)}, UUID: "Rex"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		customer string
		usage    int
		charges  Cents
	}{{DesktopCustomer, 1, 0}, {"lan-pc", 1, 300}} {
		st, err := s.Accounts.MonthlyStatement(ctx, tc.customer)
		if err != nil || st.Usage != tc.usage || st.Charges != tc.charges {
			t.Errorf("%s: %+v %v, want %d calls, %s", tc.customer, st, err, tc.usage, tc.charges)
		}
	}
}
