package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"vetlens/api"
	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/internal/config"
)

// MaxInputFileBytes is the largest file `vetlens predict` reads. The HTTP
// API's limit is 10 MB per image; local files may be larger (lossless PNG
// exports), and imageproc's pixel limits still apply after reading.
const MaxInputFileBytes = 64 << 20

const predictUsage = `usage: vetlens predict [--render OUT.jpg] [--models DIR] [--ort-lib PATH] FILE...

Measures VHS and VLAS on each JPEG, PNG or DICOM radiograph (told by its
content, not its name; DICOM: the first frame) and prints one JSON
body per file on stdout, one per line, in argument order: the cardiac v3
single-image prediction body (or the rejection body) without billing and
history, exactly as POST /v3/predict answers (the same use case in app).
A file that cannot be read or measured prints {"error": "...", "status":
N, "file": "..."} instead (status: the API's HTTP status for that error,
absent when the file could not be read); the other files still run and
the exit status is then 1. Setup failures (ONNX Runtime, models) exit 3;
a bad command line exits 2 ("vetlens help" lists the exit statuses).

--render writes the annotated image as JPEG (not into the JSON). With
several files, OUT.jpg becomes OUT-1.jpg, OUT-2.jpg, ... by position.
Rejected images are not rendered.

When VHS or VLAS is withheld (result 4 or 5), a line on stderr names the
check that withheld it, e.g. "result 5: Vertebra A-B does not lie dorsal
to the heart (vertebrae_not_dorsal)", and, where the check says more,
what it saw after a colon (a screen photo's quality problems, or how far
its mirror image measured); the JSON body has no field for it.

A photograph of a radiograph on a screen is detected, perspective-corrected
and measured on the corrected image (pop_detected true; landmarks then refer
to the corrected image). A screen photo whose correction fails gets result
code 7.

Models: --models, else $VETLENS_MODELS, else models/ beside the executable,
else ./models.
`

// Predict implements `vetlens predict` through app.Service.Cardiac.PredictLocal,
// the single-image use case of /v3/predict. It returns ExitOK when every
// file was measured (rejection counts as measured), ExitRejected when
// some file failed, ExitUsage for a bad command line and ExitInternal
// when ONNX Runtime or the models cannot be loaded.
func Predict(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, predictUsage) }
	render := fs.String("render", "", "write the annotated image to this JPEG file")
	modelsFlag := config.Models.String(fs, "")
	ortLib := config.ORTLib.String(fs, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	files := fs.Args()
	if len(files) == 0 {
		fmt.Fprintln(stderr, "vetlens predict: no input files")
		fs.Usage()
		return ExitUsage
	}
	svc, closeAll, err := openLocal(ctx, config.ModelsDir(*modelsFlag), *ortLib, localNeeds{cardiac: true})
	if err != nil {
		fmt.Fprintf(stderr, "vetlens predict: %v\n", err)
		return ExitInternal
	}
	defer closeAll()

	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	status := ExitOK
	for i, file := range files {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(stderr, "vetlens predict: stopped before %s: %v\n", file, err)
			return ExitRejected
		}
		resp, r, err := predictFile(ctx, svc, file, renderPath(*render, i, len(files)))
		if err != nil {
			status = ExitRejected
			if resp == nil {
				if err := enc.Encode(errorLineOf(file, err)); err != nil {
					fmt.Fprintf(stderr, "vetlens predict: write output: %v\n", err)
					return ExitRejected
				}
				continue
			}
			// Measured, but the rendered file could not be written.
			fmt.Fprintf(stderr, "vetlens predict: %s: %v\n", file, err)
		}
		if r.LevelledDeg != 0 {
			// The spec's body has no field for it either.
			fmt.Fprintf(stderr, "vetlens predict: %s: spine tilted; measured turned by %.0f degrees\n", file, r.LevelledDeg)
		}
		if r.Guard != cardiac.GuardNone {
			// Why VHS or VLAS was withheld; the spec's body has no field for it.
			detail := ""
			if r.GuardDetail != "" {
				detail = ": " + r.GuardDetail
			}
			fmt.Fprintf(stderr, "vetlens predict: %s: result %d: %s (%s)%s\n", file, resp.ResultCode, r.Guard.Description(), r.Guard, detail)
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintf(stderr, "vetlens predict: write output: %v\n", err)
			return ExitRejected
		}
	}
	return status
}

// predictFile measures one file with the API's single-image use case and
// returns its body and the engine's result (whose Guard and GuardDetail
// say why VHS or VLAS was withheld). A nil response (and result) means the
// file could not be measured; a response with an error means rendering
// failed.
func predictFile(ctx context.Context, svc *app.Service, file, renderOut string) (*api.CardiacResponse, *cardiac.Result, error) {
	b, err := readLimited(file, MaxInputFileBytes)
	if err != nil {
		return nil, nil, err
	}
	// Screen photos are detected and perspective-corrected first
	// (docs/pop.md); anything else is measured as it is.
	resp, r, err := svc.Cardiac.PredictLocal(ctx, b, cardiac.PredictOptions{Render: renderOut != ""})
	if err != nil {
		return nil, nil, err
	}
	resp.RenderedImage = "" // written to renderOut instead of stdout
	if renderOut != "" && r.Rendered != nil {
		if err := os.WriteFile(renderOut, r.Rendered, 0o644); err != nil {
			return resp, r, fmt.Errorf("write rendered image: %w", err)
		}
	}
	return resp, r, nil
}

// readLimited reads a whole file, refusing files over limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: file larger than %d MiB", path, limit>>20)
	}
	return b, nil
}

// renderPath names the rendered image for input i of n: out itself for a
// single input, otherwise out with -i+1 before its extension.
func renderPath(out string, i, n int) string {
	if out == "" || n == 1 {
		return out
	}
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(out, ext), i+1, ext)
}
