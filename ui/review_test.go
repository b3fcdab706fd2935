package ui

import (
	"context"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/cardiac/cardiactest"
	"vetlens/engine/pop/poport"
)

// phantom1 is the first simulator test phantom's file.
var phantom1 = filepath.Join(cardiactest.Dir(), "xraysim_1_640x480.png")

// phantomTruth is a test phantom's exact landmarks and VHS.
func phantomTruth(t *testing.T, name string) (cardiac.Landmarks, float64) {
	t.Helper()
	p := cardiactest.Find(t, name)
	return p.Landmarks, p.VHS
}

// tapImage taps the window's canvas where image point p is drawn in the
// landmark view, as a click there would.
func tapImage(w fyne.Window, v *LandmarkView, p cardiac.Point) {
	abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(v).Add(v.PointPos(p))
	test.TapCanvas(w.Canvas(), abs)
}

// near reports whether two points are within tol pixels.
func near(a, b cardiac.Point, tol float64) bool { return a.Dist(b) <= tol }

// typeKey sends a key to the canvas's focused object, as the driver does.
func typeKey(t *testing.T, w fyne.Window, k fyne.KeyName) {
	t.Helper()
	f := w.Canvas().Focused()
	if f == nil {
		t.Fatal("nothing has the keyboard focus")
	}
	f.TypedKey(&fyne.KeyEvent{Name: k})
}

// openInReview starts a test UI with the shipped models, opens file in the
// Review tab and waits until it is measured.
func openInReview(t *testing.T, file string) (*UI, fyne.Window) {
	t.Helper()
	u, w, done := newTestUI(t, true)
	u.SelectTab("Review")
	if err := u.OpenFile(file); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	return u, w
}

