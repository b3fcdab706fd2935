// Package live runs the desktop Capture screen's live loop, without any GUI
// or camera code: a Runner reads frames from a Source, publishes preview
// frames with the latest detected screen outline, and feeds the newest
// frame to a capture session (a FrameSink) whenever the session is idle,
// until the session completes or fails.
//
// Three kinds of work run at their own pace and never wait for each other:
//
//   - the reader takes frames from the Source as fast as it delivers them
//     (a camera at its frame rate, a file at its native rate) and keeps only
//     the newest one;
//   - the preview publishes the newest frame to OnPreview at most PreviewFPS
//     times a second on average; a new outline rides with the next frame;
//     a slow consumer sees fewer frames, the reader is never held up;
//   - the outliner detects the screen's corners on the newest frame, as
//     often as it can but at most PreviewFPS times a second;
//   - the capture sends the newest frame not yet sent to the sink each
//     time the sink is idle; frames that arrived while the sink was busy
//     are dropped (only the newest counts: a stale frame shows an old
//     hand position).
//
// docs/pop.md ("Camera and live capture") records the decisions. The
// package does not import platform/: platform/camera's *camera.Source
// satisfies Source.
package live

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"sync"
	"time"

	"vetlens/app"
	"vetlens/internal/clock"
)

// Frame is one frame of a Source.
type Frame struct {
	// Image is the decoded frame for the preview. Sources allocate a new
	// image for every frame and never modify it afterwards, so consumers
	// may keep it; they must not modify it either.
	Image *image.RGBA
	// JPEG is the frame encoded for the engine (the capture pipeline and
	// the outliner read it).
	JPEG []byte
	// Index counts the source's frames from 0 (across loops of a looping
	// file source).
	Index int
	// Time is when the frame was delivered.
	Time time.Time
}

// Source yields frames. Next returns io.EOF (possibly wrapped) after the
// last frame of a file or folder; a live camera never ends on its own.
// Next is called from one goroutine at a time. A Runner never closes its
// Source: the caller does, after Run returns, so that one Source can serve
// several Runners (a preview, then a session, then the next session).
type Source interface {
	Next(ctx context.Context) (Frame, error)
	Close() error
}

// Outliner finds the screen's corners in an encoded frame, ordered TL, TR,
// BR, BL in frame pixels; ok is false when no screen was found confidently
// (not an error). PoPOutliner adapts the capture pipeline.
type Outliner interface {
	Corners(ctx context.Context, jpeg []byte) (corners [4][2]float64, ok bool, err error)
}

// FrameSink is one capture session: it takes a frame and answers the
// session's outcome. app implements it over its one session use case:
// app.DesktopSession (the desktop: billing, history) and app.LocalSession
// (`vetlens capture`, nothing billed).
type FrameSink interface {
	Frame(ctx context.Context, jpeg []byte) (app.FrameOutcome, error)
}

// Outline is the latest screen outline the Outliner found.
type Outline struct {
	// Corners are TL, TR, BR, BL in pixels of the frame it was found on.
	Corners [4][2]float64
	// OK is true when a screen was found; Corners are meaningless
	// otherwise.
	OK bool
	// FrameIndex is the Frame.Index it was detected on (the preview image
	// may be a few frames newer); -1 before the first detection.
	FrameIndex int
	// Err is the Outliner's error on that frame (OK is then false). The
	// Runner goes on: the outline is advice for the preview, the session
	// does not depend on it.
	Err error
}

// Preview is one frame for the live view.
type Preview struct {
	// Image is the frame (see Frame.Image for ownership).
	Image *image.RGBA
	// Index and Time are the frame's.
	Index int
	Time  time.Time
	// Outline is the latest outline detected, on this frame or an
	// earlier one.
	Outline Outline
}

// DefaultPreviewFPS is the preview rate when Config.PreviewFPS is 0.
const DefaultPreviewFPS = 15

// ErrSourceEnded is returned by Run when the source reached its end (a
// file or folder without looping) before the session completed or failed.
// It matches io.EOF too. The last frame read is always sent to the sink
// before Run gives up, so a session that the last frame completes does
// complete.
var ErrSourceEnded = fmt.Errorf("live: the source ended before the session finished: %w", io.EOF)

// Config configures a Runner. Every field is optional.
type Config struct {
	// Sink is the capture session. Nil runs the preview (and outline)
	// alone until ctx ends or the source ends.
	Sink FrameSink
	// Outliner detects the screen outline shown with the preview. Nil:
	// no outline (Preview.Outline.OK stays false).
	Outliner Outliner
	// OnPreview receives preview frames, from one goroutine, at most
	// PreviewFPS a second on average (never more than one early). It
	// should return promptly (hand the image to the GUI thread and
	// return): frames arriving meanwhile are dropped, and Run waits for a
	// call in progress before it returns.
	OnPreview func(Preview)
	// OnProgress receives every outcome the sink answers, the final
	// complete or failed one included, in order, on Run's goroutine.
	OnProgress func(app.FrameOutcome)
	// PreviewFPS caps the preview and outline rates; 0 means
	// DefaultPreviewFPS.
	PreviewFPS float64
	// Clock paces the preview and the outliner; nil is the wall clock
	// (tests inject a fake one).
	Clock clock.Clock
}

