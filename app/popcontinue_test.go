package app

import (
	"context"
	"testing"

	"vetlens/api/cardiacv3"
	"vetlens/engine/cardiac"
)

// TestContinueFramesCarryNoMeasurementOnTheAPI: a PoP session's continue
// frames are not billed, so through the API (SessionFrame) their
// frame_result has no VHS or VLAS whatever the frame measured; the code,
// spread, confidence, landmarks_detected and pop_detected stay. The
// desktop's in-process session still gets the frame's live values. (Issue
// 46: 14 of 16 frames of different radiographs gave a free VHS each.)
func TestContinueFramesCarryNoMeasurementOnTheAPI(t *testing.T) {
	ctx := context.Background()
	for _, code := range []cardiac.Code{cardiac.CodeHighConfidence, cardiac.CodeModerate, cardiac.CodeNoVLAS, cardiac.CodeNoLandmarks} {
		t.Run(code.Description(), func(t *testing.T) {
			r := syntheticResult(code)
			r.PopDetected = true
			out := FrameOutcome{Status: StatusContinue, FramesProcessed: 1, GoodFrames: 1, Reason: "1 of 3", Result: r}
			s, _ := newTestService(t, t0)
			p := &sessionScript{outs: []FrameOutcome{out, out}}
			p.svc = s
			rewire(t, s, func(d *Deps, _ *Config) { d.PoP = p })
			c := newCaller(t, s, "clinic A", TierPaygo)
			st, err := s.Sessions.StartSession(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.Sessions.SessionFrame(ctx, c, st.SessionID, codeImage(t, 1), "rex")
			if err != nil {
				t.Fatal(err)
			}
			if a.Billing != nil {
				t.Errorf("API frame billed: %+v", a.Billing)
			}
			body, err := cardiacv3.NewFrameBody(a.SessionID, cardiacv3.FrameOutcome(a.Outcome), a.ModelVersion, nil)
			if err != nil {
				t.Fatal(err)
			}
			fr := body.FrameResult
			if fr == nil || fr.VHS != nil || fr.VLAS != nil {
				t.Fatalf("API frame_result %+v: want vhs and vlas null", fr)
			}
			if *body.ResultCode != code || fr.Spread == nil || *fr.Spread != r.Spread || fr.ModelConfidence != string(r.Confidence) ||
				fr.LandmarksDetected != r.LandmarksDetected || !fr.PopDetected || body.Billing != nil {
				t.Errorf("API frame: code %v, frame_result %+v, billing %v", *body.ResultCode, fr, body.Billing)
			}
			if code.HasVHS() && (r.VHS == nil || *r.VHS == 0) {
				t.Fatalf("the pipeline's own result lost its VHS: %+v", r)
			}
			d, err := s.Sessions.StartDesktopSession(ctx, "rex")
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Frame(ctx, codeImage(t, 1))
			if err != nil {
				t.Fatal(err)
			}
			if code.HasVHS() != (got.Result != nil && got.Result.VHS != nil) {
				t.Errorf("desktop frame: %+v, want its live VHS (code %d)", got.Result, code)
			}
		})
	}
}
