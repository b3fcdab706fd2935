package app

import (
	"context"
	"encoding/json"
	"image"
	"math"
	"strings"
	"testing"
	"time"

	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
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

	for _, tc := range []struct {
		name      string
		req       SaveRequest
		wantErr   string
		vhs, vlas float64
		edited    bool
	}{
		{name: "model values", req: SaveRequest{PatientID: " Rex ", Measurement: m}, vhs: 10, vlas: 2},
		{name: "edited", req: SaveRequest{PatientID: "Rex", Measurement: m, Edited: &moved}, vhs: 11, vlas: 2, edited: true},
		{name: "edited code 5 result", req: SaveRequest{PatientID: "Rex", Measurement: noVHS, Edited: &l}, vhs: 10, vlas: 2, edited: true},
		{name: "no patient", req: SaveRequest{PatientID: "  ", Measurement: m}, wantErr: "patient ID is required"},
		{name: "control char", req: SaveRequest{PatientID: "Re\tx", Measurement: m}, wantErr: "control characters"},
		{name: "too long", req: SaveRequest{PatientID: strings.Repeat("x", 129), Measurement: m}, wantErr: "at most 128"},
		{name: "nothing measured", req: SaveRequest{PatientID: "Rex"}, wantErr: "nothing measured"},
		{name: "outside", req: SaveRequest{PatientID: "Rex", Measurement: m, Edited: &outside}, wantErr: "VLAS lies outside"},
		{name: "nan", req: SaveRequest{PatientID: "Rex", Measurement: m, Edited: &nan}, wantErr: "outside the image"},
		{name: "collapsed span", req: SaveRequest{PatientID: "Rex", Measurement: m, Edited: &collapsed}, wantErr: "give no VHS"},
		{name: "rejected", req: SaveRequest{PatientID: "Rex", Measurement: rejected}, wantErr: "no VHS was measured"},
		{name: "rejected edited", req: SaveRequest{PatientID: "Rex", Measurement: rejected, Edited: &l}, wantErr: "no landmarks to edit"},
		{name: "code 5 unedited", req: SaveRequest{PatientID: "Rex", Measurement: noVHS}, wantErr: "correct the landmarks first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			e, err := s.SaveMeasurement(ctx, tc.req)
			rec, rerr := s.Patient(ctx, "Rex")
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
			if got.Customer != DesktopCustomer || got.Source != "desktop" || !got.Time.Equal(t0) || got.Edited != tc.edited ||
				*got.VHS != tc.vhs || *got.VLAS != tc.vlas || len(got.Landmarks) != cardiac.NumLandmarks || got.ModelVersion != e.ModelVersion {
				t.Fatalf("stored %+v", got)
			}
			if tc.edited && tc.req.Measurement.Result.VHS != nil && (got.ModelVHS == nil || *got.ModelVHS != 10) {
				t.Fatalf("edited entry lost the model's VHS: %+v", got)
			}
			// The edited value is what the API's history reports.
			hv, _, err := s.history(ctx, DesktopCaller(), "Rex")
			if err != nil || !strings.Contains(string(hv), "2026-03-01") {
				t.Fatalf("historic_vhs %s %v", hv, err)
			}
		})
	}
}

func TestMeasureDesktopMetersWithoutRecording(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	for i, tc := range []struct {
		code    int
		patient string
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
		m, err := s.MeasureDesktop(ctx, tc.patient, codeImage(t, tc.code))
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if int(m.Result.Code) != tc.code || m.Billing.Reason != tc.reason || *m.Billing.MonthlyUsage != tc.usage || m.Image == nil || m.ModelVersion != "fake-1" {
			t.Fatalf("%d: %+v billing %+v", i, m.Result, m.Billing)
		}
	}
	if rec, _ := s.Patient(ctx, "Rex"); len(rec.Cardiac) != 0 {
		t.Fatalf("measuring must not record history before the clinician saves: %+v", rec.Cardiac)
	}
	if _, err := s.MeasureDesktop(ctx, "", []byte("not an image")); KindOf(err) != KindInvalid {
		t.Fatalf("bad bytes: %v", err)
	}
	if _, err := s.MeasureDesktop(ctx, "a\x00b", codeImage(t, 1)); KindOf(err) != KindInvalid {
		t.Fatalf("bad patient id: %v", err)
	}
	if _, _, err := s.CreateKey(ctx, DesktopCustomer, TierPaygo); KindOf(err) != KindInvalid {
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
	s.usg = fakeUSG{}
	res, _ := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	if _, err := s.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex-7", Measurement: m}); err != nil {
		t.Fatal(err)
	}
	clk.Add(48 * time.Hour)
	req := &usg.Request{UUID: "Rex-7", Values: [usg.NumFeatures]float64{1, 2, 3, 4, 5}}
	if _, err := s.PredictUSGDesktop(ctx, req); err != nil {
		t.Fatal(err)
	}
	// An API client's measurement of the same patient id shows too.
	lan := newCaller(t, s, "lan-pc", TierPaygo)
	if _, err := s.PredictSingle(ctx, lan, &CardiacRequest{Images: [][]byte{codeImage(t, 2)}, UUID: "Rex-7"}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Patient(ctx, "Rex-7")
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
	ids, err := s.Patients(ctx, "rex", 10)
	if err != nil || len(ids) != 1 || ids[0] != "Rex-7" {
		t.Fatalf("Patients = %v %v", ids, err)
	}
	if _, err := s.Patient(ctx, ""); KindOf(err) != KindInvalid {
		t.Fatalf("empty id: %v", err)
	}
}

func TestDesktopReport(t *testing.T) {
	res, l := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1"}
	moved := l
	moved[cardiac.HeartBottom].Y += 20
	date := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	plain := DesktopReport(m, nil, " Rex ", date)
	if plain.PatientID != "Rex" || *plain.VHS != 10 || plain.Edited || plain.Confidence != "optimal" || !strings.Contains(plain.Reading, "normal range") || plain.Image.Bounds().Dx() != 400 {
		t.Fatalf("plain report %+v", plain)
	}
	ed := DesktopReport(m, &moved, "Rex", date)
	if !ed.Edited || *ed.VHS != 11 || *ed.ModelVHS != 10 || !strings.Contains(ed.Reading, "larger than normal") {
		t.Fatalf("edited report %+v", ed)
	}
	// The drawn image differs where the edited apex was drawn.
	if plain.Image.(*image.RGBA).RGBAAt(200, 200) == ed.Image.(*image.RGBA).RGBAAt(200, 200) {
		t.Fatal("edited landmarks not drawn on the report image")
	}
}

func TestReading(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		vhs, vlas *float64
		want      string
	}{
		{nil, nil, "No heart size"},
		{f(9.5), f(2.0), "within the normal range. The left atrium size is normal."},
		{f(11.2), f(2.7), "cardiomegaly. The left atrium appears enlarged"},
		{f(8.0), nil, "smaller than the usual range (VHS below 8.5). The left atrium could not be measured."},
	} {
		if got := Reading(c.vhs, c.vlas); !strings.Contains(got, c.want) {
			t.Errorf("Reading = %q, want %q", got, c.want)
		}
	}
}
