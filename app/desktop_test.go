package app

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"strings"
	"testing"
	"time"

	"vetlens/app/repo"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
	"vetlens/internal/dicomtest"
	"vetlens/platform/store"
)

// landmarkResult is a code-1 result on a 400x300 image whose landmarks give
// VHS 10 and VLAS 2 exactly (v = 20 px).
func landmarkResult() (*cardiac.Result, cardiac.Landmarks) {
	var l cardiac.Landmarks
	l[cardiac.HeartTop] = cardiac.Point{X: 200, Y: 60}
	l[cardiac.HeartBottom] = cardiac.Point{X: 200, Y: 180} // long 120
	l[cardiac.HeartRight] = cardiac.Point{X: 160, Y: 120}
	l[cardiac.HeartLeft] = cardiac.Point{X: 240, Y: 120} // short 80
	l[cardiac.VLASPoint] = cardiac.Point{X: 240, Y: 60}  // 40
	l[cardiac.VertebraA] = cardiac.Point{X: 100, Y: 30}
	l[cardiac.VertebraB] = cardiac.Point{X: 220, Y: 30} // 120 = 6 v
	vhs, vlas := 10.0, 2.0
	r := &cardiac.Result{Width: 400, Height: 300, Code: cardiac.CodeHighConfidence, Landmarks: l,
		ModelLandmarks: []cardiac.Landmarks{l}, Geometry: cardiac.Measure(l), VHS: &vhs, VLAS: &vlas,
		Spread: 0.003, Confidence: cardiac.ConfidenceOptimal, LandmarksDetected: true, AxesPerpendicular: true}
	return r, l
}

func TestEditedValues(t *testing.T) {
	_, l := landmarkResult()
	v := EditedValues(l)
	if v.VHS == nil || *v.VHS != 10 || v.VLAS == nil || *v.VLAS != 2 || !v.AxesPerpendicular {
		t.Fatalf("EditedValues = %+v", v)
	}
	l[cardiac.VertebraB] = l[cardiac.VertebraA] // no vertebral span
	if v := EditedValues(l); v.VHS != nil || v.VLAS != nil {
		t.Fatalf("zero span gave %+v", v)
	}
}

