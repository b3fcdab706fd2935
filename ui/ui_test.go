package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/font/sfnt"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/engine/cardiac"
	"vetlens/engine/testmodels"
	"vetlens/engine/usg"
	"vetlens/platform/store"
)

// exactLine is the Review tab's exact values as its Details list them
// ("Exact values: VHS 10.84, VLAS 2.13 ...").
func exactLine(r *review) string {
	line, _, _ := strings.Cut(r.details.Text, "\n")
	return line
}

// reportText is the text of a PDF report as pdftotext (poppler-utils,
// make deps) reads it, runs of white space as one space.
func reportText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("report %s: %v, %.8q", path, err, b)
	}
	out, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext (install poppler-utils: make deps): %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// realEngines gives the shipped models, loaded once per test binary,
// skipping while no cardiac landmark model is listed in the manifest.
func realEngines(t *testing.T) (*cardiac.Engine, *usg.Engine) {
	t.Helper()
	return testmodels.Cardiac(t), testmodels.USG(t)
}

// newTestUI builds the UI on a fresh store, with the real engines when
// withModels, in a test window; done receives after each background
// prediction is shown.
func newTestUI(t *testing.T, withModels bool) (*UI, fyne.Window, chan struct{}) {
	t.Helper()
	return newTestUIWith(t, withModels, nil, Options{})
}

// newTestUIWith is newTestUI with the PoP pipeline pop (nil: none; it is
// also the screen-aware predictor and measurer) and options opts;
// withModels or a pipeline loads the real engines.
func newTestUIWith(t *testing.T, withModels bool, pop func(*cardiac.Engine) *capture.Service, opts Options) (*UI, fyne.Window, chan struct{}) {
	t.Helper()
	test.NewTempApp(t)
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	deps := app.Deps{Repos: st.Repos()}
	if withModels || pop != nil {
		c, u := realEngines(t)
		deps.Cardiac, deps.USG = c, u
		if pop != nil {
			p := pop(c)
			deps.PoP, deps.PoPMeasurer = p, p
		}
	}
	svc, err := app.New(deps, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	u := New(svc, opts)
	done := make(chan struct{}, 4)
	u.workDone = func() { done <- struct{}{} }
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(1200, 800))
	return u, w, done
}

func wait(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("background prediction did not finish")
	}
}

