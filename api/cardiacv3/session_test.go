package cardiacv3

import (
	"strings"
	"testing"

	"vetlens/engine/cardiac"
)

func TestNewFrameBody(t *testing.T) {
	vhs := 10.5
	cases := []struct {
		name    string
		out     FrameOutcome
		wantErr string
		check   func(*testing.T, *FrameBody)
	}{
		{name: "continue, no screen", out: FrameOutcome{Status: StatusContinue, FrameIndex: 2, FramesProcessed: 3, Reason: "0 of 3 good frames: no screen found"},
			check: func(t *testing.T, b *FrameBody) {
				if *b.ResultCode != cardiac.CodeNoLandmarks || *b.FramesProcessed != 3 || *b.GoodFrames != 0 || b.FrameResult.VHS != nil ||
					b.ModelVersion != "v9" || b.Reason == "" || b.Billing != nil {
					t.Fatalf("%+v", b)
				}
			}},
		{name: "continue with a measurement", out: FrameOutcome{Status: StatusContinue, GoodFrames: 1, FramesProcessed: 1,
			Result: &cardiac.Result{Code: cardiac.CodeHighConfidence, VHS: &vhs, LandmarksDetected: true, PopDetected: true, Spread: 0.05, Confidence: cardiac.ConfidenceOptimal}},
			check: func(t *testing.T, b *FrameBody) {
				if *b.ResultCode != cardiac.CodeHighConfidence || *b.FrameResult.VHS != vhs || !b.FrameResult.PopDetected || *b.GoodFrames != 1 {
					t.Fatalf("%+v %+v", b, b.FrameResult)
				}
			}},
		{name: "complete", out: FrameOutcome{Status: StatusComplete, FrameIndex: 4, Rectified: []byte("jpg"),
			Result: &cardiac.Result{Code: cardiac.CodeHighConfidence, VHS: &vhs, LandmarksDetected: true, PopDetected: true}},
			check: func(t *testing.T, b *FrameBody) {
				if b.Prediction == nil || b.RectifiedImage != "anBn" || b.FrameIndex != 4 || b.FrameResult != nil || b.Billing != nil {
					t.Fatalf("%+v", b)
				}
			}},
		{name: "failed", out: FrameOutcome{Status: StatusFailed, Error: "max_frames_exceeded"},
			check: func(t *testing.T, b *FrameBody) {
				if b.Error != "max_frames_exceeded" || b.Prediction != nil || b.Billing != nil {
					t.Fatalf("%+v", b)
				}
			}},
		{name: "complete without a result", out: FrameOutcome{Status: StatusComplete}, wantErr: "without a result"},
		{name: "unknown status", out: FrameOutcome{Status: "ready"}, wantErr: "unknown status"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewFrameBody("abc", tc.out, "v9", nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || b.SessionID != "abc" || b.SessionStatus != tc.out.Status {
				t.Fatalf("%+v %v", b, err)
			}
			tc.check(t, b)
		})
	}
}
