package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"reflect"
	"strings"
	"testing"
	"time"

	"vetlens/api"
	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/engine/imageproc"
	"vetlens/engine/usg"
)

// TestLocalServiceAnswersLikeTheAPI: the storage-less service of the
// command line gives the body PredictSingle gives (less billing and
// history) for every outcome, the USG engine's response, the same errors,
// and stores nothing.
func TestLocalServiceAnswersLikeTheAPI(t *testing.T) {
	ctx := context.Background()
	api0, _ := newTestService(t, t0)
	c := newCaller(t, api0, "clinic", TierPaygo)
	local, err := NewLocal(Deps{Cardiac: fakeCardiac{}, USG: fakeUSG{}}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []int{1, 2, 4, 5, 6} {
		t.Run(fmt.Sprintf("code %d", code), func(t *testing.T) {
			img := codeImage(t, code)
			want, err := api0.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{img}, Render: false})
			if err != nil {
				t.Fatal(err)
			}
			got, res, err := local.Cardiac.PredictLocal(ctx, img, cardiac.PredictOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if w := api.NewCardiacResponse(want.Result, want.ModelVersion); !reflect.DeepEqual(*got, w) || res.Code != cardiac.Code(code) {
				t.Fatalf("local %+v (code %d)\nAPI   %+v", *got, res.Code, w)
			}
		})
	}
	if _, _, err := local.Cardiac.PredictLocal(ctx, []byte("not an image"), cardiac.PredictOptions{}); KindOf(err) != KindInvalid {
		t.Errorf("bad image: %v, want KindInvalid", err)
	}
	resp, err := local.USG.PredictUSGLocal(ctx, &usg.Request{UUID: "cat-1"})
	if err != nil || resp.Result.ModelVersion != "u-1" {
		t.Errorf("USG: %+v %v", resp, err)
	}
	if _, err := local.USG.PredictUSGLocal(ctx, &usg.Request{UUID: "bad\x00id"}); KindOf(err) != KindInvalid {
		t.Errorf("USG with a control character in the uuid: %v, want KindInvalid", err)
	}
	// Nothing to store into: the storage use cases say so.
	if _, err := local.Patients.IDs(ctx, "", 10); !errors.Is(err, ErrNoStorage) {
		t.Errorf("Patients on a local service: %v, want ErrNoStorage", err)
	}
	if _, err := local.USG.PredictUSG(ctx, c, &usg.Request{}); err == nil {
		t.Error("a billed USG prediction succeeded without storage")
	}
	noEngines, err := NewLocal(Deps{}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := noEngines.Cardiac.PredictLocal(ctx, codeImage(t, 1), cardiac.PredictOptions{}); !errors.Is(err, ErrCardiacUnavailable) {
		t.Errorf("no cardiac engine: %v", err)
	}
	if _, err := noEngines.USG.PredictUSGLocal(ctx, &usg.Request{}); !errors.Is(err, ErrUSGUnavailable) {
		t.Errorf("no USG engine: %v", err)
	}
}

// TestNoRepos: every repository of a local service answers ErrNoStorage.
func TestNoRepos(t *testing.T) {
	ctx := context.Background()
	r := noRepos()
	if !r.Complete() {
		t.Fatal("incomplete")
	}
	calls := map[string]func() error{
		"keys create":  func() error { return r.Keys.Create(ctx, repo.Key{}) },
		"keys get":     func() error { _, err := r.Keys.Get(ctx, "p"); return err },
		"keys list":    func() error { _, err := r.Keys.List(ctx); return err },
		"keys revoke":  func() error { _, err := r.Keys.Revoke(ctx, "p", time.Time{}); return err },
		"customer get": func() error { _, err := r.Customers.Get(ctx, "c"); return err },
		"customer put": func() error { return r.Customers.Put(ctx, repo.Customer{}) },
		"bill": func() error {
			_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{}, nil)
			return err
		},
		"usage":   func() error { _, err := r.Ledger.MonthlyUsage(ctx, "c", "2026-01"); return err },
		"charges": func() error { _, _, err := r.Ledger.MonthlyCharges(ctx, "c", "2026-01"); return err },
		"events":  func() error { _, err := r.Ledger.Events(ctx); return err },
		"history add": func() error {
			_, err := r.History.Add(ctx, "c", "u", repo.HistoryEntry{}, nil)
			return err
		},
		"history image": func() error { _, err := r.History.Image(ctx, "c", "u", 1); return err },
		"history hide": func() error {
			_, err := r.History.Hide(ctx, "c", "u", 1, repo.Hidden{}, repo.AuditEvent{})
			return err
		},
		"usg hide": func() error {
			_, err := r.USGLog.Hide(ctx, 1, repo.Hidden{}, repo.AuditEvent{})
			return err
		},
		"patient get":     func() error { _, err := r.Patients.Get(ctx, "u"); return err },
		"patient put":     func() error { return r.Patients.Put(ctx, repo.Patient{}, repo.AuditEvent{}) },
		"patient search":  func() error { _, err := r.Patients.Search(ctx, "", 1); return err },
		"audit append":    func() error { _, err := r.Audit.Append(ctx, repo.AuditEvent{}); return err },
		"audit patient":   func() error { _, err := r.Audit.ListPatient(ctx, "u"); return err },
		"history list":    func() error { _, err := r.History.List(ctx, "c", "u"); return err },
		"history patient": func() error { _, err := r.History.ListPatient(ctx, "u"); return err },
		"usg append":      func() error { _, err := r.USGLog.Append(ctx, repo.USGLogEntry{}); return err },
		"usg list":        func() error { _, err := r.USGLog.List(ctx); return err },
		"usg patient":     func() error { _, err := r.USGLog.ListPatient(ctx, "u"); return err },
		"patients":        func() error { _, err := r.Patients.PatientIDs(ctx, "", 1); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrNoStorage) {
			t.Errorf("%s: %v, want ErrNoStorage", name, err)
		}
	}
}

