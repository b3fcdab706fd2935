package camera

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/app/live"
	"vetlens/internal/testmodels"
)

// realPipeline is the application's PoP pipeline over the shipped models:
// engine/pop's geometry, a capture session manager and the cardiac
// ensemble.
func realPipeline(t testing.TB) app.PoP {
	t.Helper()
	eng := testmodels.Cardiac(t)
	mgr := capture.NewManager(capture.DefaultConfig(), eng, capture.PoP{}, time.Now)
	return capture.NewService(mgr, eng, capture.PoP{})
}

// localSession starts a capture session on pipeline through app's session
// use case, as `vetlens capture` runs it (app.NewLocal: nothing billed).
func localSession(t testing.TB, ctx context.Context, pipeline app.PoP) *app.LocalSession {
	t.Helper()
	svc, err := app.NewLocal(app.Deps{Cardiac: testmodels.Cardiac(t), PoP: pipeline}, app.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.StartLocalSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// The shipped test video, played at its native 15 fps as a camera would
// deliver it, completes a capture session through the real pipeline with
// the preview and outline running beside it.
func TestVideoSessionCompletes(t *testing.T) {
	pipeline := realPipeline(t)
	base := runtime.NumGoroutine()
	src, err := Open(testVideo)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sink := localSession(t, ctx, pipeline)
	var previews, outlined atomic.Int64
	var progress []app.FrameOutcome
	r := live.NewRunner(src, live.Config{
		Sink:     sink,
		Outliner: live.PoPOutliner(pipeline),
		OnPreview: func(p live.Preview) {
			previews.Add(1)
			if p.Outline.OK {
				outlined.Add(1)
			}
		},
		OnProgress: func(o app.FrameOutcome) { progress = append(progress, o) },
	})
	start := time.Now()
	out, err := r.Run(ctx)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v after %d frames (last %+v)", err, len(progress), out)
	}
	if out.Status != app.StatusComplete || out.Result == nil || out.Result.VHS == nil || len(out.Rectified) == 0 || len(out.Rendered) == 0 {
		t.Fatalf("outcome %+v", out)
	}
	t.Logf("complete after %d frames sent (%d processed) in %v: VHS %.2f from frame %d; %d previews, %d with an outline",
		len(progress), out.FramesProcessed, elapsed.Round(time.Millisecond), *out.Result.VHS, out.FrameIndex, previews.Load(), outlined.Load())
	// The video's simulated radiograph has VHS 8.63 (SYNTHETIC truth,
	// testdata/README.md); within 1 v, as the product's screen-photo figures.
	if v := *out.Result.VHS; v < 7.63 || v > 9.63 {
		t.Fatalf("VHS %.2f, truth 8.63", v)
	}
	if previews.Load() == 0 || outlined.Load() == 0 {
		t.Fatalf("%d previews, %d with an outline", previews.Load(), outlined.Load())
	}
	for runtime.NumGoroutine() > base && time.Since(start) < elapsed+2*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Fatalf("%d goroutines after Run, %d before", n, base)
	}
}
