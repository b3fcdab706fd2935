package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
	"vetlens/internal/testmodels"
	"vetlens/platform/store"
)

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
	test.NewTempApp(t)
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	deps := app.Deps{Store: st}
	if withModels {
		c, u := realEngines(t)
		deps.Cardiac, deps.USG = c, u
	}
	svc, err := app.New(deps, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	u := New(svc, Options{})
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
	if err := u.OpenFile(filepath.Join("..", "engine", "cardiac", "testdata", "phantoms", "phantom_1_640x480.png")); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	if !r.view.hasLm || r.view.img == nil {
		t.Fatalf("no landmarks shown; status %q", r.status.Text)
	}
	if !strings.HasPrefix(r.vhs.Text, "VHS: ") || strings.Contains(r.vhs.Text, "not measured") || !strings.Contains(r.vhs.Text, "normal 8.5-10.5") {
		t.Fatalf("VHS label %q", r.vhs.Text)
	}
	if !strings.Contains(r.vlas.Text, "normal < 2.5") || r.reading.Text == "" || !strings.Contains(r.conf.Text, "Model confidence") {
		t.Fatalf("labels %q %q %q", r.vlas.Text, r.reading.Text, r.conf.Text)
	}
	objs := test.WidgetRenderer(r.view).Objects()
	if len(objs) != 1+4+7+cardiac.NumLandmarks {
		t.Fatalf("%d overlay objects", len(objs))
	}
	for i, o := range objs {
		if !o.Visible() {
			t.Fatalf("overlay object %d (%T) hidden", i, o)
		}
	}
	if r.edited.Text != "" {
		t.Fatalf("fresh result marked edited: %q", r.edited.Text)
	}
	before := r.vhs.Text
	// Drag heart_bottom 40 units further down: the long axis grows.
	start := r.view.WidgetPos(cardiac.HeartBottom)
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 20)}, Dragged: fyne.NewDelta(0, 20)})
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 40)}, Dragged: fyne.NewDelta(0, 20)})
	r.view.DragEnd()
	if r.vhs.Text == before {
		t.Fatalf("VHS unchanged after drag: %q", r.vhs.Text)
	}
	if !strings.HasPrefix(r.edited.Text, "EDITED") {
		t.Fatalf("edited mark %q", r.edited.Text)
	}
	// Through the window's canvas, as the driver delivers it: the event's
	// position is where the pointer is now, Dragged the move since the
	// last event. Move heart_right 30 units left: the short axis grows.
	afterFirst := r.vhs.Text
	abs := fyne.CurrentApp().Driver().AbsolutePositionForObject(r.view).Add(r.view.WidgetPos(cardiac.HeartRight))
	test.Drag(w.Canvas(), abs.AddXY(-30, 0), -30, 0)
	if r.vhs.Text == afterFirst {
		t.Fatalf("VHS unchanged after a canvas drag: %q", r.vhs.Text)
	}
	g := cardiac.Measure(r.view.Landmarks())
	if want := valueLine("VHS", &[]float64{float64(int(g.VHS*100+0.5)) / 100}[0], "normal 8.5-10.5"); r.vhs.Text != want {
		t.Fatalf("VHS label %q, recomputed %q", r.vhs.Text, want)
	}
}

func TestReviewOpenBadFile(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	bad := filepath.Join(t.TempDir(), "x.jpg")
	if err := os.WriteFile(bad, []byte("not an image"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(t.TempDir(), "missing.png")} {
		if err := u.OpenFile(p); err == nil {
			t.Errorf("OpenFile(%s) succeeded", p)
		}
	}
}

func TestBloodwork(t *testing.T) {
	u, _, done := newTestUI(t, true)
	b := u.blood
	type tc struct {
		name        string
		vals        [usg.NumFeatures]string
		wantErr     string
		wantCorrect bool
	}
	for _, c := range []tc{
		{name: "missing value", vals: [usg.NumFeatures]string{"30", "", "12", "2000", "120"}, wantErr: "required"},
		{name: "not a number", vals: [usg.NumFeatures]string{"30", "abc", "12", "2000", "120"}, wantErr: "not a number"},
		{name: "out of range", vals: [usg.NumFeatures]string{"30", "1.8", "12", "2000", "9000"}, wantErr: "out_of_range"},
		{name: "plain", vals: [usg.NumFeatures]string{"30", "1.8", "12", "2000", "120"}},
		{name: "creatinine in umol/L corrected", vals: [usg.NumFeatures]string{"30", "160", "12", "2000", "120"}, wantCorrect: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i, e := range b.entries {
				e.SetText(c.vals[i])
			}
			test.Tap(b.predict)
			if c.wantErr != "" {
				if !strings.Contains(b.errLabel.Text, c.wantErr) {
					t.Fatalf("error label %q, want %q", b.errLabel.Text, c.wantErr)
				}
				return
			}
			wait(t, done)
			if b.errLabel.Text != "" {
				t.Fatalf("error %q", b.errLabel.Text)
			}
			if got := b.corrections.Text != ""; got != c.wantCorrect {
				t.Fatalf("corrections %q", b.corrections.Text)
			}
			if !strings.Contains(b.prob.Text, "Probability of impaired") || !strings.Contains(b.tier.Text, "Risk tier") ||
				!strings.Contains(b.conformal.Text, "Conformal set") || len(b.shap.Objects) != usg.NumFeatures {
				t.Fatalf("result %q %q %q, %d SHAP bars", b.prob.Text, b.tier.Text, b.conformal.Text, len(b.shap.Objects))
			}
		})
	}
	if err := validateNumber("1e3"); err != nil {
		t.Fatal(err)
	}
}

func TestKeysCreateRevoke(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	k := u.keys
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
	keys, err := u.svc.ListKeys(t.Context())
	if err != nil || len(keys) != 1 || keys[0].Status != "active" || len(k.list.Objects) != 1 {
		t.Fatalf("keys %v %v, %d rows", keys, err, len(k.list.Objects))
	}
	if _, err := u.svc.Authenticate(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	k.revoke(keys[0].Prefix)
	if keys, _ = u.svc.ListKeys(t.Context()); keys[0].Status != "revoked" || !strings.Contains(k.status.Text, "Revoked") {
		t.Fatalf("after revoke: %v, %q", keys, k.status.Text)
	}
	if _, err := u.svc.Authenticate(t.Context(), key); err == nil {
		t.Fatal("revoked key still authenticates")
	}
	k.customer.SetText(" ")
	test.Tap(k.create)
	if !strings.Contains(k.status.Text, "Could not create") {
		t.Fatalf("status %q", k.status.Text)
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