// scripted is a screen-aware PoP pipeline whose Measure answers err, or
// code with pop_detected set (and no image for code 7, a rectified one
// otherwise).
type scripted struct {
	spyPipeline
	code  cardiac.Code
	err   error
	calls int
}

func (p *scripted) Measure(ctx context.Context, img []byte, o cardiac.PredictOptions) (*cardiac.Result, image.Image, error) {
	p.calls++
	if p.err != nil {
		return nil, nil, p.err
	}
	r := syntheticResult(p.code)
	r.PopDetected = true
	if p.code == cardiac.CodePoPFailed {
		return r, nil, nil
	}
	return r, image.NewGray(image.Rect(0, 0, 60, 60)), nil
}

// TestPredictScreenAware: with a screen-aware pipeline the single
// prediction goes through it (pop_detected reaches the body, code 7 when
// the correction failed), after the same header checks as any image;
// the pipeline's bad-image errors are 400, others internal.
func TestPredictScreenAware(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		img      []byte
		code     cardiac.Code
		err      error
		wantKind Kind
		wantErr  bool
		calls    int
	}{
		{"corrected screen photo", nil, cardiac.CodeHighConfidence, nil, 0, false, 1},
		{"correction failed", nil, cardiac.CodePoPFailed, nil, 0, false, 1},
		{"not an image: refused before the pipeline", []byte("GIF89a...."), 0, nil, KindInvalid, true, 0},
		{"pipeline finds the image corrupt", nil, 0, fmt.Errorf("decode: %w", imageproc.ErrCorrupt), KindInvalid, true, 1},
		{"pipeline fails", nil, 0, errors.New("opencv exploded"), KindInternal, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			p := &scripted{code: tc.code, err: tc.err}
			p.svc = s
			rewire(t, s, func(d *Deps, _ *Config) { d.PoP, d.PoPMeasurer = p, p })
			c := newCaller(t, s, "clinic", TierPaygo)
			img := tc.img
			if img == nil {
				img = codeImage(t, 1)
			}
			body, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{img}})
			if p.calls != tc.calls {
				t.Errorf("pipeline called %d times, want %d", p.calls, tc.calls)
			}
			if tc.wantErr {
				if err == nil || KindOf(err) != tc.wantKind {
					t.Fatalf("error %v (kind %d), want kind %d", err, KindOf(err), tc.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if body.Result.Code != tc.code || !body.Result.PopDetected {
				t.Fatalf("body code %d pop %v", body.Result.Code, body.Result.PopDetected)
			}
			if body.Billing.Billable != ValidCode(tc.code) {
				t.Errorf("billing %+v for code %d", body.Billing, tc.code)
			}
		})
	}
	// Waiting for a cardiac slot ends with the context.
	s, _ := newTestService(t, t0)
	p := &scripted{code: 1}
	p.svc = s
	rewire(t, s, func(d *Deps, _ *Config) { d.PoP, d.PoPMeasurer = p, p })
	taken, err := s.Cardiac.cardiacSlots.Acquire(ctx, "busy") // the one slot is taken
	if err != nil {
		t.Fatal(err)
	}
	defer taken()
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.Cardiac.PredictSingle(cctx, newCaller(t, s, "clinic", TierPaygo), &CardiacRequest{Images: [][]byte{codeImage(t, 1)}}); !errors.Is(err, context.DeadlineExceeded) || p.calls != 0 {
		t.Errorf("busy slot: %v after %d calls, want the deadline", err, p.calls)
	}
}

// sessionScript is a PoP pipeline of one session, sess-1, owned by the
// customer who started it last, whose frames follow a script: each frame
// answers the next outcome or error. (The registry's own rules, limits
// and sweeping are tested on capture.Manager: app/capture/owner_test.go.)
type sessionScript struct {
	spyPipeline
	outs  []FrameOutcome
	errs  []error
	n     int
	owner string
}