func TestSaveMeasurement(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	res, l := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	moved := l
	moved[cardiac.HeartBottom].Y += 20 // long 140: VHS (140+80)/20 = 11
	outside := l
	outside[cardiac.VLASPoint].X = 401
	nan := l
	nan[cardiac.HeartLeft].Y = math.NaN()
	collapsed := l
	collapsed[cardiac.VertebraB] = collapsed[cardiac.VertebraA]
	rejected := &Measurement{Result: &cardiac.Result{Width: 400, Height: 300, Code: cardiac.CodeRejected, Rejected: true}}
	noVHS := &Measurement{Result: &cardiac.Result{Width: 400, Height: 300, Code: cardiac.CodeNoLandmarks, Landmarks: l, ModelLandmarks: []cardiac.Landmarks{l}}}
	// A code-5 result of an engine that gave no landmarks at all, on an
	// image larger than the result says: the image's size counts.
	noVLASRes := *res
	noVLASRes.Code, noVLASRes.Guard, noVLASRes.VLAS = cardiac.CodeNoVLAS, cardiac.GuardVLASMisplaced, nil
	noVLAS := &Measurement{Result: &noVLASRes}
	noLm := &Measurement{Result: &cardiac.Result{Width: 40, Height: 30, Code: cardiac.CodeNoLandmarks}, Image: image.NewGray(image.Rect(0, 0, 400, 300))}

	for _, tc := range []struct {
		name string
		req  SaveRequest
		// typed, when set, is the patient field as the clinician typed
		// it: parsed as the boundary parses it (trimmed, ParsePatientID)
		// into req.PatientID, a refusal there being the save's error.
		typed     string
		wantErr   string
		vhs, vlas float64
		kind      MeasurementKind
		modelVHS  *float64 // beside clinician values
	}{
		{name: "model values", req: SaveRequest{Measurement: m}, typed: " Rex ", vhs: 10, vlas: 2, kind: MeasurementModel},
		{name: "model values, kind given", req: SaveRequest{PatientID: "Rex", Measurement: m, Kind: MeasurementModel}, vhs: 10, vlas: 2, kind: MeasurementModel},
		{name: "edited, kind implied", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &moved}, vhs: 11, vlas: 2, kind: MeasurementEdited, modelVHS: res.VHS},
		{name: "edited", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &moved, Kind: MeasurementEdited}, vhs: 11, vlas: 2, kind: MeasurementEdited, modelVHS: res.VHS},
		{name: "edited code 5 result, every point confirmed", req: SaveRequest{PatientID: "Rex", Measurement: noVHS, Landmarks: &l, Confirmed: Settled{true, true, true, true, true, true, true}}, vhs: 10, vlas: 2, kind: MeasurementEdited},
		{name: "edited code 5 result, doubted points left as they were", req: SaveRequest{PatientID: "Rex", Measurement: noVHS, Landmarks: &moved}, wantErr: "No verdict yet"},
		{name: "edited code 4 result, VLAS point doubted: VHS only", req: SaveRequest{PatientID: "Rex", Measurement: noVLAS, Landmarks: &moved}, vhs: 11, vlas: -1, kind: MeasurementEdited, modelVHS: res.VHS},
		{name: "manual on a measured image", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &moved, Kind: MeasurementManual}, vhs: 11, vlas: 2, kind: MeasurementManual, modelVHS: res.VHS},
		{name: "manual on code 5 without landmarks", req: SaveRequest{PatientID: "Rex", Measurement: noLm, Landmarks: &moved, Kind: MeasurementManual}, vhs: 11, vlas: 2, kind: MeasurementManual},
		{name: "manual on a rejected image, confirmed", req: SaveRequest{PatientID: "Rex", Measurement: rejected, Landmarks: &l, Kind: MeasurementManual, ConfirmedRadiograph: true}, vhs: 10, vlas: 2, kind: MeasurementManual},
		{name: "manual on a rejected image, not confirmed", req: SaveRequest{PatientID: "Rex", Measurement: rejected, Landmarks: &l, Kind: MeasurementManual}, wantErr: "confirm it is a radiograph"},
		{name: "manual without landmarks", req: SaveRequest{PatientID: "Rex", Measurement: m, Kind: MeasurementManual}, wantErr: "needs the clinician's landmarks"},
		{name: "manual outside", req: SaveRequest{PatientID: "Rex", Measurement: rejected, Landmarks: &outside, Kind: MeasurementManual, ConfirmedRadiograph: true}, wantErr: "VLAS lies outside"},
		{name: "manual collapsed span", req: SaveRequest{PatientID: "Rex", Measurement: noLm, Landmarks: &collapsed, Kind: MeasurementManual}, wantErr: "manual landmarks give no VHS"},
		{name: "model kind with landmarks", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &moved, Kind: MeasurementModel}, wantErr: "send kind edited or manual"},
		{name: "unknown kind", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &moved, Kind: "guessed"}, wantErr: `unknown measurement kind "guessed"`},
		{name: "no patient", req: SaveRequest{Measurement: m}, typed: "  ", wantErr: "patient ID is required"},
		{name: "control char", req: SaveRequest{Measurement: m}, typed: "Re\tx", wantErr: "control characters"},
		{name: "too long", req: SaveRequest{Measurement: m}, typed: strings.Repeat("x", 129), wantErr: "at most 128"},
		{name: "nothing measured", req: SaveRequest{PatientID: "Rex"}, wantErr: "nothing measured"},
		{name: "outside", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &outside}, wantErr: "VLAS lies outside"},
		{name: "nan", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &nan}, wantErr: "outside the image"},
		{name: "collapsed span", req: SaveRequest{PatientID: "Rex", Measurement: m, Landmarks: &collapsed}, wantErr: "give no VHS"},
		{name: "rejected", req: SaveRequest{PatientID: "Rex", Measurement: rejected}, wantErr: "no VHS was measured"},
		{name: "rejected edited", req: SaveRequest{PatientID: "Rex", Measurement: rejected, Landmarks: &l, Kind: MeasurementEdited, ConfirmedRadiograph: true}, wantErr: "place them by hand instead"},
		{name: "code 5 unedited", req: SaveRequest{PatientID: "Rex", Measurement: noVHS}, wantErr: "place them by hand first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			var (
				saved Saved
				err   error
			)
			if tc.typed != "" {
				tc.req.PatientID, err = ParsePatientID(strings.TrimSpace(tc.typed))
			}
			if err == nil {
				saved, err = s.Patients.SaveMeasurement(ctx, tc.req)
			}
			e := saved.Entry
			rec, rerr := s.Patients.Patient(ctx, "Rex")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || KindOf(err) != KindInvalid {
					t.Fatalf("err %v, want invalid %q", err, tc.wantErr)
				}
				if len(rec.Cardiac) != 0 {
					t.Fatalf("a refused save stored %+v", rec.Cardiac)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Cardiac) != 1 {
				t.Fatalf("history %+v", rec.Cardiac)
			}
			got := rec.Cardiac[0]
			if got.Customer != DesktopCustomer || got.Source != "desktop" || !got.Time.Equal(t0) || got.Kind != tc.kind || got.HistoryEntry.Kind != string(tc.kind) ||
				got.Edited != tc.kind.Clinician() || *got.VHS != tc.vhs || (tc.vlas < 0) != (got.VLAS == nil) || got.VLAS != nil && *got.VLAS != tc.vlas || len(got.Landmarks) != cardiac.NumLandmarks || got.ModelVersion != e.ModelVersion {
				t.Fatalf("stored %+v", got)
			}
			if tc.kind.Clinician() {
				if (got.ModelVHS == nil) != (tc.modelVHS == nil) || tc.modelVHS != nil && *got.ModelVHS != *tc.modelVHS {
					t.Fatalf("model VHS beside the clinician's: %v, want %v", got.ModelVHS, tc.modelVHS)
				}
				if got.Landmarks[cardiac.HeartBottom] != [2]float64{tc.req.Landmarks[cardiac.HeartBottom].X, tc.req.Landmarks[cardiac.HeartBottom].Y} {
					t.Fatalf("stored landmarks %v are not the clinician's", got.Landmarks)
				}
			}
			// The values in effect are what the API's history reports.
			h, err := s.Cardiac.history(ctx, DesktopCaller(), "Rex")
			hv := wireHistoric(h.VHS)
			if err != nil || !strings.Contains(hv, fmt.Sprintf(`["2026-03-01",%g]`, tc.vhs)) {
				t.Fatalf("historic_vhs %s %v", hv, err)
			}
		})
	}
}