func TestReviewOpenAndDrag(t *testing.T) {
	u, w, done := newTestUI(t, true)
	r := u.review
	u.SelectTab("Review")
	if err := u.OpenFile(phantom1); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	if !r.view.Complete() || r.view.img == nil {
		t.Fatalf("no landmarks shown; status %q", r.status.Text)
	}
	if !strings.HasPrefix(r.vhs.Text, "Heart size: ") || strings.Contains(r.vhs.Text, "not measured") || !strings.Contains(r.vhs.Text, "; dog range 8.7-10.7)") {
		t.Fatalf("VHS label %q", r.vhs.Text)
	}
	if !strings.Contains(r.vlas.Text, "reference below 2.5") || r.reading.Text == "" || !strings.Contains(r.details.Text, "Model confidence") ||
		!strings.Contains(r.rangeText.Text, "Buchanan & Bücheler 1995") {
		t.Fatalf("labels %q %q %q %q", r.vlas.Text, r.reading.Text, r.details.Text, r.rangeText.Text)
	}
	objs := test.WidgetRenderer(r.view).Objects()
	if len(objs) != 1+4+7+3*cardiac.NumLandmarks {
		t.Fatalf("%d overlay objects", len(objs))
	}
	for i, o := range objs {
		if !o.Visible() {
			t.Fatalf("overlay object %d (%T) hidden", i, o)
		}
	}
	if r.kindText.Text != "" {
		t.Fatalf("fresh result marked edited: %q", r.kindText.Text)
	}
	before := exactLine(r)
	// Drag heart_bottom 40 units further down: the long axis grows.
	start := r.view.WidgetPos(cardiac.HeartBottom)
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 20)}, Dragged: fyne.NewDelta(0, 20)})
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 40)}, Dragged: fyne.NewDelta(0, 20)})
	r.view.DragEnd()
	if exactLine(r) == before {
		t.Fatalf("VHS unchanged after drag: %q", exactLine(r))
	}
	if !strings.HasPrefix(r.kindText.Text, "EDITED") {
		t.Fatalf("edited mark %q", r.kindText.Text)
	}
	// Through the window's canvas, as the driver delivers it: the event's
	// position is where the pointer is now, Dragged the move since the
	// last event. Move heart_right 30 units left: the short axis grows.
	afterFirst := exactLine(r)
	abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(r.view).Add(r.view.WidgetPos(cardiac.HeartRight))
	test.Drag(w.Canvas(), abs.AddXY(-30, 0), -30, 0)
	if exactLine(r) == afterFirst {
		t.Fatalf("VHS unchanged after a canvas drag: %q", exactLine(r))
	}
	if want := app.EditedValues(r.view.Landmarks()); !strings.HasPrefix(exactLine(r), "Exact values: VHS "+fmtValue(want.VHS)+",") ||
		r.vhs.Text != app.HeartSize(want.VHS, app.ReferenceFor(app.SpeciesDog, "")).Line {
		t.Fatalf("VHS labels %q %q, recomputed %v", r.vhs.Text, exactLine(r), *want.VHS)
	}

	// Save needs a patient; then the edited values and the model's are kept.
	if err := u.SaveReview(); err == nil || !strings.Contains(err.Error(), "patient ID is required") {
		t.Fatalf("save without a patient: %v", err)
	}
	u.SetPatientID("Rex-42")
	test.Tap(r.save)
	if !strings.Contains(r.status.Text, "Saved to the history of Rex-42") || !strings.Contains(r.status.Text, "edited values") {
		t.Fatalf("status after save %q", r.status.Text)
	}
	rec, err := u.svc.Patients.Patient(t.Context(), "Rex-42")
	if err != nil || len(rec.Cardiac) != 1 || rec.Cardiac[0].Kind != app.MeasurementEdited || !rec.Cardiac[0].Edited || rec.Cardiac[0].ModelVHS == nil || *rec.Cardiac[0].VHS == *rec.Cardiac[0].ModelVHS {
		t.Fatalf("saved record %+v %v", rec, err)
	}
	if got := fmt.Sprintf("Exact values: VHS %.2f,", *rec.Cardiac[0].VHS); !strings.HasPrefix(exactLine(r), got) {
		t.Fatalf("saved VHS %s, shown %q", got, exactLine(r))
	}
	// One save per change: Save is off now, and a second save (Ctrl+S,
	// a script) stores nothing.
	if !r.save.Disabled() {
		t.Fatal("Save still enabled after saving")
	}
	if err := u.SaveReview(); err != nil || !strings.Contains(r.status.Text, "nothing new to save") {
		t.Fatalf("second save: %v, status %q", err, r.status.Text)
	}
	if rec, err := u.svc.Patients.Patient(t.Context(), "Rex-42"); err != nil || len(rec.Cardiac) != 1 {
		t.Fatalf("second save stored a duplicate: %+v %v", rec, err)
	}

	// The report is a PDF with the patient and the edited value.
	out := filepath.Join(t.TempDir(), "report.pdf")
	if err := u.ExportReport(out); err != nil {
		t.Fatal(err)
	}
	if text := reportText(t, out); !strings.Contains(text, "Rex-42") ||
		!strings.Contains(text, fmt.Sprintf("VHS %.1f;", *rec.Cardiac[0].VHS)) || !strings.Contains(text, "Model landmarks corrected by clinician") {
		t.Fatalf("report text: %s", text)
	}
	if err := u.ExportReport(filepath.Join(t.TempDir(), "missing-dir", "r.pdf")); err == nil {
		t.Fatal("export into a missing directory succeeded")
	}

	// The Patients tab finds the patient and plots the value.
	test.Type(u.patients.query, "rex")
	if len(u.patients.matches.Objects) != 1 {
		t.Fatalf("%d matches", len(u.patients.matches.Objects))
	}
	test.Tap(u.patients.matches.Objects[0].(*widget.Button))
	pts := u.patients.vhsPlot.Points()
	if len(pts) != 1 || pts[0].Value != *rec.Cardiac[0].VHS || !pts[0].Edited || len(u.patients.vlasPlot.Points()) != 1 {
		t.Fatalf("plotted %+v", pts)
	}
	if !strings.Contains(u.patients.status.Text, "1 cardiac measurements") {
		t.Fatalf("patients status %q", u.patients.status.Text)
	}
	// This desktop's measurement was metered as the desktop customer.
	u.server.refresh()
	if !strings.Contains(u.server.desktop.Text, ": 1 measurements and screenings counted") {
		t.Fatalf("desktop usage %q", u.server.desktop.Text)
	}
}