// Runner runs one capture session (or a preview) over a Source. Make a
// new Runner, on the same Source if wanted, for the next session.
type Runner struct {
	src Source
	cfg Config
}

// NewRunner returns a Runner reading src.
func NewRunner(src Source, cfg Config) *Runner {
	if cfg.PreviewFPS <= 0 {
		cfg.PreviewFPS = DefaultPreviewFPS
	}
	cfg.Clock = clock.Or(cfg.Clock)
	return &Runner{src: src, cfg: cfg}
}

// Run reads the source, publishes previews and runs the session until:
//
//   - the session completes or fails: the final outcome and nil (a failed
//     session is an outcome, not an error);
//   - ctx ends: the last outcome so far and ctx's error;
//   - the source ends first: the last outcome so far and ErrSourceEnded,
//     once the last frame was sent to the sink, previewed and outlined;
//   - the source or the sink fails: the last outcome so far and the
//     error, wrapped.
//
// Without a Sink, Run returns only when ctx ends or the source ends (or
// fails), with a zero outcome. Every goroutine Run starts has exited when
// it returns. Run does not close the source.
func (r *Runner) Run(ctx context.Context) (app.FrameOutcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &state{
		captureC: make(chan struct{}, 1),
		previewC: make(chan struct{}, 1),
		outlineC: make(chan struct{}, 1),
		outline:  Outline{FrameIndex: -1},
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.read(ctx, st) })
	if r.cfg.OnPreview != nil {
		wg.Go(func() { r.preview(ctx, st) })
	}
	if r.cfg.Outliner != nil {
		wg.Go(func() { r.outlines(ctx, st) })
	} else {
		st.outlineDone = true
	}
	out, err := r.capture(ctx, st)
	if !errors.Is(err, ErrSourceEnded) {
		cancel()
	}
	// At the source's end the preview and outliner finish on their own,
	// after the last frame was previewed with its outline (a single image
	// file shows its outline); otherwise they stop on ctx.
	wg.Wait()
	return out, err
}

// state is what the Runner's goroutines share.
type state struct {
	mu       sync.Mutex
	latest   Frame
	seq      uint64 // 0: no frame yet; +1 per frame read
	ended    error  // the reader's final error (io.EOF at the end), once it stopped
	outline  Outline
	outlineV uint64 // +1 per outline stored
	// outlineDone: the outliner stopped (or there is none).
	outlineDone bool

	// Wake-ups, one slot each: a send never blocks, and a consumer that
	// was busy finds one pending signal and reads the newest state.
	captureC, previewC, outlineC chan struct{}
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// view is a consistent copy of the shared state.
type view struct {
	frame       Frame
	seq         uint64
	ended       error
	outline     Outline
	outlineV    uint64
	outlineDone bool
}

func (st *state) snapshot() view {
	st.mu.Lock()
	defer st.mu.Unlock()
	return view{frame: st.latest, seq: st.seq, ended: st.ended, outline: st.outline, outlineV: st.outlineV, outlineDone: st.outlineDone}
}

// read takes frames from the source until it ends, fails or ctx ends.
func (r *Runner) read(ctx context.Context, st *state) {
	for {
		f, err := r.src.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		st.mu.Lock()
		if err != nil {
			st.ended = err
		} else {
			st.latest = f
			st.seq++
		}
		st.mu.Unlock()
		notify(st.captureC)
		notify(st.previewC)
		notify(st.outlineC)
		if err != nil {
			return
		}
	}
}

// wait blocks until c signals or ctx ends; false when ctx ended.
func wait(ctx context.Context, c chan struct{}) bool {
	select {
	case <-ctx.Done():
		return false
	case <-c:
		return true
	}
}

// pause sleeps until t or until ctx ends; false when ctx ended.
func (r *Runner) pause(ctx context.Context, t time.Time) bool {
	if clock.Until(r.cfg.Clock, t) <= 0 {
		return ctx.Err() == nil
	}
	_, ok := r.waitUntil(ctx, nil, t) // a nil channel never signals
	return ok
}

func (r *Runner) interval() time.Duration {
	return time.Duration(float64(time.Second) / r.cfg.PreviewFPS)
}

// nextSlot is the earliest time the preview may publish again after
// publishing at now, when the slot before was due at prev. The slots keep
// their cadence, so a frame that arrives a little late (a source's timing
// jitter) does not delay every later one: each slot is at least one
// interval after the last, so the rate averages at most PreviewFPS, and
// at least three quarters of an interval after the publication, so a
// burst never exceeds one frame early.
func nextSlot(prev, now time.Time, interval time.Duration) time.Time {
	next := prev.Add(interval)
	if soonest := now.Add(interval * 3 / 4); next.Before(soonest) {
		next = soonest
	}
	return next
}

// waitUntil blocks until c signals (signalled), until t or until ctx
// ends (ok false); a nil c never signals.
func (r *Runner) waitUntil(ctx context.Context, c chan struct{}, t time.Time) (signalled, ok bool) {
	tm := r.cfg.Clock.NewTimer(clock.Until(r.cfg.Clock, t))
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-c:
		return true, true
	case <-tm.C():
		return false, true
	}
}

