package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"vetlens/internal/config"

	"vetlens/api/cardiacv3"
	"vetlens/app"
)

const cornersUsage = `usage: vetlens corners FILE

Finds the display area of a photographed screen in a JPEG or PNG file and
prints the cardiac v3 /v3/corners body: corners [[x,y] x 4] in pixels,
order TL,TR,BR,BL, image_width, image_height, model_version, exactly as
the API answers it (the same use case in app). When no corners are found
confidently it prints {"error": ..., "status": 422, "file": ...} and exits
1 (the API answers 422 with that error).
`

// parseInterleaved parses flags that may come before or after positional
// arguments ("FILE -o OUT.jpg") and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// writeLine writes v as one JSON line.
func writeLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// oneFile parses the one-file command line of corners and preprocess,
// reads the file and opens the local service with the PoP geometry. ok
// false means the command is over, with the returned exit status (usage
// error or unreadable file; the error line is printed).
func oneFile(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (file string, img []byte, svc *app.Service, code int, ok bool) {
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", nil, nil, ExitOK, false
		}
		return "", nil, nil, ExitUsage, false
	}
	if len(files) != 1 {
		fs.Usage()
		return "", nil, nil, ExitUsage, false
	}
	b, err := readLimited(files[0], MaxInputFileBytes)
	if err != nil {
		return files[0], nil, nil, reportFileError(stdout, stderr, files[0], err), false
	}
	// The learned screen finder when its models are where the other
	// commands look (config.ModelsDir), as the API uses it.
	svc, _, err = openLocal(ctx, config.ModelsDir(""), "", localNeeds{pop: true})
	if err != nil {
		fmt.Fprintf(stderr, "vetlens %s: %v\n", fs.Name(), err)
		return files[0], nil, nil, ExitInternal, false
	}
	return files[0], b, svc, ExitOK, true
}

// Corners implements `vetlens corners FILE` through app.Service.Sessions.DetectCorners,
// the use case of /v3/corners.
func Corners(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corners", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, cornersUsage) }
	file, img, svc, code, ok := oneFile(ctx, fs, args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := svc.Sessions.DetectCorners(ctx, img)
	if err != nil {
		return reportFileError(stdout, stderr, file, err)
	}
	if err := writeLine(stdout, cardiacv3.NewCorners(c.Corners, c.ImageWidth, c.ImageHeight, c.ModelVersion)); err != nil {
		fmt.Fprintf(stderr, "vetlens corners: write output: %v\n", err)
		return ExitRejected
	}
	return ExitOK
}

const preprocessUsage = `usage: vetlens preprocess FILE [-o OUT.jpg]

Corner detection plus rectification of a photographed screen: prints the
cardiac v3 /v3/preprocess body (rectified_image, corners, order, width,
height, model_version) exactly as the API answers it (the same use case in
app). With -o the rectified JPEG is written to OUT.jpg and rectified_image
is left out of the printed body; without -o the body carries it as base64,
as the API does. When no corners are found confidently it prints
{"error": ..., "status": 422, "file": ...} and exits 1.
`

// Preprocess implements `vetlens preprocess FILE [-o OUT.jpg]` through
// app.Service.Sessions.Preprocess, the use case of /v3/preprocess.
func Preprocess(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preprocess", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, preprocessUsage) }
	out := fs.String("o", "", "write the rectified JPEG here (and leave it out of the JSON)")
	file, img, svc, code, ok := oneFile(ctx, fs, args, stdout, stderr)
	if !ok {
		return code
	}
	r, err := svc.Sessions.Preprocess(ctx, img)
	if err != nil {
		return reportFileError(stdout, stderr, file, err)
	}
	jpg := r.JPEG
	if *out != "" {
		if err := os.WriteFile(*out, jpg, 0o644); err != nil {
			fmt.Fprintf(stderr, "vetlens preprocess: %v\n", err)
			return ExitRejected
		}
		jpg = nil // written to the file, left out of the body
	}
	if err := writeLine(stdout, cardiacv3.NewRectified(jpg, r.Corners, r.Width, r.Height, r.ModelVersion)); err != nil {
		fmt.Fprintf(stderr, "vetlens preprocess: write output: %v\n", err)
		return ExitRejected
	}
	return ExitOK
}

// reportFileError prints the error line of file (errorLineOf) and
// returns ExitRejected.
func reportFileError(stdout, stderr io.Writer, file string, err error) int {
	if werr := writeLine(stdout, errorLineOf(file, err)); werr != nil {
		fmt.Fprintf(stderr, "vetlens: write output: %v\n", werr)
	}
	return ExitRejected
}