// TestEntryKind: records saved before kinds were stored keep reading as
// they were meant (Edited set: edited, else model), through the store.
func TestEntryKind(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	v := func(x float64) *float64 { return &x }
	for i, tc := range []struct {
		e    store.HistoryEntry
		want MeasurementKind
	}{
		{store.HistoryEntry{VHS: v(10)}, MeasurementModel},                                                            // API record
		{store.HistoryEntry{VHS: v(10), Source: "desktop"}, MeasurementModel},                                         // old desktop record
		{store.HistoryEntry{VHS: v(11), Source: "desktop", Edited: true, ModelVHS: v(10)}, MeasurementEdited},         // old edited record
		{store.HistoryEntry{VHS: v(11), Source: "desktop", Kind: "manual", Edited: true}, MeasurementManual},          // new
		{store.HistoryEntry{VHS: v(11), Source: "desktop", Kind: "edited", Edited: true}, MeasurementEdited},          // new
		{store.HistoryEntry{VHS: v(10), Source: "desktop", Kind: "model"}, MeasurementModel},                          // new
		{store.HistoryEntry{VHS: v(11), Source: "desktop", Kind: "from-the-future", Edited: true}, MeasurementEdited}, // unknown kind
	} {
		if got := EntryKind(tc.e); got != tc.want {
			t.Errorf("%d: EntryKind = %q, want %q", i, got, tc.want)
		}
		tc.e.Time = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
		if _, err := s.repos.History.Add(ctx, DesktopCustomer, "Old-1", tc.e, nil); err != nil {
			t.Fatal(err)
		}
		rec, err := s.Patients.Patient(ctx, "Old-1")
		if err != nil || len(rec.Cardiac) != i+1 || rec.Cardiac[i].Kind != tc.want {
			t.Fatalf("%d: record %+v %v, want kind %q", i, rec, err, tc.want)
		}
	}
	for k, want := range map[MeasurementKind]string{
		MeasurementModel: "Model measurement", MeasurementEdited: "Model landmarks corrected by clinician",
		MeasurementManual: "Placed by hand by clinician", "x": "Unknown kind of measurement (x)",
	} {
		if got := k.Label(); got != want {
			t.Errorf("%q.Label() = %q, want %q", k, got, want)
		}
	}
}