func TestReviewHandPlacementFlow(t *testing.T) {
	u, w := openInReview(t, phantom1)
	r := u.review
	model := r.m.Result
	if model.VHS == nil || !r.view.Complete() {
		t.Fatalf("phantom not measured: %q", r.status.Text)
	}
	if r.hand.Disabled() || !r.reset.Disabled() || !r.undo.Disabled() {
		t.Fatalf("buttons on a fresh result: hand %v reset %v undo %v", r.hand.Disabled(), r.reset.Disabled(), r.undo.Disabled())
	}

	test.Tap(r.hand)
	if r.view.Placed() != 0 || !r.view.Placing() || w.Canvas().Focused() != r.view {
		t.Fatalf("hand placement not started: %d placed, placing %v", r.view.Placed(), r.view.Placing())
	}
	if !strings.HasPrefix(r.guide.Text, "1/7 Carina (heart_top): where the trachea ends above the heart base") {
		t.Fatalf("first step %q", r.guide.Text)
	}
	if !strings.Contains(r.vhs.Text, "not measured") || !r.save.Disabled() || !r.export.Disabled() || r.reset.Disabled() {
		t.Fatalf("before placing: %q save %v export %v reset %v", r.vhs.Text, r.save.Disabled(), r.export.Disabled(), r.reset.Disabled())
	}
	truth, truthVHS := phantomTruth(t, "xraysim_1_640x480.png")
	steps := []string{
		"Carina", "2/7 Apex (heart_bottom)", "3/7 Cranial end of the short axis (heart_right)", "4/7 Caudal end of the short axis (heart_left)",
		"5/7 VLAS: the caudal border of the left atrium where it meets the caudal vena cava", "6/7 Vertebra A: midpoint of T4's cranial endplate",
		"7/7 Vertebra B: midpoint of T9's caudal endplate",
	}
	for i := range cardiac.NumLandmarks {
		if !strings.Contains(r.guide.Text, steps[i]) {
			t.Fatalf("step %d instruction %q, want %q", i+1, r.guide.Text, steps[i])
		}
		if i == 3 {
			// Half way: nothing to save or export yet.
			if err := u.SaveReview(); err == nil || !strings.Contains(err.Error(), "place all 7 landmarks first (3 placed)") {
				t.Fatalf("save half way: %v", err)
			}
			if err := u.ExportReport(filepath.Join(t.TempDir(), "r.pdf")); err == nil {
				t.Fatal("export half way succeeded")
			}
			if !strings.Contains(r.kindText.Text, "3 of 7 landmarks placed") {
				t.Fatalf("progress %q", r.kindText.Text)
			}
		}
		tapImage(w, r.view, truth[i])
		if r.view.Placed() != i+1 || !near(r.view.Landmarks()[i], truth[i], 0.01) || r.view.Selected() != i {
			t.Fatalf("tap %d: %d placed, landmark %v, want %v", i+1, r.view.Placed(), r.view.Landmarks()[i], truth[i])
		}
	}
	if r.view.Placing() || !strings.HasPrefix(r.guide.Text, "All 7 landmarks placed") {
		t.Fatalf("after 7 taps: placing %v, guide %q", r.view.Placing(), r.guide.Text)
	}
	// The values are the engine's geometry on the placed points.
	v := app.EditedValues(r.view.Landmarks())
	if !strings.HasPrefix(exactLine(r), "Exact values: VHS "+fmtValue(v.VHS)+",") || math.Abs(*v.VHS-truthVHS) > 0.01 {
		t.Fatalf("VHS shown %q, geometry %v, truth %.3f", exactLine(r), *v.VHS, truthVHS)
	}
	if !strings.HasPrefix(r.kindText.Text, "PLACED BY HAND") || r.save.Disabled() || r.export.Disabled() {
		t.Fatalf("kind %q, save %v", r.kindText.Text, r.save.Disabled())
	}
	// Every landmark is drawn with its label, the labels apart.
	lr := test.WidgetRenderer(r.view).(*landmarkRenderer)
	var boxes []rect
	for i := range cardiac.NumLandmarks {
		if !lr.dots[i].Visible() || !lr.labels[i].Visible() || lr.labels[i].Text != LandmarkLabel(i) {
			t.Fatalf("landmark %d drawn %v, label %q", i, lr.dots[i].Visible(), lr.labels[i].Text)
		}
		b := rect{lr.labelBacks[i].Position(), lr.labelBacks[i].Size()}
		for j, o := range boxes {
			if b.overlaps(o) {
				t.Fatalf("labels %s and %s overlap", LandmarkLabel(i), LandmarkLabel(j))
			}
		}
		boxes = append(boxes, b)
	}

	u.SetPatientID("Bella-7")
	test.Tap(r.save)
	if !strings.Contains(r.status.Text, "Saved to the history of Bella-7") || !strings.Contains(r.status.Text, "placed by hand (manual)") {
		t.Fatalf("status %q", r.status.Text)
	}
	rec, err := u.svc.Patients.Patient(t.Context(), "Bella-7")
	if err != nil || len(rec.Cardiac) != 1 {
		t.Fatalf("history %+v %v", rec, err)
	}
	e := rec.Cardiac[0]
	if e.Kind != app.MeasurementManual || *e.VHS != *v.VHS || e.ModelVHS == nil || *e.ModelVHS != *model.VHS {
		t.Fatalf("saved %+v (kind %s)", e.HistoryEntry, e.Kind)
	}

	// The Patients tab lists it as manual, drawn hollow.
	u.OpenPatient("Bella-7")
	if len(u.patients.cardiac.Objects) != 1 {
		t.Fatalf("%d history rows", len(u.patients.cardiac.Objects))
	}
	row := rowText(u.patients.cardiac.Objects[0])
	if !strings.Contains(row, "* manual") || !strings.Contains(row, fmt.Sprintf("VHS %.2f", *v.VHS)) || !strings.Contains(row, fmt.Sprintf("model VHS %.2f", *model.VHS)) {
		t.Fatalf("history row %q", row)
	}
	if pts := u.patients.vhsPlot.Points(); len(pts) != 1 || !pts[0].Edited {
		t.Fatalf("plotted %+v", pts)
	}

	// The report says so.
	out := filepath.Join(t.TempDir(), "manual.pdf")
	if err := u.ExportReport(out); err != nil {
		t.Fatal(err)
	}
	if text := reportText(t, out); !strings.Contains(text, "Measurement: Placed by hand by clinician.") || !strings.Contains(text, fmt.Sprintf("VHS %.1f;", *v.VHS)) {
		t.Fatalf("report text: %s", text)
	}
	// Only the model's measurement was metered.
	u.server.refresh()
	if !strings.Contains(u.server.desktop.Text, ": 1 measurements and screenings counted") {
		t.Fatalf("desktop usage %q", u.server.desktop.Text)
	}
}

