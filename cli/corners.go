package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"vetlens/engine/pop"
)

const cornersUsage = `usage: vetlens corners FILE

Finds the display area of a photographed screen in a JPEG or PNG file and
prints the cardiac v3 /v3/corners body: corners [[x,y] x 4] in pixels,
order TL,TR,BR,BL, image_width, image_height, model_version. When no
corners are found confidently it prints {"error": ..., "status": 422} and
exits 1 (the API answers 422).
`

// CornersBody is the /v3/corners response body.
type CornersBody struct {
	Corners      [4][2]float64 `json:"corners"`
	Order        string        `json:"order"`
	ImageWidth   int           `json:"image_width"`
	ImageHeight  int           `json:"image_height"`
	ModelVersion string        `json:"model_version"`
}

// PreprocessBody is the /v3/preprocess response body. RectifiedImage is
// base64 JPEG; `vetlens preprocess -o` leaves it out (the image is in the
// file).
type PreprocessBody struct {
	RectifiedImage string        `json:"rectified_image,omitempty"`
	Corners        [4][2]float64 `json:"corners"`
	Order          string        `json:"order"`
	Width          int           `json:"width"`
	Height         int           `json:"height"`
	ModelVersion   string        `json:"model_version"`
}

// statusError is the JSON line printed when corners are not found.
type statusError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	File   string `json:"file"`
}

// errNoCorners is returned by findCorners when no quad is confident.
var errNoCorners = errors.New("corner detection failed")

func quadArray(q pop.Quad) [4][2]float64 {
	var out [4][2]float64
	for i, p := range q {
		out[i] = [2]float64{round2(p.X), round2(p.Y)}
	}
	return out
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

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

// analyzeOneFile parses the one-file command line and runs corner
// detection (and rectification) on the file. A nil analysis means the
// command is over, with the returned exit status: usage error, unreadable
// file, or no corners found (the 422 line is printed).
func analyzeOneFile(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (string, *pop.Analysis, int) {
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", nil, ExitOK
		}
		return "", nil, ExitUsage
	}
	if len(files) != 1 {
		fs.Usage()
		return "", nil, ExitUsage
	}
	a, err := analyzeFile(files[0])
	if err != nil {
		return files[0], nil, reportFileError(stdout, stderr, files[0], err)
	}
	if !a.Corners.Found {
		writeLine(stdout, statusError{Error: errNoCorners.Error(), Status: 422, File: files[0]})
		return files[0], nil, ExitRejected
	}
	return files[0], a, ExitOK
}

// Corners implements `vetlens corners FILE`.
func Corners(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("corners", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, cornersUsage) }
	_, a, code := analyzeOneFile(fs, args, stdout, stderr)
	if a == nil {
		return code
	}
	if err := writeLine(stdout, CornersBody{Corners: quadArray(a.Corners.Quad), Order: "TL,TR,BR,BL",
		ImageWidth: a.Corners.Width, ImageHeight: a.Corners.Height, ModelVersion: pop.Version}); err != nil {
		fmt.Fprintf(stderr, "vetlens corners: write output: %v\n", err)
		return ExitRejected
	}
	return ExitOK
}

const preprocessUsage = `usage: vetlens preprocess FILE [-o OUT.jpg]

Corner detection plus rectification of a photographed screen: prints the
cardiac v3 /v3/preprocess body (rectified_image, corners, order, width,
height, model_version). With -o the rectified JPEG is written to OUT.jpg
and rectified_image is left out of the printed body; without -o the body
carries it as base64, as the API does. When no corners are found
confidently it prints {"error": ..., "status": 422} and exits 1.
`

// Preprocess implements `vetlens preprocess FILE [-o OUT.jpg]`.
func Preprocess(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("preprocess", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, preprocessUsage) }
	out := fs.String("o", "", "write the rectified JPEG here (and leave it out of the JSON)")
	file, a, code := analyzeOneFile(fs, args, stdout, stderr)
	if a == nil {
		return code
	}
	jpg, w, h, err := rectifyFound(a)
	if err != nil {
		return reportFileError(stdout, stderr, file, err)
	}
	body := PreprocessBody{Corners: quadArray(a.Corners.Quad), Order: "TL,TR,BR,BL", Width: w, Height: h, ModelVersion: pop.Version}
	if *out != "" {
		if err := os.WriteFile(*out, jpg, 0o644); err != nil {
			fmt.Fprintf(stderr, "vetlens preprocess: %v\n", err)
			return ExitRejected
		}
	} else {
		body.RectifiedImage = base64.StdEncoding.EncodeToString(jpg)
	}
	if err := writeLine(stdout, body); err != nil {
		fmt.Fprintf(stderr, "vetlens preprocess: write output: %v\n", err)
		return ExitRejected
	}
	return ExitOK
}

// analyzeFile reads and analyses one file with the PoP pipeline.
func analyzeFile(file string) (*pop.Analysis, error) {
	b, err := readLimited(file, MaxInputFileBytes)
	if err != nil {
		return nil, err
	}
	m, err := pop.DecodeFrame(b)
	defer m.Close()
	if err != nil {
		return nil, err
	}
	c, err := pop.DetectCorners(m)
	if err != nil {
		return nil, err
	}
	if !c.Found {
		return &pop.Analysis{Corners: c}, nil
	}
	jpg, _, _, err := pop.RectifyJPEG(m, c.Quad)
	if err != nil {
		return nil, err
	}
	return &pop.Analysis{Corners: c, Corrected: true, RectifiedJPEG: jpg}, nil
}

// rectifyFound returns the rectified JPEG of an analysis and its size.
func rectifyFound(a *pop.Analysis) ([]byte, int, int, error) {
	w, h, err := pop.RectifiedSize(a.Corners.Quad, a.Corners.Width, a.Corners.Height)
	if err != nil {
		return nil, 0, 0, err
	}
	return a.RectifiedJPEG, w, h, nil
}

func reportFileError(stdout, stderr io.Writer, file string, err error) int {
	if werr := writeLine(stdout, errorLine{Error: err.Error(), File: file}); werr != nil {
		fmt.Fprintf(stderr, "vetlens: write output: %v\n", werr)
	}
	return ExitRejected
}
