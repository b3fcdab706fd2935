package cardiac

import (
	"context"
	"errors"
	"image"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vetlens/engine/infer"
	"vetlens/engine/manifest"
)

// scriptedSession answers with fixed outputs after a delay, counting the
// runs in flight and, where runs is set, every run; err, where set, is
// returned instead.
type scriptedSession struct {
	name     string
	delay    time.Duration
	out      []infer.Tensor
	err      error
	inFlight *atomic.Int32
	runs     *atomic.Int32
}

func (s scriptedSession) Name() string { return s.name }
func (s scriptedSession) Run(ctx context.Context, _ ...infer.Tensor) ([]infer.Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	if s.runs != nil {
		s.runs.Add(1)
	}
	time.Sleep(s.delay)
	return s.out, s.err
}
func (s scriptedSession) Close() error { return nil }

// TestValidityBesideLandmarks: the validity classifier and the landmark
// members run side by side, and whatever the classifier says, no member
// is still running when Predict returns. A rejected image comes back
// without landmarks, and a classifier error comes back as the error; a
// member's error counts only for an accepted image.
func TestValidityBesideLandmarks(t *testing.T) {
	cases := []struct {
		name        string
		p           float32
		validityErr error
		memberErr   error
		wantErr     string
		wantCode    Code
		wantMembers int
	}{
		{name: "rejected", p: 0.01, wantCode: CodeRejected},
		{name: "rejected while a member fails", p: 0.01, memberErr: errors.New("member broke"), wantCode: CodeRejected},
		{name: "classifier error", validityErr: errors.New("classifier broke"), wantErr: "classifier broke"},
		{name: "accepted", p: 0.97, wantMembers: 5},
		{name: "accepted, a member fails", p: 0.97, memberErr: errors.New("member broke"), wantErr: "member broke"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var inFlight, memberRuns atomic.Int32
			e := loadScripted(t, func(role string, i int) scriptedSession {
				s := scriptedSession{inFlight: &inFlight, delay: 15 * time.Millisecond}
				if role == RoleValidity {
					s.delay = 30 * time.Millisecond // the members start before it answers
					s.out, s.err = []infer.Tensor{{Shape: []int64{1, 1}, Data: []float32{tc.p}}}, tc.validityErr
					return s
				}
				s.runs, s.out = &memberRuns, scriptedLandmarks()
				if i == 3 {
					s.err = tc.memberErr
				}
				return s
			})
			res, err := e.Predict(t.Context(), flatGray(image.Rect(0, 0, 256, 256), 128), PredictOptions{NoLevel: true})
			if n := inFlight.Load(); n != 0 {
				t.Errorf("%d runs still in flight when Predict returned", n)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCode == CodeRejected {
				if !res.Rejected || res.Code != CodeRejected || len(res.ModelLandmarks) != 0 {
					t.Errorf("rejected: code %d, rejected %v, %d members' landmarks", res.Code, res.Rejected, len(res.ModelLandmarks))
				}
				return
			}
			if res.Rejected || len(res.ModelLandmarks) != tc.wantMembers || int(memberRuns.Load()) != tc.wantMembers {
				t.Errorf("accepted: rejected %v, %d members' landmarks, %d member runs; want %d",
					res.Rejected, len(res.ModelLandmarks), memberRuns.Load(), tc.wantMembers)
			}
		})
	}
}

// scriptedLandmarks is a landmark model's output: seven points of a
// plausible lateral thorax in letterbox units over S, and their peaks.
func scriptedLandmarks() []infer.Tensor {
	pts := []float32{0.45, 0.45, 0.5, 0.75, 0.35, 0.62, 0.62, 0.55, 0.55, 0.45, 0.3, 0.3, 0.75, 0.3}
	peaks := []float32{0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9}
	return []infer.Tensor{{Shape: []int64{1, 7, 2}, Data: pts}, {Shape: []int64{1, 7}, Data: peaks}}
}

// loadScripted loads an engine whose validity model and five landmark
// members are the sessions session gives (i: the member's number, 0 for
// the validity model).
func loadScripted(t *testing.T, session func(role string, i int) scriptedSession) *Engine {
	t.Helper()
	dir := t.TempDir()
	entry := func(file, role string, outs ...string) manifest.Model {
		return manifest.Model{File: file, Role: role, InputSize: []int{1, 64, 64}, Inputs: []string{"image"}, Outputs: outs, Version: "t"}
	}
	models := []manifest.Model{entry("v.onnx", RoleValidity, "p_radiograph")}
	models[0].InputSize = []int{3, 64, 64}
	for i := 1; i <= 5; i++ {
		models = append(models, entry("l"+string(rune('0'+i))+".onnx", RoleLandmark, "landmarks", "peak"))
	}
	writeModelDir(t, dir, models, map[string]manifest.Family{Family: {ModelVersion: "t"}})
	open := func(path string, _, _ []string) (infer.Session, error) {
		name := filepath.Base(path)
		role, i := RoleLandmark, int(name[1]-'0')
		if name == "v.onnx" {
			role, i = RoleValidity, 0
		}
		s := session(role, i)
		s.name = name
		return s, nil
	}
	e, err := LoadWith(dir, open, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
