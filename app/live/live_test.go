package live

// Every test here runs in a synctest bubble: time.Now, time.Sleep, timers
// and context deadlines there read the bubble's fake clock, which moves
// only when every goroutine of the test is blocked. The fakes' delays and
// the rates asserted below are therefore exact, whatever the machine's
// speed or load, and no test measures wall-clock time.

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"vetlens/app"
	"vetlens/internal/clock"
)

// fakeSource yields n frames (n < 0: without end) whose JPEG is "f<index>",
// one every delay, then end (io.EOF when nil); ended, when set, is closed
// when it first answers its end, and hold, when set, must close before the
// second frame.
type fakeSource struct {
	n     int
	delay time.Duration
	end   error
	ended chan struct{}
	hold  chan struct{}

	mu   sync.Mutex
	read int
	once sync.Once
}

func (s *fakeSource) Next(ctx context.Context) (Frame, error) {
	s.mu.Lock()
	i := s.read
	s.mu.Unlock()
	if s.n >= 0 && i >= s.n {
		if s.ended != nil {
			s.once.Do(func() { close(s.ended) })
		}
		if s.end != nil {
			return Frame{}, s.end
		}
		return Frame{}, io.EOF
	}
	if s.hold != nil && i == 1 {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		}
	}
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return Frame{}, ctx.Err()
		case <-t.C:
		}
	}
	s.mu.Lock()
	s.read++
	s.mu.Unlock()
	return Frame{Image: image.NewRGBA(image.Rect(0, 0, 4, 4)), JPEG: []byte("f" + strconv.Itoa(i)), Index: i, Time: time.Now()}, nil
}

func (s *fakeSource) Close() error { return nil }

func (s *fakeSource) frames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read
}

// fakeSink completes when it has seen `complete` frames (0: never), fails
// after `fail` frames, or answers err on frame `errAt` (1-based). Each call
// takes delay; the first closes started and waits for gate to close, when
// they are set.
type fakeSink struct {
	complete, fail, errAt int
	delay                 time.Duration
	started, gate         chan struct{}

	mu   sync.Mutex
	got  []string
	busy bool
}

func (s *fakeSink) Frame(ctx context.Context, jpeg []byte) (app.FrameOutcome, error) {
	s.mu.Lock()
	if s.busy {
		s.mu.Unlock()
		return app.FrameOutcome{}, errors.New("called while busy")
	}
	s.busy = true
	s.got = append(s.got, string(jpeg))
	n := len(s.got)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}()
	if s.started != nil && n == 1 {
		close(s.started)
	}
	if s.gate != nil && n == 1 {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return app.FrameOutcome{}, ctx.Err()
		}
	}
	time.Sleep(s.delay)
	out := app.FrameOutcome{Status: app.StatusContinue, FrameIndex: n - 1, FramesProcessed: n, GoodFrames: n}
	switch {
	case n == s.errAt:
		return app.FrameOutcome{}, errors.New("pipeline broke")
	case n == s.complete:
		out.Status = app.StatusComplete
	case n == s.fail:
		out.Status, out.Error = app.StatusFailed, app.ErrMaxFrames
	}
	return out, nil
}

