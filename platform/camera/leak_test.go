//go:build matprofile

package camera

import (
	"context"
	"errors"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocv.io/x/gocv"

	"vetlens/app"
	"vetlens/app/live"
)

// limited ends a source after n frames.
type limited struct {
	live.Source
	n    int
	mu   sync.Mutex
	read int
}

func (l *limited) Next(ctx context.Context) (live.Frame, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.read >= l.n {
		return live.Frame{}, io.EOF
	}
	f, err := l.Source.Next(ctx)
	if err == nil {
		l.read++
	}
	return f, err
}

// Run with -tags matprofile (make test does): 300 frames of the looping
// test video go through the preview, the outline and capture sessions on
// the real pipeline, a new session each time one finishes; afterwards
// every Mat is closed and every goroutine has exited.
func TestLiveCaptureLeaks(t *testing.T) {
	const frames = 300
	pipeline := realPipeline(t)
	mats, goroutines := gocv.MatProfile.Count(), runtime.NumGoroutine()

	cam, err := Open(testVideo, Loop(), FPS(60))
	if err != nil {
		t.Fatal(err)
	}
	src := &limited{Source: cam, n: frames}
	var previews atomic.Int64
	sessions := map[string]int{}
	for {
		sink := localSession(t, context.Background(), pipeline)
		r := live.NewRunner(src, live.Config{
			Sink:       sink,
			Outliner:   live.PoPOutliner(pipeline),
			PreviewFPS: 60,
			OnPreview:  func(p live.Preview) { previews.Add(1) },
		})
		out, err := r.Run(context.Background())
		if errors.Is(err, live.ErrSourceEnded) {
			break
		}
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		sessions[out.Status]++
	}
	if err := cam.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames: %d previews, sessions %v", src.read, previews.Load(), sessions)
	if sessions[app.StatusComplete] == 0 || previews.Load() == 0 {
		t.Fatalf("sessions %v, %d previews: the pipeline did not run", sessions, previews.Load())
	}

	// Goroutines that returned may still be unwinding: wait for the count
	// to come back, for a bounded time.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before:\n%s", n, goroutines, buf[:runtime.Stack(buf, true)])
	}
	if n := gocv.MatProfile.Count() - mats; n != 0 {
		t.Fatalf("%d Mats leaked", n)
	}
}

// TestFolderCorruptFilesNoMatLeak: a folder source skips files that pass
// the header check but do not decode, and closes the Mat pop.DecodeFrame
// returns with each error. Run with -tags matprofile.
func TestFolderCorruptFilesNoMatLeak(t *testing.T) {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, "a.png"), 40, 40, color.RGBA{255, 0, 0, 255})
	for _, name := range []string{"b.jpeg", "c.png", "d.jpg"} {
		writeFile(t, filepath.Join(dir, name), "\xff\xd8\xff broken")
	}
	// A PNG whose header passes and whose data is cut short.
	full, err := os.ReadFile(filepath.Join(dir, "a.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "e.png"), full[:60], 0o644); err != nil {
		t.Fatal(err)
	}
	before := gocv.MatProfile.Count()
	s, err := Open(dir, NoPacing())
	if err != nil {
		t.Fatal(err)
	}
	frames, err := readAll(t, s, -1)
	if !errors.Is(err, io.EOF) || len(frames) != 1 {
		t.Fatalf("%d frames, %v; want the one good file", len(frames), err)
	}
	if len(s.Skipped()) != 4 {
		t.Fatalf("skipped %v, want 4 files", s.Skipped())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := gocv.MatProfile.Count() - before; n != 0 {
		t.Fatalf("%d Mats leaked", n)
	}
}