func TestReviewNudgeUndoReset(t *testing.T) {
	u, w := openInReview(t, phantom1)
	r := u.review
	modelLm, modelVHS := r.view.Landmarks(), exactLine(r)
	apex := cardiac.HeartBottom

	// A tap on a landmark selects it and gives the view the keyboard.
	tapImage(w, r.view, modelLm[apex])
	if r.view.Selected() != apex || w.Canvas().Focused() != r.view {
		t.Fatalf("selected %d, focused %T", r.view.Selected(), w.Canvas().Focused())
	}
	if r.kind != app.MeasurementModel || !r.undo.Disabled() {
		t.Fatal("selecting changed the measurement")
	}
	shift := func(down bool) {
		k := w.Canvas().Focused().(desktop.Keyable)
		if down {
			k.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
		} else {
			k.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
		}
	}
	ctrl := func(k fyne.KeyName) {
		w.Canvas().Focused().(fyne.Shortcutable).TypedShortcut(&desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierControl})
	}
	type step struct {
		name   string
		do     func()
		dx, dy float64 // of the apex from the model's, after the step
	}
	at := func(dx, dy float64) cardiac.Point {
		return cardiac.Point{X: modelLm[apex].X + dx, Y: modelLm[apex].Y + dy}
	}
	steps := []step{
		{"right", func() { typeKey(t, w, fyne.KeyRight) }, 1, 0},
		{"right", func() { typeKey(t, w, fyne.KeyRight) }, 2, 0},
		{"up", func() { typeKey(t, w, fyne.KeyUp) }, 2, -1},
		{"shift+down", func() { shift(true); typeKey(t, w, fyne.KeyDown); shift(false) }, 2, 9},
		{"down after shift released", func() { typeKey(t, w, fyne.KeyDown) }, 2, 10},
		{"ctrl+left", func() { ctrl(fyne.KeyLeft) }, -8, 10},
	}
	for i, s := range steps {
		s.do()
		if got := r.view.Landmarks()[apex]; !near(got, at(s.dx, s.dy), 1e-9) {
			t.Fatalf("%s: apex %v, want %v", s.name, got, at(s.dx, s.dy))
		}
		if len(r.history) != i+1 || r.kind != app.MeasurementEdited || !strings.HasPrefix(r.kindText.Text, "EDITED") || r.reset.Disabled() {
			t.Fatalf("%s: %d undo steps, kind %s", s.name, len(r.history), r.kind)
		}
		want := app.EditedValues(r.view.Landmarks())
		if !strings.HasPrefix(exactLine(r), "Exact values: VHS "+fmtValue(want.VHS)+",") {
			t.Fatalf("%s: VHS %q, want %v", s.name, exactLine(r), *want.VHS)
		}
	}
	// Other keys do nothing; other landmarks did not move.
	typeKey(t, w, fyne.KeyA)
	if len(r.history) != len(steps) {
		t.Fatal("a letter key made an undo step")
	}
	for i := range cardiac.NumLandmarks {
		if i != apex && r.view.Landmarks()[i] != modelLm[i] {
			t.Fatalf("landmark %d moved", i)
		}
	}

	// Undo, by button and by Ctrl+Z, walks back one step at a time.
	for i := len(steps) - 1; i >= 0; i-- {
		if i%2 == 0 {
			test.Tap(r.undo)
		} else {
			w.Canvas().Focused().(fyne.Shortcutable).TypedShortcut(&fyne.ShortcutUndo{})
		}
		want := at(0, 0)
		if i > 0 {
			want = at(steps[i-1].dx, steps[i-1].dy)
		}
		if got := r.view.Landmarks()[apex]; !near(got, want, 1e-9) {
			t.Fatalf("undo to step %d: apex %v, want %v", i, got, want)
		}
	}
	if r.kind != app.MeasurementModel || r.kindText.Text != "" || exactLine(r) != modelVHS || !r.undo.Disabled() || !r.reset.Disabled() {
		t.Fatalf("after undoing all: kind %s %q, VHS %q", r.kind, r.kindText.Text, r.vhs.Text)
	}

	// A whole drag is one undo step.
	start := r.view.WidgetPos(cardiac.HeartRight)
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(-10, 0)}, Dragged: fyne.NewDelta(-10, 0)})
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(-20, 0)}, Dragged: fyne.NewDelta(-10, 0)})
	r.view.DragEnd()
	if len(r.history) != 1 || r.view.Landmarks()[cardiac.HeartRight] == modelLm[cardiac.HeartRight] {
		t.Fatalf("drag: %d undo steps", len(r.history))
	}
	edited := r.view.Landmarks()

	// Reset brings the model's points back, and can itself be undone.
	test.Tap(r.reset)
	if r.view.Landmarks() != modelLm || r.kind != app.MeasurementModel || exactLine(r) != modelVHS || !r.reset.Disabled() {
		t.Fatalf("after reset: kind %s, VHS %q", r.kind, r.vhs.Text)
	}
	test.Tap(r.undo)
	if r.view.Landmarks() != edited || r.kind != app.MeasurementEdited {
		t.Fatalf("undo reset: kind %s", r.kind)
	}
	// Starting hand placement is undoable too: the edited points return.
	test.Tap(r.hand)
	tapImage(w, r.view, cardiac.Point{X: 100, Y: 100})
	if r.view.Placed() != 1 || r.kind != app.MeasurementManual {
		t.Fatalf("placed %d, kind %s", r.view.Placed(), r.kind)
	}
	test.Tap(r.undo)
	if r.view.Placed() != 0 || !r.view.Placing() || r.kind != app.MeasurementManual {
		t.Fatalf("undo a placement: %d placed", r.view.Placed())
	}
	test.Tap(r.undo)
	if r.view.Landmarks() != edited || !r.view.Complete() || r.view.Placing() || r.kind != app.MeasurementEdited {
		t.Fatalf("undo the start of hand placement: %d placed, kind %s", r.view.Placed(), r.kind)
	}
	// A nudge stops at the image's edge.
	r.view.Select(cardiac.VertebraA)
	if !r.view.Nudge(-1e6, 0) || r.view.Landmarks()[cardiac.VertebraA].X != 0 || r.view.Nudge(-1, 0) {
		t.Fatalf("nudge past the edge: %v", r.view.Landmarks()[cardiac.VertebraA])
	}
}