// TestManualSaveIsNotBilled: a hand placement is not a model prediction:
// saving one meters nothing, on a rejected image or a measured one, and
// the model measurement keeps the billing it had.
func TestManualSaveIsNotBilled(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	_, l := landmarkResult()
	for i, tc := range []struct {
		code      int
		patient   PatientID
		reason    string
		wantUsage int
	}{
		{6, "Rex", ReasonNoValid, 0},
		{5, "Bella", ReasonNoValid, 0},
		{1, "Tom", ReasonValid, 1},
	} {
		clk.Add(time.Minute)
		m, err := s.Cardiac.MeasureDesktop(ctx, tc.patient, codeImage(t, tc.code))
		if err != nil {
			t.Fatal(err)
		}
		if m.Billing.Reason != tc.reason {
			t.Fatalf("%d: billing %+v", i, m.Billing)
		}
		hand := l
		for k := range hand { // the fake's images are 64x64
			hand[k].X, hand[k].Y = hand[k].X/8, hand[k].Y/8
		}
		saved, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: tc.patient, Measurement: m, Landmarks: &hand, Kind: MeasurementManual, ConfirmedRadiograph: true})
		e := saved.Entry
		if err != nil || *e.VHS != 10 || e.Kind != "manual" {
			t.Fatalf("%d: saved %+v %v", i, e, err)
		}
		n, err := s.Accounts.MonthlyUsage(ctx, DesktopCustomer)
		if err != nil || n != tc.wantUsage {
			t.Fatalf("%d: desktop usage %d %v, want %d", i, n, err, tc.wantUsage)
		}
	}
}

func TestMeasureDesktopMetersWithoutRecording(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	for i, tc := range []struct {
		code    int
		patient PatientID
		reason  string
		usage   int
	}{
		{1, "Rex", ReasonValid, 1},
		{1, "Rex", ReasonRecheck, 1}, // same patient within 24 h
		{2, "", ReasonValid, 2},
		{5, "Bella", ReasonNoValid, 2},
		{6, "", ReasonNoValid, 2},
	} {
		clk.Add(time.Minute)
		m, err := s.Cardiac.MeasureDesktop(ctx, tc.patient, codeImage(t, tc.code))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if int(m.Result.Code) != tc.code || m.Billing.Reason != tc.reason || *m.Billing.MonthlyUsage != tc.usage || m.Image == nil || m.ModelVersion != "fake-1" {
			t.Fatalf("%d: %+v billing %+v", i, m.Result, m.Billing)
		}
	}
	if rec, _ := s.Patients.Patient(ctx, "Rex"); len(rec.Cardiac) != 0 {
		t.Fatalf("measuring must not record history before the clinician saves: %+v", rec.Cardiac)
	}
	if _, err := s.Cardiac.MeasureDesktop(ctx, "", []byte("not an image")); KindOf(err) != KindInvalid {
		t.Fatalf("bad bytes: %v", err)
	}
	// A bad patient id is refused where it is read (ParsePatientID), so
	// it never reaches MeasureDesktop.
	if _, err := ParsePatientID("a\x00b"); KindOf(err) != KindInvalid {
		t.Fatalf("bad patient id: %v", err)
	}
	if _, _, err := s.Accounts.CreateKey(ctx, DesktopCustomer, TierPaygo); KindOf(err) != KindInvalid {
		t.Fatalf("a key for the reserved desktop customer: %v", err)
	}
}

// fakeUSG answers a fixed probability.
type fakeUSG struct{}

func (fakeUSG) Predict(ctx context.Context, req *usg.Request) (*usg.Response, error) {
	return &usg.Response{Result: usg.Result{ProbabilityImpaired: 0.7, RiskTier: "high", RiskLabel: "High", ConformalSet: []string{"impaired"}, ModelVersion: "u-1"}}, nil
}
func (fakeUSG) Version() usg.VersionInfo { return usg.VersionInfo{} }
func (fakeUSG) Health() usg.Health       { return usg.Health{} }