func (s *fakeSink) frames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// settle checks that every goroutine Run started has exited: once the
// bubble's other goroutines are all blocked (synctest.Wait), the count is
// back to base, or a goroutine was left behind. It waits for no deadline.
func settle(t *testing.T, base int) {
	t.Helper()
	synctest.Wait()
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before Run:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

func TestRunOutcomes(t *testing.T) {
	cases := []struct {
		name       string
		src        *fakeSource
		sink       *fakeSink
		timeout    time.Duration
		wantStatus string
		wantErr    error  // errors.Is
		wantErrMsg string // substring
		wantLast   string // the last frame the sink saw ("" unchecked)
	}{
		{name: "completes", src: &fakeSource{n: -1, delay: time.Millisecond}, sink: &fakeSink{complete: 3},
			wantStatus: app.StatusComplete},
		{name: "fails", src: &fakeSource{n: -1, delay: time.Millisecond}, sink: &fakeSink{fail: 4},
			wantStatus: app.StatusFailed},
		{name: "source ends first; the last frame is still sent", src: &fakeSource{n: 5, delay: time.Millisecond},
			sink: &fakeSink{delay: 20 * time.Millisecond}, wantStatus: app.StatusContinue, wantErr: ErrSourceEnded, wantLast: "f4"},
		{name: "source ends first, matches io.EOF", src: &fakeSource{n: 2}, sink: &fakeSink{},
			wantStatus: app.StatusContinue, wantErr: io.EOF, wantLast: "f1"},
		{name: "empty source", src: &fakeSource{n: 0}, sink: &fakeSink{}, wantErr: ErrSourceEnded},
		{name: "source fails", src: &fakeSource{n: 3, end: errors.New("camera unplugged")}, sink: &fakeSink{},
			wantStatus: app.StatusContinue, wantErrMsg: "read frame: camera unplugged"},
		{name: "sink fails", src: &fakeSource{n: -1, delay: time.Millisecond}, sink: &fakeSink{errAt: 2},
			wantStatus: app.StatusContinue, wantErrMsg: "pipeline broke"},
		{name: "cancelled", src: &fakeSource{n: -1, delay: time.Millisecond}, sink: &fakeSink{},
			timeout: 80 * time.Millisecond, wantStatus: app.StatusContinue, wantErr: context.DeadlineExceeded},
		{name: "cancelled while the source waits", src: &fakeSource{n: -1, delay: time.Hour}, sink: &fakeSink{},
			timeout: 30 * time.Millisecond, wantErr: context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := runtime.NumGoroutine()
				ctx := context.Background()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				var progress []app.FrameOutcome
				r := NewRunner(tc.src, Config{Sink: tc.sink, OnProgress: func(o app.FrameOutcome) { progress = append(progress, o) }})
				out, err := r.Run(ctx)
				switch {
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				case tc.wantErrMsg != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrMsg)):
					t.Fatalf("err %v, want %q", err, tc.wantErrMsg)
				case tc.wantErr == nil && tc.wantErrMsg == "" && err != nil:
					t.Fatalf("err %v", err)
				}
				if out.Status != tc.wantStatus {
					t.Fatalf("status %q, want %q", out.Status, tc.wantStatus)
				}
				got := tc.sink.frames()
				if len(progress) != len(got) && !strings.Contains(tc.wantErrMsg, "broke") {
					t.Fatalf("%d progress reports for %d frames", len(progress), len(got))
				}
				if len(progress) > 0 && !reflect.DeepEqual(progress[len(progress)-1], out) {
					t.Fatalf("last progress %+v, returned %+v", progress[len(progress)-1], out)
				}
				if tc.wantLast != "" && (len(got) == 0 || got[len(got)-1] != tc.wantLast) {
					t.Fatalf("sink saw %v, want the last frame %s", got, tc.wantLast)
				}
				settle(t, base)
			})
		})
	}
}

// A busy sink gets only the newest frame each time it is free, and the
// reader is never held up by it: the source reaches its end while the sink
// is still on its first frame, and the sink's next frame is the last one.
func TestRunDropsStaleFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := runtime.NumGoroutine()
		// The source holds its second frame until the sink has the first; the
		// sink holds the first until the source has ended.
		src := &fakeSource{n: 200, ended: make(chan struct{}), hold: make(chan struct{})}
		sink := &fakeSink{started: src.hold, gate: src.ended}
		done := make(chan error, 1)
		go func() {
			_, err := NewRunner(src, Config{Sink: sink}).Run(context.Background())
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrSourceEnded) {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second): // a deadlock guard on the bubble's clock, not a speed bound
			t.Fatal("Run did not return: the reader waited for the sink")
		}
		got := sink.frames()
		if len(got) != 2 || got[0] != "f0" || got[1] != "f199" || src.frames() != 200 {
			t.Fatalf("sink saw %v, the source gave %d frames; want f0, then f199 of 200", got, src.frames())
		}
		settle(t, base)
	})
}