// handPoints are landmarks on a 400x300 image giving VHS 10, VLAS 2.
func handPoints() cardiac.Landmarks {
	var l cardiac.Landmarks
	l[cardiac.HeartTop] = cardiac.Point{X: 200, Y: 60}
	l[cardiac.HeartBottom] = cardiac.Point{X: 200, Y: 180}
	l[cardiac.HeartRight] = cardiac.Point{X: 160, Y: 120}
	l[cardiac.HeartLeft] = cardiac.Point{X: 240, Y: 120}
	l[cardiac.VLASPoint] = cardiac.Point{X: 240, Y: 60}
	l[cardiac.VertebraA] = cardiac.Point{X: 100, Y: 30}
	l[cardiac.VertebraB] = cardiac.Point{X: 220, Y: 30}
	return l
}

// TestReviewHandPlacementWithoutModelPoints: an image the model rejected
// (code 6) or found no landmarks on (code 5) can be measured by hand; a
// rejected one only after the clinician confirms it is a radiograph.
func TestReviewHandPlacementWithoutModelPoints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		code    cardiac.Code
		confirm bool // needs the confirmation
		guide   string
	}{
		{"rejected", cardiac.CodeRejected, true, "rejected this image as not a radiograph"},
		{"no landmarks", cardiac.CodeNoLandmarks, false, "found no landmarks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, w, _ := newTestUI(t, false)
			r := u.review
			res := &cardiac.Result{Width: 400, Height: 300, Code: tc.code, Rejected: tc.code == cardiac.CodeRejected}
			u.ShowMeasurement(&app.Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "m-1"}, "test image")
			if r.view.Placed() != 0 || !r.save.Disabled() || !r.reset.Disabled() || !strings.Contains(r.guide.Text, tc.guide) {
				t.Fatalf("shown: %d points, save %v, reset %v, guide %q", r.view.Placed(), r.save.Disabled(), r.reset.Disabled(), r.guide.Text)
			}
			if r.confirm.Visible() != tc.confirm || r.hand.Disabled() != tc.confirm {
				t.Fatalf("confirm shown %v, hand disabled %v", r.confirm.Visible(), r.hand.Disabled())
			}
			if tc.confirm {
				if err := u.StartHandPlacement(); err == nil || !strings.Contains(err.Error(), "confirm it is a radiograph") || r.view.Placing() {
					t.Fatalf("placement without confirmation: %v", err)
				}
				test.Tap(r.confirm)
				if !r.confirm.Checked || r.hand.Disabled() {
					t.Fatal("confirmation did not enable hand placement")
				}
			}
			test.Tap(r.hand)
			lm := handPoints()
			for i := range cardiac.NumLandmarks {
				if !strings.HasPrefix(r.guide.Text, fmt.Sprintf("%d/7", i+1)) {
					t.Fatalf("step %d: %q", i+1, r.guide.Text)
				}
				tapImage(w, r.view, lm[i])
			}
			if !strings.HasPrefix(exactLine(r), "Exact values: VHS 10.00, VLAS 2.00") || r.save.Disabled() || !r.reset.Disabled() {
				t.Fatalf("after placing: %q %q, save %v, reset %v", r.vhs.Text, r.vlas.Text, r.save.Disabled(), r.reset.Disabled())
			}
			u.SetPatientID("Rex")
			if tc.confirm {
				// Taking the confirmation back blocks saving again.
				test.Tap(r.confirm)
				if !r.save.Disabled() {
					t.Fatal("save enabled without the confirmation")
				}
				if err := u.SaveReview(); err == nil || !strings.Contains(err.Error(), "confirm it is a radiograph") {
					t.Fatalf("save without the confirmation: %v", err)
				}
				test.Tap(r.confirm)
			}
			test.Tap(r.save)
			rec, err := u.svc.Patients.Patient(t.Context(), "Rex")
			if err != nil || len(rec.Cardiac) != 1 {
				t.Fatalf("status %q, history %+v %v", r.status.Text, rec, err)
			}
			e := rec.Cardiac[0]
			if e.Kind != app.MeasurementManual || *e.VHS != 10 || *e.VLAS != 2 || e.ModelVHS != nil || e.Code != int(tc.code) {
				t.Fatalf("saved %+v", e.HistoryEntry)
			}
			out := filepath.Join(t.TempDir(), "r.pdf")
			if err := u.ExportReport(out); err != nil {
				t.Fatal(err)
			}
			if text := reportText(t, out); !strings.Contains(text, "Placed by hand by clinician. The model gave no values") {
				t.Fatalf("report does not say the landmarks were placed by hand: %s", text)
			}
		})
	}
}

