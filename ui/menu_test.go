package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/engine/cardiac"
)

// recWindow is a test window that records its canvas shortcuts and its
// close intercept (Fyne's test window neither dispatches the one nor
// calls the other).
type recWindow struct {
	fyne.Window
	canvas    *recCanvas
	intercept func()
}

type recCanvas struct {
	fyne.Canvas
	shortcuts map[string]func(fyne.Shortcut)
}

func (c *recCanvas) AddShortcut(s fyne.Shortcut, h func(fyne.Shortcut)) {
	c.shortcuts[s.ShortcutName()] = h
	c.Canvas.AddShortcut(s, h)
}
func (w *recWindow) Canvas() fyne.Canvas        { return w.canvas }
func (w *recWindow) SetCloseIntercept(f func()) { w.intercept = f }

// press types shortcut s on the window.
func (w *recWindow) press(t *testing.T, s fyne.Shortcut) {
	t.Helper()
	h := w.canvas.shortcuts[s.ShortcutName()]
	if h == nil {
		t.Fatalf("no %s shortcut", s.ShortcutName())
	}
	h(s)
}

// newMenuTestUI builds the UI in a test window that it owns (menu, Ctrl+Q,
// close intercept), with listener l and a counted Quit.
func newMenuTestUI(t *testing.T, l Listener) (*UI, *recWindow, *int) {
	t.Helper()
	svc := newBareService(t)
	tw := test.NewTempWindow(t, widget.NewLabel(""))
	tw.Resize(fyne.NewSize(1000, 700))
	w := &recWindow{Window: tw, canvas: &recCanvas{Canvas: tw.Canvas(), shortcuts: map[string]func(fyne.Shortcut){}}}
	quits := new(int)
	u := New(svc, Options{Window: w, Listener: l, Quit: func() { *quits++ }})
	w.SetContent(u.Content())
	return u, w, quits
}

func TestMainMenu(t *testing.T) {
	u, w, quits := newMenuTestUI(t, &fakeListener{})
	m := w.MainMenu()
	if m == nil || len(m.Items) != 2 || m.Items[0].Label != "File" || m.Items[1].Label != "Help" {
		t.Fatalf("menu %+v", m)
	}
	var labels []string
	for _, it := range m.Items[0].Items {
		labels = append(labels, it.Label)
	}
	if got := strings.Join(labels, "|"); got != MenuOpen+"|"+MenuExport+"|"+MenuPrint+"||"+MenuQuit {
		t.Fatalf("File menu %q", got)
	}
	quit := m.Items[0].Items[4]
	if !quit.IsQuit || quit.Shortcut == nil || quit.Shortcut.ShortcutName() != quitShortcut.ShortcutName() || !strings.Contains(quitShortcut.ShortcutName(), "Q") {
		t.Fatalf("quit item %+v", quit)
	}
	if len(m.Items[1].Items) != 1 || m.Items[1].Items[0].Label != MenuAbout {
		t.Fatalf("Help menu %+v", m.Items[1].Items)
	}
	// Export and Print with nothing measured say so instead of writing
	// an empty report.
	for _, i := range []int{1, 2} {
		m.Items[0].Items[i].Action()
		top := w.Canvas().Overlays().Top()
		if top == nil || !strings.Contains(overlayText(top), "No report yet") {
			t.Fatalf("%s with nothing measured: %q", m.Items[0].Items[i].Label, overlayText(top))
		}
		w.Canvas().Overlays().Remove(top)
	}
	// About names the models' versions (none loaded here) and the
	// synthetic-data note.
	m.Items[1].Items[0].Action()
	about := overlayText(w.Canvas().Overlays().Top())
	for _, want := range []string{"Cardiac models (VHS, VLAS): not loaded", "USG model (feline bloodwork): not loaded", "synthetic data", "not validated for clinical use"} {
		if !strings.Contains(about, want) {
			t.Fatalf("About %q lacks %q", about, want)
		}
	}
	w.Canvas().Overlays().Remove(w.Canvas().Overlays().Top())
	// Ctrl+Q and the menu's Quit quit at once while no LAN client is there.
	w.press(t, quitShortcut)
	quit.Action()
	if *quits != 2 {
		t.Fatalf("%d quits", *quits)
	}
	if u.QuitQuestion() != "" {
		t.Fatalf("question with the listener off: %q", u.QuitQuestion())
	}
}

