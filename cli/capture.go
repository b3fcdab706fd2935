package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"vetlens/api/cardiacv3"
	"vetlens/app"
	"vetlens/app/live"
	"vetlens/internal/config"
	"vetlens/platform/camera"
)

const captureUsage = `usage: vetlens capture [--camera SPEC] [--max-seconds N] [--loop] [-o RECTIFIED.jpg] [--render OUT.jpg]
                       [--models DIR] [--ort-lib PATH]

Runs one picture-of-picture capture session headless, as the desktop
Capture screen does: frames come from the camera (or a file) at its own
pace, and the session takes the newest frame whenever it is free, until it
completes or fails. Prints one JSON body per line: the
/v3/pop-session/start body, then the /v3/pop-session body of every frame
the session processed (continue ..., then complete or failed), without
billing.

--camera SPEC    device:N (default device:0), a video file, a folder of
                 JPEG/PNG images (name order) or one image; file:PATH for a
                 path that starts with "device:". Files play at their
                 native rate (folders and images at 15 fps).
--max-seconds N  give up after N seconds (0: no limit but the session's
                 own 300 s)
--loop           replay a file source from its start instead of ending
-o FILE          write the best frame's rectified JPEG to FILE and leave
                 rectified_image out of the JSON
--render FILE    write the annotated best frame to FILE (the JSON never
                 carries prediction.rendered_image)

Exit status: 0 the session completed; 1 it failed (the failed body is the
last line), or the source could not be opened, ended or broke first, or
--max-seconds ran out (an {"error": ..., "camera": SPEC} line is printed
for those); 2 bad command line; 3 ONNX Runtime or the models unusable.

Models: --models, else $VETLENS_MODELS, else models/ beside the executable,
else ./models.
`

// captureError is the JSON line printed when a capture ends without a
// session outcome.
type captureError struct {
	Error  string `json:"error"`
	Camera string `json:"camera"`
}

// Capture implements `vetlens capture`.
func Capture(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("capture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, captureUsage) }
	spec := config.Camera.String(fs, config.DefaultCamera)
	maxSeconds := fs.Float64("max-seconds", 0, "give up after this many seconds (0: no limit)")
	loop := fs.Bool("loop", false, "replay a file source from its start")
	rectOut := fs.String("o", "", "write the rectified best frame here (and leave it out of the JSON)")
	render := fs.String("render", "", "write the annotated best frame here")
	modelsFlag := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	if fs.NArg() > 0 || *maxSeconds < 0 {
		fmt.Fprintf(stderr, "vetlens capture: unexpected arguments %q or negative --max-seconds\n", fs.Args())
		fs.Usage()
		return ExitUsage
	}

	svc, closeAll, err := openLocal(ctx, config.ModelsDir(*modelsFlag), *ortLib, localNeeds{cardiac: true})
	if err != nil {
		fmt.Fprintf(stderr, "vetlens capture: %v\n", err)
		return ExitInternal
	}
	defer closeAll()

	fail := func(err error) int {
		if werr := writeLine(stdout, captureError{Error: err.Error(), Camera: *spec}); werr != nil {
			fmt.Fprintf(stderr, "vetlens capture: write output: %v\n", werr)
		}
		return ExitRejected
	}
	var opts []camera.Option
	if *loop {
		opts = append(opts, camera.Loop())
	}
	src, err := camera.Open(*spec, opts...)
	if err != nil {
		return fail(err)
	}
	defer src.Close()

	if *maxSeconds > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*maxSeconds*float64(time.Second)))
		defer cancel()
	}
	// The API's session use case on a local service: the same pipeline,
	// states, errors and bodies as /v3/pop-session, nothing billed.
	sink, err := svc.Sessions.StartLocalSession(ctx)
	if err != nil {
		return fail(err)
	}
	id, version := sink.Start.SessionID, sink.Start.ModelVersion
	st := sink.Start
	if err := writeLine(stdout, cardiacv3.NewSessionStart(id, cardiacv3.SessionConfig(st.SessionConfig), st.ModelsLoaded, st.PopModelsLoaded, version)); err != nil {
		fmt.Fprintf(stderr, "vetlens capture: write output: %v\n", err)
		return ExitRejected
	}

	// The bodies are printed as the session answers; a failure to write
	// them (or the images) stops the run.
	var outErr error
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	r := live.NewRunner(src, live.Config{Sink: sink, OnProgress: func(o app.FrameOutcome) {
		if outErr != nil {
			return
		}
		if outErr = printFrameBody(stdout, id, o, version, *rectOut, *render); outErr != nil {
			stop()
		}
	}})
	out, err := r.Run(ctx)
	switch {
	case outErr != nil:
		fmt.Fprintf(stderr, "vetlens capture: %v\n", outErr)
		return ExitRejected
	case out.Status == app.StatusComplete && err == nil:
		return ExitOK
	case out.Status == app.StatusFailed && err == nil:
		return ExitRejected
	case errors.Is(err, context.DeadlineExceeded) && *maxSeconds > 0:
		return fail(fmt.Errorf("stopped after %g s before the session finished (%d frames processed)", *maxSeconds, out.FramesProcessed))
	case errors.Is(err, context.Canceled):
		return fail(fmt.Errorf("interrupted before the session finished (%d frames processed)", out.FramesProcessed))
	case errors.Is(err, live.ErrSourceEnded):
		return fail(fmt.Errorf("the source ended before the session finished (%d frames processed; --loop replays a file)", out.FramesProcessed))
	case err != nil:
		return fail(err)
	}
	return fail(fmt.Errorf("capture ended with status %q", out.Status))
}

// printFrameBody prints one outcome's body, writing the best frame's
// images to rectOut and renderOut (when set) before the complete line.
func printFrameBody(w io.Writer, id string, o app.FrameOutcome, version, rectOut, renderOut string) error {
	body, err := cardiacv3.NewFrameBody(id, cardiacv3.FrameOutcome(o), version, nil)
	if err != nil {
		return err
	}
	if body.Prediction != nil {
		body.Prediction.RenderedImage = ""
		if renderOut != "" {
			if err := os.WriteFile(renderOut, o.Rendered, 0o644); err != nil {
				return fmt.Errorf("write rendered image: %w", err)
			}
		}
		if rectOut != "" {
			if err := os.WriteFile(rectOut, o.Rectified, 0o644); err != nil {
				return fmt.Errorf("write rectified image: %w", err)
			}
			body.RectifiedImage = ""
		}
	}
	if err := writeLine(w, body); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