// The preview is capped at PreviewFPS and a slow preview consumer does not
// hold up the reader: over 500 ms of the bubble's clock, a source of a
// frame a millisecond gives 500 frames, and the preview publishes one a
// slot (the first at once) or one per call of a consumer slower than that.
func TestPreviewRateAndSlowConsumer(t *testing.T) {
	cases := []struct {
		name               string
		fps                float64
		callback           time.Duration
		minCalls, maxCalls int
	}{
		{"capped at 20 fps", 20, 0, 10, 11},                  // 500 ms at 20/s, plus the first
		{"slow consumer", 100, 100 * time.Millisecond, 5, 6}, // each call takes 100 ms
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := runtime.NumGoroutine()
				src := &fakeSource{n: -1, delay: time.Millisecond}
				var mu sync.Mutex
				var idx []int
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				_, err := NewRunner(src, Config{PreviewFPS: tc.fps, OnPreview: func(p Preview) {
					mu.Lock()
					idx = append(idx, p.Index)
					mu.Unlock()
					time.Sleep(tc.callback)
				}}).Run(ctx)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatal(err)
				}
				settle(t, base)
				if len(idx) < tc.minCalls || len(idx) > tc.maxCalls {
					t.Fatalf("%d previews %v, want %d..%d", len(idx), idx, tc.minCalls, tc.maxCalls)
				}
				for i := 1; i < len(idx); i++ {
					if idx[i] <= idx[i-1] {
						t.Fatalf("previews out of order: %v", idx)
					}
				}
				if n := src.frames(); n != 500 {
					t.Fatalf("reader got %d frames for %d previews: it was held up", n, len(idx))
				}
			})
		})
	}
}

type fakeOutliner struct {
	err   error
	delay time.Duration
}

func (o fakeOutliner) Corners(ctx context.Context, jpeg []byte) ([4][2]float64, bool, error) {
	time.Sleep(o.delay)
	if o.err != nil {
		return [4][2]float64{{1, 1}}, true, o.err
	}
	var i float64
	fmt.Sscanf(string(jpeg), "f%g", &i)
	return [4][2]float64{{i, 0}, {i + 10, 0}, {i + 10, 5}, {i, 5}}, true, nil
}

func TestPreviewCarriesOutline(t *testing.T) {
	cases := []struct {
		name   string
		o      fakeOutliner
		src    *fakeSource
		wantOK bool
	}{
		{"found", fakeOutliner{delay: 30 * time.Millisecond}, &fakeSource{n: -1, delay: 2 * time.Millisecond}, true},
		{"outliner error", fakeOutliner{err: errors.New("decode failed")}, &fakeSource{n: -1, delay: 2 * time.Millisecond}, false},
		// One frame: the outline arrives after the frame's first preview
		// and is published with it again.
		{"single frame", fakeOutliner{delay: 30 * time.Millisecond}, &fakeSource{n: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := runtime.NumGoroutine()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var once sync.Once
				var got Preview
				r := NewRunner(tc.src, Config{Outliner: tc.o, OnPreview: func(p Preview) {
					if p.Outline.FrameIndex >= 0 {
						once.Do(func() { got = p; cancel() })
					}
				}})
				done := make(chan error, 1)
				go func() { _, err := r.Run(ctx); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrSourceEnded) {
						t.Fatalf("Run: %v", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("no preview with an outline")
				}
				o := got.Outline
				if o.OK != tc.wantOK || (tc.o.err != nil) != (o.Err != nil) {
					t.Fatalf("outline %+v", o)
				}
				if o.OK && (o.Corners[0][0] != float64(o.FrameIndex) || o.FrameIndex > got.Index) {
					t.Fatalf("outline %+v on preview %d", o, got.Index)
				}
				if !o.OK && o.Corners != ([4][2]float64{}) {
					t.Fatalf("corners %v with ok false", o.Corners)
				}
				settle(t, base)
			})
		})
	}
}

// Without a sink, Run is a preview until the source ends.
func TestPreviewOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := runtime.NumGoroutine()
		var n int
		out, err := NewRunner(&fakeSource{n: 3}, Config{OnPreview: func(Preview) { n++ }}).Run(context.Background())
		if !errors.Is(err, ErrSourceEnded) || !reflect.DeepEqual(out, app.FrameOutcome{}) {
			t.Fatalf("%+v %v", out, err)
		}
		if n == 0 {
			t.Fatal("no preview")
		}
		settle(t, base)
	})
}