// TestQuitAsksWhileLANClientsConnected: quitting (Ctrl+Q, closing the
// window) asks first while the API has connections from other machines
// or had one within the last minutes, and quits only on Yes.
func TestQuitAsksWhileLANClientsConnected(t *testing.T) {
	l := &fakeListener{}
	u, w, quits := newMenuTestUI(t, l)
	if err := l.Start("0.0.0.0:8443"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		clients int
		last    time.Duration // since the last LAN activity; 0: never
		ask     string
	}{
		{name: "serving, no LAN client", ask: ""},
		{name: "connections open", clients: 2, ask: "2 connection(s) from other machines"},
		{name: "a recent request", last: time.Minute, ask: "used the API 1m0s ago"},
		{name: "an old request", last: time.Hour, ask: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l.clients, l.last = c.clients, time.Time{}
			if c.last > 0 {
				l.last = time.Now().Add(-c.last)
			}
			q := u.QuitQuestion()
			if (c.ask == "") != (q == "") || !strings.Contains(q, c.ask) {
				t.Fatalf("question %q, want %q", q, c.ask)
			}
			before := *quits
			w.press(t, quitShortcut)
			if c.ask == "" {
				if *quits != before+1 {
					t.Fatal("did not quit at once")
				}
				return
			}
			top := w.Canvas().Overlays().Top()
			if *quits != before || top == nil || !strings.Contains(overlayText(top), c.ask) {
				t.Fatalf("quit without asking (%d quits), dialog %q", *quits-before, overlayText(top))
			}
			tapButton(t, top, "No")
			if *quits != before {
				t.Fatal("quit after No")
			}
			w.Canvas().Overlays().Remove(top)
			w.intercept() // the window's close button asks too
			top = w.Canvas().Overlays().Top()
			if top == nil {
				t.Fatal("closing the window did not ask")
			}
			tapButton(t, top, "Yes")
			if *quits != before+1 {
				t.Fatal("did not quit after Yes")
			}
		})
	}
}

// walkObjects calls fn on o and everything inside it (containers and
// widgets' rendered objects).
func walkObjects(o fyne.CanvasObject, fn func(fyne.CanvasObject)) {
	if o == nil {
		return
	}
	fn(o)
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			walkObjects(c, fn)
		}
	case *widget.Label, *widget.RichText, *widget.Button:
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			walkObjects(c, fn)
		}
	}
}

// overlayText is the text of every label and rich text in o.
func overlayText(o fyne.CanvasObject) string {
	var b strings.Builder
	walkObjects(o, func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			b.WriteString(v.Text + " ")
		case *widget.RichText:
			b.WriteString(v.String() + " ")
		}
	})
	return b.String()
}

// tapButton taps the button labelled text inside o.
func tapButton(t *testing.T, o fyne.CanvasObject, text string) {
	t.Helper()
	var found *widget.Button
	walkObjects(o, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok && b.Text == text {
			found = b
		}
	})
	if found == nil {
		t.Fatalf("no %q button", text)
	}
	test.Tap(found)
}

// TestAboutNamesModelVersions: with the shipped models loaded, About
// names the cardiac and USG model versions from their manifests.
func TestAboutNamesModelVersions(t *testing.T) {
	u, _, _ := newTestUI(t, true)
	c, g := realEngines(t)
	text := u.AboutText()
	for _, want := range []string{"Cardiac models (VHS, VLAS): " + c.ModelVersion(), "USG model (feline bloodwork): " + g.ModelVersion(), "synthetic data"} {
		if c.ModelVersion() == "" || g.ModelVersion() == "" || !strings.Contains(text, want) {
			t.Fatalf("About %q lacks %q", text, want)
		}
	}
}