func TestPatientRecordAndSearch(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	rewire(t, s, func(d *Deps, _ *Config) { d.USG = fakeUSG{} })
	res, _ := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex-7", Measurement: m}); err != nil {
		t.Fatal(err)
	}
	clk.Add(48 * time.Hour)
	if _, err := s.USG.ScreenBloodwork(ctx, BloodworkForm{PatientID: "Rex-7", Values: [usg.NumFeatures]float64{30, 2, 12, 1500, 100}}); err != nil {
		t.Fatal(err)
	}
	// An API client's measurement of the same patient id shows too.
	lan := newCaller(t, s, "lan-pc", TierPaygo)
	if _, err := s.Cardiac.PredictSingle(ctx, lan, &CardiacRequest{Images: [][]byte{codeImage(t, 2)}, UUID: "Rex-7"}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Patients.Patient(ctx, "Rex-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Cardiac) != 2 || rec.Cardiac[0].Customer != DesktopCustomer || rec.Cardiac[1].Customer != "lan-pc" {
		t.Fatalf("cardiac %+v", rec.Cardiac)
	}
	if len(rec.USG) != 1 || rec.USG[0].ProbabilityImpaired != 0.7 || rec.USG[0].Customer != DesktopCustomer || len(rec.USG[0].Features) != usg.NumFeatures {
		b, _ := json.Marshal(rec.USG)
		t.Fatalf("usg %s", b)
	}
	ids, err := s.Patients.IDs(ctx, "rex", 10)
	if err != nil || len(ids) != 1 || ids[0] != "Rex-7" {
		t.Fatalf("Patients = %v %v", ids, err)
	}
	if _, err := s.Patients.Patient(ctx, ""); KindOf(err) != KindInvalid {
		t.Fatalf("empty id: %v", err)
	}
}