func (p *sessionScript) StartSession(ctx context.Context, owner SessionOwner, maxOpen int) (Session, error) {
	p.owner = owner.Customer
	return Session{ID: "sess-1", Config: SessionConfig{MaxFrames: 20, SessionTTLSeconds: 300, GoodFramesNeeded: 3}}, nil
}

func (p *sessionScript) OwnsSession(id, customer string) bool {
	return id == "sess-1" && customer == p.owner
}

func (p *sessionScript) Frame(ctx context.Context, customer, id string, frame []byte) (FrameOutcome, error) {
	i := p.n
	p.n++
	if i < len(p.errs) && p.errs[i] != nil {
		return FrameOutcome{}, p.errs[i]
	}
	return p.outs[i], nil
}

// TestSessionFrameErrors: the session errors map to the API's kinds,
// another customer's session is not found, and a finished session frees
// its owner's slot.
func TestSessionFrameErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want Kind
	}{
		{"unknown to the pipeline", ErrSessionNotFound, KindNotFound},
		{"already finished", ErrSessionClosed, KindConflict},
		{"corrupt frame", imageproc.ErrCorrupt, KindInvalid},
		{"pipeline failure", errors.New("boom"), KindInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			p := &sessionScript{errs: []error{tc.err}}
			p.svc = s
			rewire(t, s, func(d *Deps, _ *Config) { d.PoP = p })
			c := newCaller(t, s, "clinic", TierPaygo)
			st, err := s.Sessions.StartSession(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Sessions.SessionFrame(ctx, c, st.SessionID, codeImage(t, 1), ""); KindOf(err) != tc.want {
				t.Fatalf("%v (kind %d), want kind %d", err, KindOf(err), tc.want)
			}
		})
	}
	s, _ := newTestService(t, t0)
	p := &sessionScript{outs: []FrameOutcome{{Status: StatusContinue}}}
	p.svc = s
	rewire(t, s, func(d *Deps, _ *Config) { d.PoP = p })
	a, b := newCaller(t, s, "clinic A", TierPaygo), newCaller(t, s, "clinic B", TierPaygo)
	st, err := s.Sessions.StartSession(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sessions.SessionFrame(ctx, b, st.SessionID, codeImage(t, 1), ""); KindOf(err) != KindNotFound || p.n != 0 {
		t.Errorf("another customer's session: %v (pipeline called %d times)", err, p.n)
	}
	for name, call := range map[string]func() error{
		"no session id": func() error { _, err := s.Sessions.SessionFrame(ctx, a, "", codeImage(t, 1), ""); return err },
		"not an image":  func() error { _, err := s.Sessions.SessionFrame(ctx, a, st.SessionID, []byte("nope"), ""); return err },
	} {
		if err := call(); KindOf(err) != KindInvalid {
			t.Errorf("%s: %v, want KindInvalid", name, err)
		}
	}
	rewire(t, s, func(d *Deps, _ *Config) { d.PoP = nil })
	if _, err := s.Sessions.SessionFrame(ctx, a, st.SessionID, codeImage(t, 1), ""); !errors.Is(err, ErrPoPUnavailable) {
		t.Errorf("no pipeline: %v", err)
	}
}

// TestDesktopSession: a desktop capture session reports progress, and on
// completion holds the measurement on the rectified image, metered at the
// session rate for the patient but not yet in the history.
func TestDesktopSession(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, t0)
	if _, err := s.Sessions.StartDesktopSession(ctx, "rex"); !errors.Is(err, ErrPoPUnavailable) {
		t.Fatalf("no pipeline: %v", err)
	}
	final := syntheticResult(cardiac.CodeHighConfidence)
	p := &sessionScript{outs: []FrameOutcome{
		{Status: StatusContinue, FrameIndex: 0, FramesProcessed: 1, GoodFrames: 1, Reason: "1 of 3"},
		{Status: StatusComplete, FrameIndex: 1, FramesProcessed: 2, GoodFrames: 3, Result: final, Rectified: codeImage(t, 1)},
	}}
	p.svc = s
	rewire(t, s, func(d *Deps, _ *Config) { d.PoP = p })
	// The patient field is parsed where it is read: a bad id is refused
	// there, and the id is trimmed there.
	if _, err := ParsePatientID("bad\nid"); KindOf(err) != KindInvalid {
		t.Fatalf("bad patient id: %v", err)
	}
	id, err := ParsePatientID(strings.TrimSpace("  rex  "))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Sessions.StartDesktopSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID() != "sess-1" || d.Config.GoodFramesNeeded != 3 || d.Config.MaxFrames != 20 {
		t.Fatalf("session %s config %+v", d.ID(), d.Config)
	}
	out, err := d.Frame(ctx, codeImage(t, 1))
	if err != nil || out.Status != StatusContinue || d.Result() != nil {
		t.Fatalf("first frame: %+v %v, result %v", out, err, d.Result())
	}
	out, err = d.Frame(ctx, codeImage(t, 1))
	if err != nil || out.Status != StatusComplete {
		t.Fatalf("second frame: %+v %v", out, err)
	}
	m := d.Result()
	if m == nil || m.PatientID != "rex" || m.Result != final || m.Image.Bounds() != image.Rect(0, 0, 64, 64) || !m.Billing.Billable || m.Billing.CallType != CallSession {
		t.Fatalf("measurement %+v", m)
	}
	rec, err := s.Patients.Patient(ctx, "rex")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Cardiac) != 0 {
		t.Errorf("a session result reached the history before it was saved: %+v", rec.Cardiac)
	}
}