// TestUnsavedWorkAsks: with edited landmarks on Review, quitting and
// changing the patient ask first; Back keeps the patient and the work,
// Discard clears Review and goes on. An unsaved capture asks too, and
// nothing asks once it is saved or for a file as measured.
func TestUnsavedWorkAsks(t *testing.T) {
	u, w, quits := newMenuTestUI(t, nil)
	truth, vhs := phantomTruth(t, "xraysim_1_640x480.png")
	show := func(captured bool) {
		res := &cardiac.Result{Width: 640, Height: 480, Code: cardiac.CodeHighConfidence, Landmarks: truth, ModelLandmarks: []cardiac.Landmarks{truth},
			VHS: &vhs, Confidence: cardiac.ConfidenceOptimal, LandmarksDetected: true, AxesPerpendicular: true}
		u.ShowMeasurement(&app.Measurement{Result: res, Image: phantomImage(t), ModelVersion: "m-1", Captured: captured}, "test image")
	}
	top := func(want string) fyne.CanvasObject {
		t.Helper()
		o := w.Canvas().Overlays().Top()
		if o == nil || !strings.Contains(overlayText(o), want) {
			t.Fatalf("no question with %q: %v", want, o)
		}
		return o
	}
	u.SetPatientID("Rex-1")
	show(false)
	r := u.review
	if q := u.QuitQuestion(); q != "" {
		t.Fatalf("a file as measured asks %q", q)
	}
	dragTo(r.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 6})
	w.press(t, quitShortcut)
	tapButton(t, top("unsaved work for patient Rex-1 (edited landmarks)"), "No")
	w.Canvas().Overlays().Remove(w.Canvas().Overlays().Top())
	if *quits != 0 {
		t.Fatal("quit with unsaved work")
	}
	u.SetPatientID("B")
	u.SetPatientID("Be") // typed on while the question is open: no second question
	if n := len(w.Canvas().Overlays().List()); n != 1 {
		t.Fatalf("%d questions open", n)
	}
	tapButton(t, top("To change the patient to B"), "Back")
	if u.PatientID() != "Rex-1" || r.m == nil || r.kind != app.MeasurementEdited {
		t.Fatalf("back: patient %q, measurement %v, kind %s", u.PatientID(), r.m != nil, r.kind)
	}
	u.SetPatientID("Bella")
	tapButton(t, top("edited landmarks"), "Discard")
	if u.PatientID() != "Bella" || r.m != nil || u.UnsavedWork() != "" {
		t.Fatalf("discard: patient %q, measurement %v", u.PatientID(), r.m != nil)
	}
	// An unsaved capture asks; once saved, nothing does.
	show(true)
	if q := u.QuitQuestion(); !strings.Contains(q, "capture session's result") {
		t.Fatalf("capture: %q", q)
	}
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	if q := u.QuitQuestion(); q != "" {
		t.Fatalf("saved capture asks %q", q)
	}
	w.press(t, quitShortcut)
	if *quits != 1 {
		t.Fatal("did not quit once the work was saved")
	}
}

// TestRemoveDialogNamesTheMeasurement: Remove... names the measurement
// it removes and gives the reason a field of a few lines; the reason
// typed there removes it.
func TestRemoveDialogNamesTheMeasurement(t *testing.T) {
	u, w, _ := newMenuTestUI(t, nil)
	u.SetPatientID("Rex-1")
	showPhantomResult(t, u)
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	e := u.patients.record.Cardiac[0]
	test.Tap(rowButton(t, u.patients.cardiac.Objects[0], "Remove..."))
	top := w.Canvas().Overlays().Top()
	want := fmt.Sprintf("the measurement of %s (VHS %.2f", e.Time.Local().Format("2006-01-02 15:04"), *e.VHS)
	if top == nil || !strings.Contains(overlayText(top), want) || !strings.Contains(overlayText(top), "Rex-1") {
		t.Fatalf("dialog %q lacks %q", overlayText(top), want)
	}
	var reason *widget.Entry
	walkObjects(top, func(o fyne.CanvasObject) {
		if en, ok := o.(*widget.Entry); ok && en.MultiLine {
			reason = en
		}
	})
	if reason == nil {
		t.Fatal("no reason field of several lines")
	}
	if reason.Size().Width < 300 || reason.Size().Height < 1.8*widget.NewEntry().MinSize().Height {
		t.Fatalf("reason field %v", reason.Size())
	}
	reason.SetText("entered for the wrong patient")
	tapButton(t, top, "Remove")
	if u.patients.record.Cardiac[0].Hidden == nil || u.patients.record.Cardiac[0].Hidden.Reason != "entered for the wrong patient" {
		t.Fatalf("not removed: %+v", u.patients.record.Cardiac[0])
	}
}