func TestLabelBoxAvoidsOverlap(t *testing.T) {
	view := fyne.NewSize(400, 300)
	s := fyne.NewSize(40, 14)
	var placed []rect
	// Four points close together: each label takes a free side.
	for _, c := range []fyne.Position{{X: 200, Y: 150}, {X: 204, Y: 150}, {X: 200, Y: 154}, {X: 204, Y: 154}} {
		b := labelBox(view, c, s, placed)
		for _, o := range placed {
			if b.overlaps(o) {
				t.Fatalf("label at %v overlaps %v", b, o)
			}
		}
		placed = append(placed, b)
	}
	// At the top-left corner the label goes below-right, inside the view.
	if b := labelBox(view, fyne.NewPos(2, 2), s, nil); b.pos.X < 0 || b.pos.Y < 0 {
		t.Fatalf("corner label at %v", b.pos)
	}
}

// TestReviewSaysWhyAScreenPhotoHasNoNumber: a blurred screen photo fixture
// opened in Review is corrected but gets no number (a capture session
// would not keep it); the status names the reason and what was seen, and
// the landmarks stay on the rectified image for review.
func TestReviewSaysWhyAScreenPhotoHasNoNumber(t *testing.T) {
	photo := filepath.Join("..", "engine", "pop", "testdata", "variety", "vscreen_0000.jpg")
	learned := func(c *cardiac.Engine) *capture.Service {
		m, err := poport.Load(filepath.Join("..", "models"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		an := capture.PoP{Models: m}
		return capture.NewService(capture.NewManager(capture.DefaultConfig(), c, an, time.Now), c, an)
	}
	u, _, done := newTestUIWith(t, true, learned, Options{})
	u.SelectTab("Review")
	if err := u.OpenFile(photo); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	r := u.review
	for _, want := range []string{cardiac.GuardScreenPhotoQuality.Description(), "(frame quality: [blurred])", "perspective was corrected"} {
		if !strings.Contains(r.state.Text, want) {
			t.Fatalf("state %q lacks %q", r.state.Text, want)
		}
	}
	if r.m == nil || r.m.Result.Code != cardiac.CodeNoLandmarks || !r.m.HasModelLandmarks() {
		t.Fatalf("measurement %+v", r.m)
	}
}

// TestReviewSaysItLevelled: a radiograph whose spine is tilted 25 degrees
// is measured on the image turned level, and Review says so.
func TestReviewSaysItLevelled(t *testing.T) {
	tilted := cardiactest.Find(t, "xraysim_1_640x480.png").Tilted(t, -25)
	u, _ := openInReview(t, tilted)
	r := u.review
	if r.m.Result.LevelledDeg == 0 {
		t.Fatalf("not levelled: %q", r.status.Text)
	}
	want := fmt.Sprintf("The spine was tilted about %.0f degrees: the landmarks were placed on the image turned level.", math.Abs(r.m.Result.LevelledDeg))
	if !strings.Contains(r.state.Text, want) {
		t.Errorf("state %q lacks %q", r.state.Text, want)
	}
}

// TestReviewCountsTheVertebralSpan: Review counts the vertebrae between
// Vertebra A and B from the image's own vertebral length, for the
// model's landmarks and for a clinician's; a hand placement whose B sits
// a vertebra short of T9 is told so, the exact T4-T9 span is not.
func TestReviewCountsTheVertebralSpan(t *testing.T) {
	truth, _ := phantomTruth(t, "xraysim_1_640x480.png")
	short := truth
	a, b := truth[cardiac.VertebraA], truth[cardiac.VertebraB]
	short[cardiac.VertebraB] = cardiac.Point{X: a.X + (b.X-a.X)*5/6, Y: a.Y + (b.Y-a.Y)*5/6}
	for _, tc := range []struct {
		name  string
		l     cardiac.Landmarks
		count string
		warn  bool
	}{
		{"T4 to T9", truth, "about 5.8 vertebrae", false},
		{"B on T8", short, "about 4.9 vertebrae", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, w := openInReview(t, phantom1)
			r := u.review
			if !strings.Contains(r.details.Text, "Vertebral span: A-B covers about") || strings.Contains(r.conf.Text, "not six") {
				t.Fatalf("model's landmarks: details %q, note %q", r.details.Text, r.conf.Text)
			}
			test.Tap(r.hand)
			for i := range cardiac.NumLandmarks {
				if strings.Contains(r.details.Text, "Vertebral span") {
					t.Fatalf("span counted with %d of 7 placed: %q", i, r.details.Text)
				}
				tapImage(w, r.view, tc.l[i])
			}
			if !strings.Contains(r.details.Text, tc.count) {
				t.Fatalf("details %q, want %q", r.details.Text, tc.count)
			}
			if got := strings.Contains(r.kindText.Text, "not six: check that A is on T4's cranial endplate and B on T9's caudal endplate"); got != tc.warn {
				t.Fatalf("warned %v, want %v: %q", got, tc.warn, r.kindText.Text)
			}
		})
	}
}

// TestReviewWarnsOfAModelSpanOffSix: a model measurement whose Vertebra
// B sits a vertebra short of T9 (withheld by guard 9) gets the span
// note under the values, as well as the guard in the status.
func TestReviewWarnsOfAModelSpanOffSix(t *testing.T) {
	u, _ := spanWithheldOnPhantom(t, 5, "A-B covers about 4.9 vertebrae of 52 px")
	r := u.review
	if !strings.Contains(r.state.Text, "Vertebra A-B does not cover six of the image's vertebrae (A-B covers about 4.9 vertebrae of 52 px)") {
		t.Errorf("state %q", r.state.Text)
	}
	if !strings.Contains(r.conf.Text, "covers about 4.9 vertebrae") || !strings.Contains(r.conf.Text, "not six") {
		t.Errorf("note under the values %q", r.conf.Text)
	}
	if !strings.Contains(r.details.Text, "Vertebral span: A-B covers about 4.9 vertebrae") {
		t.Errorf("details %q", r.details.Text)
	}
}

// phantomImage is the first phantom's image.
func phantomImage(t *testing.T) image.Image {
	t.Helper()
	f, err := os.Open(phantom1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// spanWithheldOnPhantom shows on Review a withheld model result (code 5,
// guard 9, detail) on the first phantom whose points are the truth but
// for Vertebra B, put sixths sixths of the true T4-T9 span from A.
func spanWithheldOnPhantom(t *testing.T, sixths float64, detail string) (*UI, cardiac.Landmarks) {
	t.Helper()
	truth, _ := phantomTruth(t, "xraysim_1_640x480.png")
	a, b := truth[cardiac.VertebraA], truth[cardiac.VertebraB]
	off := truth
	off[cardiac.VertebraB] = cardiac.Point{X: a.X + (b.X-a.X)*sixths/6, Y: a.Y + (b.Y-a.Y)*sixths/6}
	img := phantomImage(t)
	u, _, _ := newTestUI(t, false)
	u.SetPatientID("Rex-9")
	res := &cardiac.Result{Width: 640, Height: 480, Code: cardiac.CodeNoLandmarks, Guard: cardiac.GuardVertebralSpanNotSix,
		GuardDetail: detail, Landmarks: off, ModelLandmarks: []cardiac.Landmarks{off, off}}
	u.ShowMeasurement(&app.Measurement{Result: res, Image: img, ModelVersion: "m-1"}, "test image")
	return u, truth
}

// dragTo drags landmark k of the view to image point p.
func dragTo(v *LandmarkView, k int, p cardiac.Point) {
	start, end := v.WidgetPos(k), v.PointPos(p)
	v.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: end}, Dragged: fyne.NewDelta(end.X-start.X, end.Y-start.Y)})
	v.DragEnd()
}

