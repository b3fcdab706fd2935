package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	apiwire "vetlens/api" // not api: the tests name their server so
	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/internal/errs"
)

// sse writes Server-Sent Events, flushing after each; a write failure
// cancels the request's work.
type sse struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	cancel context.CancelFunc
	err    error
}

func (s *sse) write(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := fmt.Fprint(s.w, text); err != nil {
		s.err = err
	} else if err := s.rc.Flush(); err != nil {
		s.err = err
	}
	if s.err != nil {
		s.cancel()
	}
	return s.err
}

func (s *sse) event(name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("sse %s: %w", name, err)
	}
	return s.write("event: " + name + "\ndata: " + string(b) + "\n\n")
}

// streamEvents adapts the sse writer to app.StreamEvents.
type streamEvents struct {
	s   *sse
	log *slog.Logger
}

// Started sends processing_started.
func (e streamEvents) Started(n int, mv string) error {
	return e.s.event("processing_started", map[string]any{"n_images": n, "model_version": mv})
}

// Photo sends one photo event.
func (e streamEvents) Photo(i, n int, mv string, r *cardiac.Result) error {
	return e.s.event("photo", apiwire.NewPhotoEvent(r, i, n, mv))
}

// ImageError sends an error event for one image.
func (e streamEvents) ImageError(i int, uuid string, err error) error {
	msg := "internal server error"
	var ae *app.Error
	if errors.As(err, &ae) && ae.Kind != app.KindInternal {
		msg = ae.Error()
	}
	if msg != err.Error() || errs.Hidden(err) {
		e.log.Info("stream image refused", "index", i, "err", errs.Chain(err))
	}
	return e.s.event("error", map[string]any{"index": i, "uuid": uuid, "error": msg})
}

// Summary sends the summary event.
func (e streamEvents) Summary(s app.Summary) error { return e.s.event("summary", apiwire.Summary(s)) }

// Billing sends the final billing event.
func (e streamEvents) Billing(b app.Billing) error { return e.s.event("billing", billingBody(b)) }

// predictStream serves POST /v3/predict/stream. Request errors (no
// images, more than 10, a body over the limit) are plain JSON errors
// before the stream starts. Then: processing_started, one photo per
// image in order as soon as it is measured (an error event instead for an
// image that cannot be decoded), summary, and a final billing event with
// the billing object. Comments (": keep-alive") are sent every
// HeartbeatInterval. A client that disconnects cancels the work before
// billing, so it is not billed. A failure after the stream started ends
// it with an error event whose index is -1.
func (s *Server) predictStream(ctx context.Context, w http.ResponseWriter, req *keyedRequest) {
	pr, ok := s.readCardiac(w, req, false)
	if !ok {
		return
	}
	if s.svc.Cardiac.Engine() == nil {
		s.v3Fail(w, req.r, app.ErrCardiacUnavailable)
		return
	}
	if err := s.svc.Status.CheckWritable(); err != nil {
		s.v3Fail(w, req.r, err) // 507 before the stream's 200
		return
	}
	if !pr.Batch {
		// A single image streams as a batch of one.
		pr.Batch = true
		pr.ImageErrs = make([]error, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w), cancel: cancel}
	if err := out.write(": stream open\n\n"); err != nil {
		return
	}
	// The heartbeat goroutine must be gone before the handler returns:
	// the ResponseWriter may not be used after that.
	done := make(chan struct{})
	var hb sync.WaitGroup
	defer func() {
		close(done)
		hb.Wait()
	}()
	hb.Add(1)
	go func() {
		defer hb.Done()
		t := time.NewTicker(s.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if out.write(": keep-alive\n\n") != nil {
					return
				}
			}
		}
	}()
	if _, err := s.svc.Cardiac.PredictBatch(ctx, req.caller, pr, streamEvents{out, s.cfg.Logger}); err != nil {
		if ctx.Err() != nil && req.r.Context().Err() != nil {
			return // client gone
		}
		if app.KindOf(err) != app.KindBusy {
			s.cfg.Logger.Error("stream failed", "err", errs.Chain(err))
		}
		msg := "internal server error"
		var ae *app.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			msg = "request timed out"
		case app.KindOf(err) == app.KindBusy && errors.As(err, &ae):
			msg = ae.Error()
		}
		out.event("error", map[string]any{"index": -1, "uuid": pr.UUID, "error": msg})
	}
}