// TestDesktopSessionFromFiles: in a session from image files, a frame
// the pipeline's PlainFile rule calls a radiograph file is measured as a
// file (MeasureDesktop) and completes the session at once; any other frame
// (a photo of a screen, grey or not) goes to the capture session; a
// session not from files never asks.
func TestDesktopSessionFromFiles(t *testing.T) {
	ctx := context.Background()
	file, screen := codeImage(t, 1), codeImage(t, 2)
	for _, tc := range []struct {
		name           string
		files          bool
		frame          []byte
		wantAsFile     bool
		wantSessionRun int
	}{
		{"radiograph file from a folder", true, file, true, 0},
		{"screen photo from a folder", true, screen, false, 1},
		{"radiograph file from a camera", false, file, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestService(t, t0)
			p := &sessionScript{outs: []FrameOutcome{{Status: StatusContinue, FramesProcessed: 1}}}
			p.svc = s
			p.plain = func(b []byte) bool { return bytes.Equal(b, file) }
			rewire(t, s, func(d *Deps, _ *Config) { d.PoP = p })
			d, err := s.Sessions.StartDesktopSession(ctx, "rex")
			if err != nil {
				t.Fatal(err)
			}
			if tc.files {
				d.FromFiles()
			}
			out, err := d.Frame(ctx, tc.frame)
			if err != nil {
				t.Fatal(err)
			}
			if d.MeasuredAsFile() != tc.wantAsFile || p.n != tc.wantSessionRun {
				t.Fatalf("measured as file %v, session frames %d; want %v, %d", d.MeasuredAsFile(), p.n, tc.wantAsFile, tc.wantSessionRun)
			}
			if tc.wantAsFile && (out.Status != StatusComplete || d.Result() == nil || d.Result().Result == nil) {
				t.Fatalf("file frame: %+v, result %+v", out, d.Result())
			}
			if !tc.wantAsFile && out.Status != StatusContinue {
				t.Fatalf("session frame: %+v", out)
			}
		})
	}
}

// TestLocalSession: `vetlens capture`'s session runs the API's use case
// on a local service: the start body, the outcomes in order, the API's
// errors (a frame after the end is KindConflict), nothing billed.
func TestLocalSession(t *testing.T) {
	ctx := context.Background()
	p := &sessionScript{outs: []FrameOutcome{
		{Status: StatusContinue, FramesProcessed: 1, GoodFrames: 1},
		{Status: StatusComplete, FramesProcessed: 2, GoodFrames: 3, Result: syntheticResult(cardiac.CodeHighConfidence), Rectified: codeImage(t, 1)},
	}, errs: []error{nil, nil, ErrSessionClosed}}
	s, err := NewLocal(Deps{Cardiac: fakeCardiac{}, PoP: p}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p.svc = s
	l, err := s.Sessions.StartLocalSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := l.Start; st.SessionID != "sess-1" || st.ModelVersion != "fake-1" || st.SessionConfig.MaxFrames != 20 {
		t.Fatalf("start body %+v", st)
	}
	for i, want := range []string{StatusContinue, StatusComplete} {
		out, err := l.Frame(ctx, codeImage(t, 1))
		if err != nil || out.Status != want {
			t.Fatalf("frame %d: %s %v, want %s", i, out.Status, err, want)
		}
	}
	if _, err := l.Frame(ctx, codeImage(t, 1)); KindOf(err) != KindConflict {
		t.Fatalf("frame after the end: %v, want KindConflict", err)
	}
	if _, err := l.Frame(ctx, []byte("no image")); KindOf(err) != KindInvalid {
		t.Fatalf("a frame that is no image: %v, want KindInvalid", err)
	}
	noPoP, _ := NewLocal(Deps{}, DefaultConfig())
	if _, err := noPoP.Sessions.StartLocalSession(ctx); !errors.Is(err, ErrPoPUnavailable) {
		t.Fatalf("no pipeline: %v", err)
	}
}