// confirmButton is Review's button confirming landmark k where it is, nil
// when there is none.
func confirmButton(r *review, k int) *widget.Button {
	for _, o := range r.confirmBox.Objects {
		if b, ok := o.(*widget.Button); ok && strings.Contains(b.Text, app.LandmarkNames[k]) {
			return b
		}
	}
	return nil
}

// noVerdict fails unless Review states no heart size and offers no save
// or report.
func noVerdict(t *testing.T, u *UI, when string) {
	t.Helper()
	r := u.review
	if !strings.Contains(r.vhs.Text, "not measured") || !r.save.Disabled() || !r.export.Disabled() {
		t.Fatalf("%s: %q, save off %v, export off %v", when, r.vhs.Text, r.save.Disabled(), r.export.Disabled())
	}
	if err := u.SaveReview(); err == nil {
		t.Fatalf("%s: saved", when)
	}
}

// TestNoVerdictFromDoubtedPoints: after a withheld result whose span the
// model doubts, moving only the apex gives no verdict (the issue's
// "Heart size: small" from the model's other points); confirming A and B
// where they are still gives none while the span counts seven vertebrae;
// moving B onto T9 gives the verdict, which saves. Undo takes a
// confirmation back.
func TestNoVerdictFromDoubtedPoints(t *testing.T) {
	u, truth := spanWithheldOnPhantom(t, 7, "A-B covers about 7.0 vertebrae")
	r := u.review
	if confirmButton(r, cardiac.VertebraA) == nil || confirmButton(r, cardiac.VertebraB) == nil || confirmButton(r, cardiac.HeartBottom) != nil {
		t.Fatalf("confirm buttons %v", texts(r.confirmBox))
	}
	dragTo(r.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 4})
	if r.kind != app.MeasurementEdited {
		t.Fatalf("kind %s after the drag", r.kind)
	}
	noVerdict(t, u, "apex moved")
	if !strings.Contains(r.kindText.Text, "Vertebra T4 (start), Vertebra T9 (end)") {
		t.Errorf("note %q does not name the doubted points", r.kindText.Text)
	}
	test.Tap(confirmButton(r, cardiac.VertebraA))
	noVerdict(t, u, "A confirmed")
	if confirmButton(r, cardiac.VertebraA) != nil || confirmButton(r, cardiac.VertebraB) == nil {
		t.Fatalf("after confirming A: %v", texts(r.confirmBox))
	}
	test.Tap(r.undo)
	if confirmButton(r, cardiac.VertebraA) == nil {
		t.Fatal("undo did not take the confirmation back")
	}
	test.Tap(confirmButton(r, cardiac.VertebraA))
	test.Tap(confirmButton(r, cardiac.VertebraB))
	noVerdict(t, u, "A and B confirmed, span seven")
	if !strings.Contains(r.kindText.Text, "not six") {
		t.Errorf("note %q does not give the span", r.kindText.Text)
	}
	dragTo(r.view, cardiac.VertebraB, truth[cardiac.VertebraB])
	if !strings.HasPrefix(r.vhs.Text, "Heart size: ") || strings.Contains(r.vhs.Text, "not measured") || r.save.Disabled() {
		t.Fatalf("B on T9: %q, save off %v; note %q", r.vhs.Text, r.save.Disabled(), r.kindText.Text)
	}
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
}