// A new outline waits for the next frame instead of taking its slot: when
// the next frame follows within an interval, no preview repeats a frame
// just to show a newer outline, and a source at the preview's rate has
// every frame shown; only the last frame's outline, found after the source
// ended, is published alone. Before, the outline alone took the next
// frame's slot and 10-13 of these 30 frames were never shown.
func TestOutlineRidesWithNextFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := runtime.NumGoroutine()
		src := &fakeSource{n: 30, delay: 50 * time.Millisecond}
		var mu sync.Mutex
		var idx []int
		_, err := NewRunner(src, Config{PreviewFPS: 20, Outliner: fakeOutliner{delay: 20 * time.Millisecond}, OnPreview: func(p Preview) {
			mu.Lock()
			idx = append(idx, p.Index)
			mu.Unlock()
		}}).Run(context.Background())
		if !errors.Is(err, ErrSourceEnded) {
			t.Fatal(err)
		}
		settle(t, base)
		repeats, distinct := 0, 1
		for i := 1; i < len(idx); i++ {
			if idx[i] == idx[i-1] {
				repeats++
			} else {
				distinct++
			}
		}
		t.Logf("%d previews, %d distinct frames of 30, %d repeats", len(idx), distinct, repeats)
		if repeats > 1 || distinct != 30 {
			t.Fatalf("%d previews, %d distinct frames of 30, %d repeats: %v", len(idx), distinct, repeats, idx)
		}
	})
}

// stillSource delivers one frame, then none until ctx ends: a camera
// that stalled.
type stillSource struct{ sent bool }

func (s *stillSource) Next(ctx context.Context) (Frame, error) {
	if !s.sent {
		s.sent = true
		return Frame{Image: image.NewRGBA(image.Rect(0, 0, 4, 4)), JPEG: []byte("f0"), Time: time.Now()}, nil
	}
	<-ctx.Done()
	return Frame{}, ctx.Err()
}

func (s *stillSource) Close() error { return nil }

// gateOutliner finds the screen on a frame once release is closed.
type gateOutliner struct{ release chan struct{} }

func (o gateOutliner) Corners(ctx context.Context, jpeg []byte) ([4][2]float64, bool, error) {
	select {
	case <-o.release:
		return fakeOutliner{}.Corners(ctx, jpeg)
	case <-ctx.Done():
		return [4][2]float64{}, false, ctx.Err()
	}
}

// A new outline on a source that delivers no further frame is published
// alone, after waiting one interval (100 ms on the Runner's clock) for a
// frame to carry it.
func TestOutlineAloneOnStillSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := runtime.NumGoroutine()
		clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type published struct {
			p  Preview
			at time.Time
		}
		previews := make(chan published, 4)
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := NewRunner(&stillSource{}, Config{PreviewFPS: 10, Clock: clk, Outliner: gateOutliner{release}, OnPreview: func(p Preview) {
				previews <- published{p, clk.Now()}
			}}).Run(ctx)
			done <- err
		}()
		first := <-previews // the frame, at once, before any outline
		close(release)      // the outline is found; the preview waits for a frame
		clk.BlockUntil(1)
		clk.Advance(99 * time.Millisecond)
		select {
		case p := <-previews:
			t.Fatalf("the outline came alone %v after the frame: it did not wait an interval", p.at.Sub(first.at))
		default:
		}
		clk.Advance(time.Millisecond)
		second := <-previews
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v", err)
		}
		settle(t, base)
		if first.p.Outline.OK || !second.p.Outline.OK || second.p.Index != 0 || second.p.Outline.FrameIndex != 0 {
			t.Fatalf("previews %+v, %+v", first.p, second.p)
		}
		if d := second.at.Sub(first.at); d != 100*time.Millisecond {
			t.Fatalf("the outline came alone %v after the frame, want one interval (100 ms)", d)
		}
	})
}

// nextSlot keeps the cadence through a late frame and allows no burst
// after a pause.
func TestNextSlot(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	cases := []struct {
		name      string
		prev, now time.Time
		want      time.Time
	}{
		{"first publication", time.Time{}, ms(0), ms(75)},
		{"on time", ms(100), ms(100), ms(200)},
		{"a little late: the cadence holds", ms(100), ms(120), ms(200)},
		{"very late: at least 3/4 of an interval", ms(100), ms(180), ms(255)},
		{"after a pause: no burst", ms(100), ms(1000), ms(1075)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextSlot(tc.prev, tc.now, 100*time.Millisecond); !got.Equal(tc.want) {
				t.Fatalf("nextSlot = %v, want %v", got.Sub(t0), tc.want.Sub(t0))
			}
		})
	}
}