// preview publishes the newest frame, with the newest outline, at most
// PreviewFPS times a second on average (see nextSlot), when either
// changed. A new outline without a new frame waits up to an interval for
// the next frame, which then carries it: publishing it alone would take
// that frame's slot and delay or drop it. With no new frame by then (a
// still image, a stalled camera) the outline is published alone. After
// the source ended it returns once the last frame and the last outline
// were published.
func (r *Runner) preview(ctx context.Context, st *state) {
	var lastSeq, lastOutline uint64
	var next, held time.Time // held: when an outline began waiting for a frame
	for {
		v := st.snapshot()
		if v.seq == 0 || (v.seq == lastSeq && v.outlineV == lastOutline) {
			if v.ended != nil && v.outlineDone {
				return
			}
			if !wait(ctx, st.previewC) {
				return
			}
			continue
		}
		if v.seq == lastSeq && v.ended == nil {
			if held.IsZero() {
				held = r.cfg.Clock.Now()
			}
			if deadline := held.Add(r.interval()); r.cfg.Clock.Now().Before(deadline) {
				signalled, ok := r.waitUntil(ctx, st.previewC, deadline)
				if !ok {
					return
				}
				if signalled {
					continue
				}
			}
		}
		held = time.Time{}
		if !r.pause(ctx, next) {
			return
		}
		v = st.snapshot()
		lastSeq, lastOutline = v.seq, v.outlineV
		next = nextSlot(next, r.cfg.Clock.Now(), r.interval())
		r.cfg.OnPreview(Preview{Image: v.frame.Image, Index: v.frame.Index, Time: v.frame.Time, Outline: v.outline})
	}
}

// outlines detects the outline on the newest frame, at most PreviewFPS
// times a second. After the source ended it returns once the last frame
// was outlined.
func (r *Runner) outlines(ctx context.Context, st *state) {
	defer func() {
		st.mu.Lock()
		st.outlineDone = true
		st.mu.Unlock()
		notify(st.previewC)
	}()
	var last uint64
	var next time.Time
	for {
		v := st.snapshot()
		if v.seq == last {
			if v.ended != nil {
				return
			}
			if !wait(ctx, st.outlineC) {
				return
			}
			continue
		}
		if !r.pause(ctx, next) {
			return
		}
		v = st.snapshot()
		f := v.frame
		last = v.seq
		next = r.cfg.Clock.Now().Add(r.interval())
		c, ok, err := r.cfg.Outliner.Corners(ctx, f.JPEG)
		if ctx.Err() != nil {
			return
		}
		o := Outline{Corners: c, OK: ok && err == nil, FrameIndex: f.Index, Err: err}
		if !o.OK {
			o.Corners = [4][2]float64{}
		}
		st.mu.Lock()
		st.outline = o
		st.outlineV++
		st.mu.Unlock()
		notify(st.previewC)
	}
}

// capture sends the newest unsent frame to the sink whenever it is idle,
// and decides when Run is over.
func (r *Runner) capture(ctx context.Context, st *state) (app.FrameOutcome, error) {
	var last app.FrameOutcome
	var sent uint64
	for {
		if err := ctx.Err(); err != nil {
			return last, err
		}
		v := st.snapshot()
		f := v.frame
		switch {
		case r.cfg.Sink != nil && v.seq > sent:
			sent = v.seq
			out, err := r.cfg.Sink.Frame(ctx, f.JPEG)
			if err != nil {
				if ctx.Err() != nil {
					return last, ctx.Err()
				}
				return last, fmt.Errorf("live: session frame %d: %w", f.Index, err)
			}
			last = out
			if r.cfg.OnProgress != nil {
				r.cfg.OnProgress(out)
			}
			if out.Status == app.StatusComplete || out.Status == app.StatusFailed {
				return out, nil
			}
			continue
		case v.ended != nil:
			if errors.Is(v.ended, io.EOF) {
				return last, ErrSourceEnded
			}
			return last, fmt.Errorf("live: read frame: %w", v.ended)
		}
		if !wait(ctx, st.captureC) {
			return last, ctx.Err()
		}
	}
}