// TestReviewShowsOneState: under a verdict from the clinician's points
// the panel no longer says the values could not be calculated (the
// model's own result moves to Details, attributed), and it says who
// placed the points; with the model's result it says the model did.
func TestReviewShowsOneState(t *testing.T) {
	u, truth := spanWithheldOnPhantom(t, 7, "A-B covers about 7.0 vertebrae")
	r := u.review
	code5 := cardiac.CodeNoLandmarks.Description()
	if !strings.Contains(r.state.Text, code5) || !strings.Contains(r.state.Text, "Points: all 7 placed by the model.") {
		t.Fatalf("model's result: state %q", r.state.Text)
	}
	dragTo(r.view, cardiac.VertebraA, cardiac.Point{X: truth[cardiac.VertebraA].X + 1, Y: truth[cardiac.VertebraA].Y})
	dragTo(r.view, cardiac.VertebraB, truth[cardiac.VertebraB])
	if strings.Contains(r.vhs.Text, "not measured") {
		t.Fatalf("no verdict: %q; note %q", r.vhs.Text, r.kindText.Text)
	}
	for _, l := range []*widget.Label{r.vhs, r.vlas, r.reading, r.conf, r.kindText, r.state, r.status, r.guide} {
		if strings.Contains(l.Text, code5) || strings.Contains(l.Text, "could not") {
			t.Errorf("under the verdict %q the panel says %q", r.vhs.Text, l.Text)
		}
	}
	if !strings.Contains(r.state.Text, "Values from the clinician's points") || !strings.Contains(r.state.Text, "Points: 5 placed by the model, 2 moved by the clinician.") {
		t.Errorf("state %q", r.state.Text)
	}
	if !strings.Contains(r.details.Text, "The model's own result: "+code5) {
		t.Errorf("details %q", r.details.Text)
	}
}