func TestDesktopReport(t *testing.T) {
	res, l := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	moved := l
	moved[cardiac.HeartBottom].Y += 20
	date := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	w := 31.5
	boxer := ReportDetails{Patient: repo.Patient{ID: "Rex", Name: "Rex", Species: "dog", Breed: "Boxer", Sex: SexMaleNeutered, BirthDate: "2021-01-15", WeightKg: &w, Owner: "Jane Smith"}}
	mustReport := func(req SaveRequest, d ReportDetails) report.Report {
		t.Helper()
		rep, err := DesktopReport(req, date, d)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	plain := mustReport(SaveRequest{Measurement: m, PatientID: "Rex"}, ReportDetails{})
	if plain.PatientID != "Rex" || *plain.VHS != 10 || plain.Clinician || plain.Kind != "Model measurement" || plain.Confidence != "optimal" ||
		!strings.Contains(plain.Reading, "within the dog range") || plain.Image.Bounds().Dx() != 400 ||
		plain.Findings[0] != "Heart size: normal (VHS 10.0; dog range 8.7-10.7)" || !strings.Contains(plain.VHSRange, "Buchanan") ||
		!strings.Contains(plain.VHSRange, "species not recorded") || len(plain.Legend) != cardiac.NumLandmarks || plain.Legend[0].Name != "Carina" {
		t.Fatalf("plain report %+v", plain)
	}
	// The breed range is used and named; the animal's details are listed.
	br := mustReport(SaveRequest{Measurement: m, PatientID: "Rex"}, boxer)
	if br.Findings[0] != "Heart size: normal (VHS 10.0; breed range 10.0-13.2)" || !strings.Contains(br.VHSRange, "Boxer; Lamb et al. 2001") {
		t.Fatalf("breed report %+v", br)
	}
	want := "[{Name Rex} {Species dog, Boxer} {Sex male neutered} {Age 5 years 1 month (born 2021-01-15)} {Weight 31.5 kg} {Owner Jane Smith}]"
	if fmt.Sprint(br.Animal) != want {
		t.Fatalf("animal %v, want %v", br.Animal, want)
	}
	// A correction: the clinician's values, the model's beside, no confidence.
	ed := mustReport(SaveRequest{Measurement: m, Landmarks: &moved, Kind: MeasurementEdited, PatientID: "Rex"}, ReportDetails{})
	if !ed.Clinician || ed.Kind != "Model landmarks corrected by clinician" || ed.Confidence != "" || *ed.VHS != 11 || *ed.ModelVHS != 10 || !strings.Contains(ed.Reading, "larger than the dog range") {
		t.Fatalf("edited report %+v", ed)
	}
	// The drawn image differs where the edited apex was drawn.
	if plain.Image.(*image.RGBA).RGBAAt(200, 200) == ed.Image.(*image.RGBA).RGBAAt(200, 200) {
		t.Fatal("edited landmarks not drawn on the report image")
	}

	// A rejected image has no report, unless confirmed and placed by hand:
	// then the clinician's points and values, and no model confidence.
	rej := &Measurement{Result: &cardiac.Result{Width: 400, Height: 300, Code: cardiac.CodeRejected, Rejected: true, Confidence: cardiac.ConfidenceReview},
		Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	for _, req := range []SaveRequest{
		{Measurement: rej, PatientID: "Rex"},
		{Measurement: rej, Landmarks: &l, Kind: MeasurementManual, PatientID: "Rex"},
	} {
		if _, err := DesktopReport(req, date, ReportDetails{}); KindOf(err) != KindInvalid || !strings.Contains(err.Error(), "rejected") {
			t.Fatalf("report of a rejected image: %v", err)
		}
	}
	hand := mustReport(SaveRequest{Measurement: rej, Landmarks: &l, Kind: MeasurementManual, PatientID: "Rex", ConfirmedRadiograph: true}, ReportDetails{})
	if !hand.Clinician || hand.Kind != "Placed by hand by clinician" || hand.VHS == nil || *hand.VHS != 10 || *hand.VLAS != 2 ||
		hand.ModelVHS != nil || hand.Confidence != "" || !strings.Contains(hand.Result, "rejected") {
		t.Fatalf("hand report %+v", hand)
	}
	// Manual on a measured image keeps the model's values beside.
	if mh := mustReport(SaveRequest{Measurement: m, Landmarks: &moved, Kind: MeasurementManual}, ReportDetails{}); *mh.ModelVHS != 10 || mh.Confidence != "" || *mh.VHS != 11 {
		t.Fatalf("manual report on a measured image %+v", mh)
	}
}

func TestReading(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	dog, cat, boxer := ReferenceFor(SpeciesDog, ""), ReferenceFor(SpeciesCat, ""), ReferenceFor(SpeciesDog, "boxer")
	for _, c := range []struct {
		vhs, vlas *float64
		ref       Reference
		want      string
	}{
		{nil, nil, dog, "No heart size"},
		{f(9.5), f(2.0), dog, "within the dog range. The left atrium size is normal."},
		{f(11.2), f(2.7), dog, "larger than the dog range (VHS above 10.7), consistent with cardiomegaly. The left atrium appears enlarged (VLAS 2.5 or more)."},
		{f(8.0), nil, dog, "smaller than the dog range (VHS below 8.7). The left atrium could not be measured."},
		{f(11.2), f(2.0), boxer, "within the breed range"},
		{f(8.4), f(2.0), cat, "larger than the cat range (VHS above 8.1)"},
		{f(7.5), f(2.0), cat, "No published VLAS range applies to this species."},
	} {
		if got := Reading(c.vhs, c.vlas, c.ref); !strings.Contains(got, c.want) {
			t.Errorf("Reading = %q, want %q", got, c.want)
		}
	}
}

// TestMeasureDesktopDICOM: a DICOM file is measured on its decoded first
// frame and brings its tags and pixel spacing; its Patient ID becomes the
// measurement's patient only when none was given; an unsupported
// transfer syntax is KindInvalid naming it.
func TestMeasureDesktopDICOM(t *testing.T) {
	ctx := context.Background()
	set := dicomtest.Build(t)
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	read := func(name string) []byte { return set.Get(t, name).Bytes(t) }
	for _, tc := range []struct {
		fixture              string
		patient, wantPatient PatientID
	}{
		{"mono1-16bit", "", dicomtest.PatientID},
		{"jpeg-baseline", "Bella", "Bella"},
	} {
		m, err := s.Cardiac.MeasureDesktop(ctx, tc.patient, read(tc.fixture))
		if err != nil {
			t.Fatalf("%s: %v", tc.fixture, err)
		}
		if m.DICOM == nil || m.PatientID != tc.wantPatient || m.Image.Bounds() != set.Source.Bounds() {
			t.Fatalf("%s: DICOM %+v, patient %q, image %v", tc.fixture, m.DICOM, m.PatientID, m.Image.Bounds())
		}
		tg := m.DICOM.Tags
		if tg.PatientID != dicomtest.PatientID || tg.Name != "Rex Smith" || tg.AnimalName != "Rex" || tg.Species() != "dog" || tg.Breed != dicomtest.Breed ||
			tg.Sex != "M" || tg.Neutered != "ALTERED" || tg.BirthDate != time.Date(2019, 4, 1, 0, 0, 0, 0, time.UTC) ||
			tg.WeightKg != 9.5 || tg.Owner != "Anna Smith" || m.DICOM.PixelSpacingMM != [2]float64{0.1, 0.12} {
			t.Errorf("%s: %+v", tc.fixture, m.DICOM)
		}
		// What the patient record is prefilled from.
		rec := PatientFromTags(tg.PatientTags())
		if rec.ID != dicomtest.PatientID || rec.Name != "Rex" || rec.Species != "dog" || rec.Breed != dicomtest.Breed || rec.Sex != SexMaleNeutered ||
			rec.BirthDate != "2019-04-01" || rec.WeightKg == nil || *rec.WeightKg != 9.5 || rec.Owner != "Anna Smith" {
			t.Errorf("%s: record from the tags %+v", tc.fixture, rec)
		}
	}
	m, err := s.Cardiac.MeasureDesktop(ctx, "", codeImage(t, 1))
	if err != nil || m.DICOM != nil {
		t.Fatalf("PNG: DICOM %+v, %v", m.DICOM, err)
	}
	rle := set.Get(t, "rle")
	if _, err := s.Cardiac.MeasureDesktop(ctx, "", read("rle")); KindOf(err) != KindInvalid || !strings.Contains(err.Error(), rle.ErrName) {
		t.Fatalf("RLE: %v", err)
	}
}

func TestDICOMSpecies(t *testing.T) {
	for _, tc := range []struct{ desc, want string }{
		{"Canine", "dog"}, {"CANIS LUPUS FAMILIARIS", "dog"}, {"dog", "dog"}, {"Feline", "cat"},
		{"Felis catus", "cat"}, {"", ""}, {"Equine", ""},
	} {
		if got := (DICOMTags{SpeciesDescription: tc.desc}).Species(); got != tc.want {
			t.Errorf("Species(%q) = %q, want %q", tc.desc, got, tc.want)
		}
	}
}

func TestImageKind(t *testing.T) {
	dcm := append(make([]byte, 128), "DICM"...)
	for _, tc := range []struct {
		head []byte
		want string
	}{
		{dcm, "dicom"}, {[]byte{0xff, 0xd8, 0xff, 0xe0}, "jpeg"}, {[]byte("\x89PNG\r\n\x1a\nIHDR"), "png"},
		{[]byte("GIF89a"), ""}, {dcm[:131], ""}, {nil, ""},
	} {
		if got := ImageKind(tc.head); got != tc.want {
			t.Errorf("ImageKind(%q) = %q, want %q", tc.head[:min(len(tc.head), 8)], got, tc.want)
		}
	}
}

// TestUnsavedWork: changed landmarks and an unsaved capture are work to
// lose; a saved screen or a file's unedited measurement are not.
func TestUnsavedWork(t *testing.T) {
	res, _ := landmarkResult()
	file := &Measurement{Result: res}
	captured := &Measurement{Result: res, Captured: true}
	for _, tc := range []struct {
		name           string
		m              *Measurement
		kind           MeasurementKind
		changed, saved bool
		want           string
	}{
		{"nothing open", nil, MeasurementModel, false, false, ""},
		{"a file as measured", file, MeasurementModel, false, false, ""},
		{"edited", file, MeasurementEdited, true, false, "edited landmarks"},
		{"placed by hand", file, MeasurementManual, true, false, "placed by hand"},
		{"edited and saved", file, MeasurementEdited, true, true, ""},
		{"a capture", captured, MeasurementModel, false, false, "capture session"},
		{"a capture, saved", captured, MeasurementModel, false, true, ""},
	} {
		got := UnsavedWork(tc.m, tc.kind, tc.changed, tc.saved)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