// TestReviewOpenBadFile runs with the engines loaded, so a refusal is
// about the file, not about missing models: a missing file is refused at
// once; a file that is not an image is measured in the background and the
// review says why it failed, showing no measurement.
func TestReviewOpenBadFile(t *testing.T) {
	u, _, done := newTestUI(t, true)
	u.SetPatientID("rex")
	missing := filepath.Join(t.TempDir(), "missing.png")
	if err := u.OpenFile(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenFile(missing): %v, want a not-exist error", err)
	}
	bad := filepath.Join(t.TempDir(), "x.jpg")
	if err := os.WriteFile(bad, []byte("not an image"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := u.OpenFile(bad); err != nil {
		t.Fatalf("OpenFile(bad) with the engines loaded: %v", err)
	}
	wait(t, done)
	st := u.review.status.Text
	if !strings.Contains(st, "Measurement failed") || !strings.Contains(st, "not a usable JPEG, PNG or DICOM") || strings.Contains(st, "not loaded") {
		t.Errorf("review status %q, want the bad image named as the cause", st)
	}
	if u.ReviewMeasurement() != nil {
		t.Error("a measurement is shown for a file that is not an image")
	}
}

func TestBloodwork(t *testing.T) {
	u, _, done := newTestUI(t, true)
	b := u.blood
	type tc struct {
		name         string
		vals         [usg.NumFeatures]string
		creat, lymph string
		wantErr      string
		wantCorrect  string
		wantEntered  string
	}
	for _, c := range []tc{
		{name: "missing value", vals: [usg.NumFeatures]string{"30", "", "12", "2000", "120"}, wantErr: "required"},
		{name: "not a number", vals: [usg.NumFeatures]string{"30", "abc", "12", "2000", "120"}, wantErr: "not a number"},
		{name: "out of range", vals: [usg.NumFeatures]string{"30", "1.8", "12", "2000", "9000"}, wantErr: "outside the plausible range"},
		{name: "plain", vals: [usg.NumFeatures]string{"30", "1.8", "12", "2000", "120"}},
		{name: "creatinine typed in µmol/L with mg/dL selected is corrected", vals: [usg.NumFeatures]string{"30", "160", "12", "2000", "120"},
			wantCorrect: "Creatinine 160 mg/dL is implausibly high for mg/dL and looks like µmol/L: 1.81 mg/dL used"},
		{name: "µmol/L and 10³/µL selected", vals: [usg.NumFeatures]string{"30", "160", "12", "2.0", "120"}, creat: app.UnitUmolL, lymph: app.UnitThousandPerU},
	} {
		t.Run(c.name, func(t *testing.T) {
			u.SetBloodworkUnits(app.UnitMgDL, app.UnitPerUL)
			if c.creat != "" {
				u.SetBloodworkUnits(c.creat, c.lymph)
			}
			u.FillBloodwork(c.vals)
			// The correction shows as soon as the values are typed.
			if c.wantErr == "" && !strings.Contains(b.errLabel.Text, c.wantCorrect) {
				t.Fatalf("before submit: %q, want %q", b.errLabel.Text, c.wantCorrect)
			}
			// Enter in a field screens.
			b.entries[usg.NumFeatures-1].TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
			if c.wantErr != "" {
				if !strings.Contains(b.errLabel.Text, c.wantErr) || b.result.Text != "" || len(b.shap.Objects) != 0 {
					t.Fatalf("error label %q (want %q), result left %q", b.errLabel.Text, c.wantErr, b.result.Text)
				}
				return
			}
			wait(t, done)
			if b.errLabel.Text != "" {
				t.Fatalf("error %q", b.errLabel.Text)
			}
			var corr []string
			for _, o := range b.corrections.Objects {
				corr = append(corr, o.(*fyne.Container).Objects[0].(*widget.Label).Text)
			}
			if got := strings.Join(corr, " "); c.wantCorrect == "" && got != "" || !strings.Contains(got, c.wantCorrect) {
				t.Fatalf("corrections %q, want %q", got, c.wantCorrect)
			}
			if !strings.HasPrefix(b.result.Text, "Urine concentrating ability: ") || !strings.HasPrefix(b.tier.Text, "Risk: ") ||
				!strings.Contains(b.details.Text, "Conformal set") || len(b.shap.Objects) != usg.NumFeatures {
				t.Fatalf("result %q %q %q, %d SHAP bars", b.result.Text, b.tier.Text, b.details.Text, len(b.shap.Objects))
			}
			// No jargon outside Details.
			for _, jargon := range []string{"log-odds", "conformal", "ensemble", "moderate_high", "low_risk", "high_risk"} {
				if strings.Contains(strings.ToLower(b.result.Text+b.tier.Text), jargon) {
					t.Fatalf("%q in the plain result %q %q", jargon, b.result.Text, b.tier.Text)
				}
			}
		})
	}
	// Undo of the correction takes 160 as mg/dL: refused, and no result
	// stays on screen.
	u.SetBloodworkUnits(app.UnitMgDL, app.UnitPerUL)
	u.SubmitBloodwork([usg.NumFeatures]string{"30", "160", "12", "2000", "120"})
	wait(t, done)
	if len(b.corrections.Objects) != 1 || b.result.Text == "" {
		t.Fatalf("corrected screening: %d corrections, result %q", len(b.corrections.Objects), b.result.Text)
	}
	test.Tap(b.corrections.Objects[0].(*fyne.Container).Objects[1].(*widget.Button)) // refused at once
	if !strings.Contains(b.errLabel.Text, "creatinine 160 mg/dL is above the plausible range") || b.result.Text != "" {
		t.Fatalf("after undo: %q, result %q", b.errLabel.Text, b.result.Text)
	}
	// Every glyph on the tab is in the bundled font.
	checkGlyphs(t, append([]string{b.errLabel.Text, app.UnitUmolL, app.UnitThousandPerU, app.UnitPerUL}, corrTexts(b)...)...)

	// The screening goes to the patient's history once, with the values
	// as entered; pressing Screen again logs nothing.
	u.SetPatientID("Tom-3")
	u.SetBloodworkUnits(app.UnitUmolL, app.UnitPerUL)
	u.SubmitBloodwork([usg.NumFeatures]string{"30", "160", "12", "2000", "120"})
	wait(t, done)
	test.Tap(b.predict) // same values, result on screen: nothing screened
	b.lastShown = ""    // as after a restart of the form: the service sees the repeat
	test.Tap(b.predict)
	wait(t, done)
	if !strings.Contains(b.errLabel.Text, "nothing new was logged") {
		t.Fatalf("repeat: %q", b.errLabel.Text)
	}
	rec, err := u.svc.Patients.Patient(t.Context(), "Tom-3")
	if err != nil || len(rec.USG) != 1 || len(rec.USG[0].Entered) != usg.NumFeatures || rec.USG[0].Entered[1].Unit != app.UnitUmolL || rec.USG[0].Entered[1].Value != 160 {
		t.Fatalf("USG history %+v %v", rec, err)
	}
	u.OpenPatient("Tom-3")
	if got := rowText(u.patients.usg.Objects[0]); !strings.Contains(got, "Creatinine 160 µmol/L") {
		t.Fatalf("history line %q", got)
	}
	checkGlyphs(t, rowText(u.patients.usg.Objects[0]))
	if err := u.RemoveScreening("Tom-3", rec.USG[0].Seq, "entered for the wrong cat"); err != nil {
		t.Fatal(err)
	}
	if got := rowText(u.patients.usg.Objects[0]); !strings.HasPrefix(got, "REMOVED ") || !strings.Contains(got, "entered for the wrong cat") {
		t.Fatalf("removed screening row %q", got)
	}

	// A dog is refused.
	u.SetPatientID("Rex-9")
	u.bar.species.SetSelected("dog")
	u.SetBloodworkUnits(app.UnitMgDL, app.UnitPerUL)
	u.SubmitBloodwork([usg.NumFeatures]string{"30", "1.8", "12", "2000", "120"})
	if !strings.Contains(b.errLabel.Text, "cats only") || b.result.Text != "" {
		t.Fatalf("dog: %q, result %q", b.errLabel.Text, b.result.Text)
	}
}

// rowText is the text of a history row (a label, with buttons beside).
func rowText(o fyne.CanvasObject) string {
	if l, ok := o.(*widget.Label); ok {
		return l.Text
	}
	return o.(*fyne.Container).Objects[0].(*widget.Label).Text
}

// corrTexts are the correction lines on the Bloodwork tab.
func corrTexts(b *bloodwork) []string {
	var out []string
	for _, o := range b.corrections.Objects {
		out = append(out, o.(*fyne.Container).Objects[0].(*widget.Label).Text)
	}
	return out
}

// checkGlyphs fails when a character of texts is missing from the theme's
// text font (it would render as a box or U+FFFD).
func checkGlyphs(t *testing.T, texts ...string) {
	t.Helper()
	f, err := sfnt.Parse(theme.DefaultTheme().Font(fyne.TextStyle{}).Content())
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	for _, s := range texts {
		for _, r := range s {
			if r == '\n' || r == ' ' {
				continue
			}
			if g, err := f.GlyphIndex(&buf, r); err != nil || g == 0 {
				t.Errorf("%q (U+%04X) in %q is not in the bundled font", r, r, s)
			}
		}
	}
}

func TestDropFiles(t *testing.T) {
	u, _, done := newTestUI(t, true)
	u.Dropped([]fyne.URI{storage.NewFileURI(phantom1)})
	wait(t, done)
	if u.tabs.Selected().Text != "Review" || u.ReviewMeasurement() == nil {
		t.Fatalf("dropped image not measured: tab %q", u.tabs.Selected().Text)
	}
	u.Dropped([]fyne.URI{storage.NewFileURI("/videos/exam.avi")})
	if u.tabs.Selected().Text != "Capture" || u.capture.source.Text != "/videos/exam.avi" {
		t.Fatalf("dropped video: tab %q source %q", u.tabs.Selected().Text, u.capture.source.Text)
	}
	u.Dropped(nil) // nothing happens
}

func TestKeysCreateRevoke(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	k := u.server.keys
	k.customer.SetText("Happy Paws")
	test.Tap(k.create)
	key := k.newKey.Text
	if !strings.HasPrefix(key, "vl_") || k.copyKey.Disabled() {
		t.Fatalf("key %q, status %q", key, k.status.Text)
	}
	test.Tap(k.copyKey)
	if got := fyne.CurrentApp().Clipboard().Content(); got != key {
		t.Fatalf("clipboard %q", got)
	}
	keys, err := u.svc.Accounts.ListKeys(t.Context())
	if err != nil || len(keys) != 1 || keys[0].Status != "active" || len(k.list.Objects) != 1 {
		t.Fatalf("keys %v %v, %d rows", keys, err, len(k.list.Objects))
	}
	if _, err := u.svc.Accounts.Authenticate(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	k.revoke(keys[0].Prefix)
	if keys, _ = u.svc.Accounts.ListKeys(t.Context()); keys[0].Status != "revoked" || !strings.Contains(k.status.Text, "Revoked") {
		t.Fatalf("after revoke: %v, %q", keys, k.status.Text)
	}
	if _, err := u.svc.Accounts.Authenticate(t.Context(), key); err == nil {
		t.Fatal("revoked key still authenticates")
	}
	k.customer.SetText(" ")
	test.Tap(k.create)
	if !strings.Contains(k.status.Text, "Could not create") {
		t.Fatalf("status %q", k.status.Text)
	}
}

// fakeListener is a test double of the in-process API listener; like
// the real one it reports a wildcard address bound dual-stack as [::].
type fakeListener struct {
	running bool
	addr    string
	fail    error
	clients int
	last    time.Time
}

func (l *fakeListener) Start(addr string) error {
	if l.fail != nil {
		return l.fail
	}
	l.running, l.addr = true, addr
	return nil
}
func (l *fakeListener) Stop() error { l.running = false; return nil }
func (l *fakeListener) Status() ListenerStatus {
	bound := l.addr
	if h, p, err := net.SplitHostPort(l.addr); err == nil && h == "0.0.0.0" {
		bound = net.JoinHostPort("::", p)
	}
	if !l.running {
		bound = ""
	}
	return ListenerStatus{Running: l.running, Addr: bound, Requested: l.addr, Fingerprint: "AB:CD", PublicKeyPin: "sha256//PIN=", LANClients: l.clients, LastLANActivity: l.last}
}

// newBareService is a service on a fresh store without engines, in a
// fresh test app.
func newBareService(t *testing.T) *app.Service {
	t.Helper()
	test.NewTempApp(t)
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := app.New(app.Deps{Repos: st.Repos()}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestServerListenerAndSettings(t *testing.T) {
	svc := newBareService(t)
	l := &fakeListener{}
	prefs := fyne.CurrentApp().Preferences()
	u := New(svc, Options{Listener: l, Prefs: prefs})
	test.NewTempWindow(t, u.Content())
	s := u.server
	s.interfaceIPs = func() []net.IP {
		return []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("192.168.7.9"), net.ParseIP("fe80::1"), net.ParseIP("2001:db8::9"), net.ParseIP("::1")}
	}
	if s.port.Text != "8443" || s.scope.Selected != ScopeOff || len(u.ListenerURLs()) != 0 || s.example.Text != "" {
		t.Fatalf("initial port %q, scope %q, URLs %q", s.port.Text, s.scope.Selected, u.ListenerURLs())
	}
	s.port.SetText("not a port")
	s.scope.SetSelected(ScopeLocal)
	if l.running || s.scope.Selected != ScopeOff || !strings.Contains(s.listenState.Text, "port") {
		t.Fatalf("bad port started the listener: %q", s.listenState.Text)
	}
	for _, c := range []struct {
		scope, addr, state string
		urls               []string
	}{
		{ScopeLocal, "127.0.0.1:9443", "this computer only (bound to 127.0.0.1:9443)", []string{"https://127.0.0.1:9443"}},
		{ScopeLAN, "0.0.0.0:9443", "clinic network (bound to [::]:9443)", []string{"https://192.168.7.9:9443", "https://[2001:db8::9]:9443"}},
	} {
		s.port.SetText("9443")
		s.scope.SetSelected(c.scope)
		if !l.running || l.addr != c.addr || s.scope.Selected != c.scope || s.fingerprint.Text != "AB:CD" || !strings.Contains(s.listenState.Text, c.state) {
			t.Fatalf("%s: listener %+v, scope %q, state %q", c.scope, l, s.scope.Selected, s.listenState.Text)
		}
		if got := u.ListenerURLs(); strings.Join(got, " ") != strings.Join(c.urls, " ") || len(s.urls.Objects) != len(c.urls) {
			t.Fatalf("%s: URLs %q (%d rows), want %q", c.scope, got, len(s.urls.Objects), c.urls)
		}
		want := "curl --insecure --pinnedpubkey 'sha256//PIN=' -H 'x-api-key: YOUR_API_KEY' " + c.urls[0] + "/v3/health"
		if s.example.Text != want || s.copyExample.Disabled() {
			t.Fatalf("%s: example %q, want %q", c.scope, s.example.Text, want)
		}
		test.Tap(s.copyExample)
		if got := fyne.CurrentApp().Clipboard().Content(); got != want {
			t.Fatalf("clipboard %q", got)
		}
	}
	// The tab shows what the listener reports, whatever was asked for:
	// a listener started elsewhere (--addr) on one LAN address.
	l.addr = "192.168.7.9:8443"
	s.refresh()
	if s.scope.Selected != ScopeLAN || s.port.Text != "8443" || strings.Join(u.ListenerURLs(), " ") != "https://192.168.7.9:8443" {
		t.Fatalf("specific address: scope %q, port %q, URLs %q", s.scope.Selected, s.port.Text, u.ListenerURLs())
	}
	s.scope.SetSelected(ScopeOff)
	if l.running || s.scope.Selected != ScopeOff || len(u.ListenerURLs()) != 0 || !strings.Contains(s.listenState.Text, "Not serving") {
		t.Fatalf("after stop: %+v, %q", l, s.listenState.Text)
	}
	l.fail = fmt.Errorf("address already in use")
	s.scope.SetSelected(ScopeLAN)
	if s.scope.Selected != ScopeOff || !strings.Contains(s.listenState.Text, "already in use") {
		t.Fatalf("failed start: scope %q, %q", s.scope.Selected, s.listenState.Text)
	}
	// Stopped, the port field keeps the port it would listen on.
	l.addr, l.running, l.fail = "0.0.0.0:7443", false, nil
	s.refresh()
	if s.port.Text != "7443" || s.scope.Selected != ScopeOff {
		t.Fatalf("stopped: port %q, scope %q", s.port.Text, s.scope.Selected)
	}
	// A new window reads the saved data directory back.
	s.dataDir.SetText("/srv/vetlens")
	test.Tap(s.saveDir)
	u2 := New(svc, Options{Listener: &fakeListener{}, Prefs: prefs})
	if u2.server.dataDir.Text != "/srv/vetlens" {
		t.Fatalf("reloaded settings %q", u2.server.dataDir.Text)
	}
}

// newTestPlot is a VHS plot in a test window width wide.
func newTestPlot(t *testing.T, width float32) *TrendPlot {
	t.Helper()
	test.NewTempApp(t)
	p := NewTrendPlot("VHS", 8.5, 10.5)
	test.NewTempWindow(t, p).Resize(fyne.NewSize(width, 240))
	return p
}

func TestTrendPlot(t *testing.T) {
	p := newTestPlot(t, 400)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.SetPoints([]TrendPoint{{Time: t0.Add(48 * time.Hour), Value: 11.5}, {Time: t0, Value: 9, Edited: true}, {Time: t0.Add(24 * time.Hour), Value: 10}})
	pts := p.Points()
	if len(pts) != 3 || !pts[0].Time.Equal(t0) || pts[2].Value != 11.5 {
		t.Fatalf("points not in time order: %+v", pts)
	}
	lo, hi := p.valueRange()
	if lo >= 8.5 || hi <= 11.5 {
		t.Fatalf("range %v-%v does not hold the band and the points", lo, hi)
	}
	r := test.WidgetRenderer(p).(*plotRenderer)
	if len(r.lines) != 2 || len(r.dots) != 3 || r.empty.Visible() {
		t.Fatalf("%d lines, %d dots", len(r.lines), len(r.dots))
	}
	// Higher values are drawn higher; the band lies between its bounds.
	if !(r.dots[2].Position().Y < r.dots[1].Position().Y && r.dots[1].Position().Y < r.dots[0].Position().Y) {
		t.Fatalf("dot heights %v %v %v", r.dots[0].Position().Y, r.dots[1].Position().Y, r.dots[2].Position().Y)
	}
	if r.band.Size().Height <= 0 {
		t.Fatal("empty band")
	}
	p.SetPoints(nil)
	if !r.empty.Visible() || len(r.dots) != 0 {
		t.Fatal("empty plot shows points")
	}
}

func TestDateTicks(t *testing.T) {
	utc := time.UTC
	d := func(y int, m time.Month, day, h int) time.Time { return time.Date(y, m, day, h, 0, 0, 0, utc) }
	for _, c := range []struct {
		name     string
		t0, t1   time.Time
		max      int
		want     []string
		wantTick time.Time // the first tick
	}{
		{"three days", d(2026, 1, 1, 9), d(2026, 1, 3, 17), 8, []string{"2026-01-02", "2026-01-03"}, d(2026, 1, 2, 0)},
		{"a week, daily", d(2026, 1, 1, 0), d(2026, 1, 7, 0), 8, []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05", "2026-01-06", "2026-01-07"}, d(2026, 1, 1, 0)},
		{"a week, room for 4", d(2026, 1, 1, 0), d(2026, 1, 7, 0), 4, []string{"2026-01-01", "2026-01-03", "2026-01-05", "2026-01-07"}, d(2026, 1, 1, 0)},
		{"a year", d(2025, 3, 15, 0), d(2026, 3, 1, 0), 5, []string{"2025-04", "2025-07", "2025-10", "2026-01"}, d(2025, 4, 1, 0)},
		{"one day", d(2026, 1, 1, 8), d(2026, 1, 1, 20), 6, []string{"01-01 09:00", "01-01 12:00", "01-01 15:00", "01-01 18:00"}, d(2026, 1, 1, 9)},
		{"one point", d(2026, 5, 5, 5), d(2026, 5, 5, 5), 6, []string{"2026-05-05"}, d(2026, 5, 5, 5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ticks, labels := DateTicks(c.t0, c.t1, c.max, utc)
			if strings.Join(labels, " ") != strings.Join(c.want, " ") || len(ticks) != len(labels) || !ticks[0].Equal(c.wantTick) {
				t.Fatalf("ticks %v labels %q, want %q from %v", ticks, labels, c.want, c.wantTick)
			}
			for i, tk := range ticks {
				if tk.Before(c.t0) || tk.After(c.t1) || i > 0 && !tk.After(ticks[i-1]) {
					t.Fatalf("tick %v outside %v-%v or out of order", tk, c.t0, c.t1)
				}
			}
		})
	}
}

// TestTrendPlotAxes: a plot of many dated measurements gets dated ticks
// between the first and last date, no two of its labels overlap, and
// crowded value labels are left out rather than drawn over each other.
func TestTrendPlotAxes(t *testing.T) {
	p := newTestPlot(t, 420)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.Local)
	var pts []TrendPoint
	for i := range 30 { // a month of daily rechecks, values close together
		pts = append(pts, TrendPoint{Time: t0.AddDate(0, 0, i), Value: 10 + 0.01*float64(i%3)})
	}
	p.SetPoints(pts)
	ticks, labels := p.DateTicks()
	if len(ticks) < 3 {
		t.Fatalf("only %d date ticks (%q) across a month", len(ticks), labels)
	}
	for i, tk := range ticks {
		if tk.Before(pts[0].Time) || tk.After(pts[len(pts)-1].Time) || labels[i] != tk.Format("2006-01-02") {
			t.Fatalf("tick %v %q", tk, labels[i])
		}
	}
	r := test.WidgetRenderer(p).(*plotRenderer)
	var texts []*canvas.Text
	for _, o := range r.Objects() {
		if tx, ok := o.(*canvas.Text); ok && tx.Visible() && tx.Text != "" && tx != r.title && tx != r.empty {
			texts = append(texts, tx)
		}
	}
	shown := 0
	for _, v := range r.values {
		if v.Visible() {
			shown++
		}
	}
	if shown == 0 || shown == len(pts) {
		t.Fatalf("%d of %d value labels shown: crowded labels are not thinned", shown, len(pts))
	}
	for i, a := range texts {
		for _, b := range texts[i+1:] {
			ba := box{a.Position().X, a.Position().Y, a.MinSize().Width, a.MinSize().Height}
			bb := box{b.Position().X, b.Position().Y, b.MinSize().Width, b.MinSize().Height}
			if ba.overlaps(bb) {
				t.Fatalf("labels %q at %v and %q at %v overlap", a.Text, a.Position(), b.Text, b.Position())
			}
		}
	}
}

// TestPatientsPanelKeepsWidth: with long measurement lines on the right,
// the Patients tab's search box keeps a readable width in a normal and in
// a narrow window.
func TestPatientsPanelKeepsWidth(t *testing.T) {
	u, w, _ := newTestUI(t, false)
	u.SelectTab("Patients")
	// A history line as wide as a long record's.
	u.patients.cardiac.Objects = []fyne.CanvasObject{widget.NewLabel(strings.Repeat("2026-01-01 10:00   VHS 10.00   VLAS 2.00   ", 6))}
	u.patients.cardiac.Refresh()
	for _, width := range []float32{1200, 900} {
		w.Resize(fyne.NewSize(width, 800))
		q := u.patients.query
		ph := fyne.MeasureText(q.PlaceHolder, theme.TextSize(), fyne.TextStyle{}).Width
		if q.Size().Width < ph || q.Size().Width < patientsListWidth-20 {
			t.Fatalf("window %v: search box %v wide, its placeholder needs %v", width, q.Size().Width, ph)
		}
	}
}

// TestNewKeyIsReadable: a created API key is shown in the text colour,
// not greyed out as disabled, and can be selected.
func TestNewKeyIsReadable(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	u.SelectTab("Server")
	k := u.server.keys
	k.customer.SetText("Happy Paws")
	test.Tap(k.create)
	key := k.newKey.Text
	var shown *canvas.Text
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *canvas.Text:
			if v.Text == key {
				shown = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(v).Objects() {
				walk(c)
			}
		}
	}
	walk(k.newKey)
	if shown == nil {
		t.Fatalf("key %q not drawn", key)
	}
	fg := theme.Color(theme.ColorNameForeground)
	if shown.Color != fg {
		t.Errorf("key drawn in %v, not the text colour %v", shown.Color, fg)
	}
	if !k.newKey.Selectable {
		t.Error("the key cannot be selected")
	}
}