// TestNoVLASFromADoubtedPoint: where the model gave VHS but withheld
// VLAS (code 4), moving the apex states VHS but no VLAS from the VLAS
// point the model doubted, and saves VHS alone; confirming that point
// states VLAS.
func TestNoVLASFromADoubtedPoint(t *testing.T) {
	truth, vhs := phantomTruth(t, "xraysim_1_640x480.png")
	u, _, _ := newTestUI(t, false)
	u.SetPatientID("Rex-9")
	res := &cardiac.Result{Width: 640, Height: 480, Code: cardiac.CodeNoVLAS, Guard: cardiac.GuardVLASMisplaced, Landmarks: truth,
		ModelLandmarks: []cardiac.Landmarks{truth}, VHS: &vhs, Confidence: cardiac.ConfidenceGood, LandmarksDetected: true, AxesPerpendicular: true}
	u.ShowMeasurement(&app.Measurement{Result: res, Image: phantomImage(t), ModelVersion: "m-1"}, "test image")
	r := u.review
	dragTo(r.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 4})
	if strings.Contains(r.vhs.Text, "not measured") || !strings.Contains(r.vlas.Text, "not measured") || !strings.Contains(r.kindText.Text, "No VLAS yet") {
		t.Fatalf("apex moved: %q, %q, note %q", r.vhs.Text, r.vlas.Text, r.kindText.Text)
	}
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	rec, err := u.svc.Patients.Patient(context.Background(), "Rex-9")
	if err != nil || len(rec.Cardiac) != 1 || rec.Cardiac[0].VHS == nil || rec.Cardiac[0].VLAS != nil {
		t.Fatalf("saved %+v, %v", rec, err)
	}
	b := confirmButton(r, cardiac.VLASPoint)
	if b == nil {
		t.Fatalf("no confirmation of the VLAS point: %v", texts(r.confirmBox))
	}
	test.Tap(b)
	if strings.Contains(r.vlas.Text, "not measured") || strings.Contains(r.kindText.Text, "No VLAS yet") {
		t.Fatalf("VLAS confirmed: %q, note %q", r.vlas.Text, r.kindText.Text)
	}
}
