package pop

import (
	"fmt"
	"image"
	"math"

	"gocv.io/x/gocv"
)

// Frame-quality criterion (docs/pop.md, "Frame quality"). A frame passes
// when every measure is inside its bound; the capture session additionally
// needs the landmark ensemble to be confident.
const (
	// qualityWidth is the width the rectified area is resized to before
	// the measures, so they do not depend on the camera's resolution.
	qualityWidth = 512
	// MinSharpness is the least variance of the Laplacian (3x3 kernel,
	// grey levels squared) of the rectified image at its own resolution
	// after a 5x5, sigma 1 Gaussian. On training composites heavy
	// defocus and motion (sigma 9-16 px, 20-40 px) reached at most 25 and
	// usable frames at least 32.
	MinSharpness = 28.0
	// MaxGlare is the largest share of the rectified area at grey level
	// 250 or more. Radiographs have legitimately white areas (collimation,
	// bone, burned-in text), so the bound is loose: it catches a washed-out
	// frame, and the landmark ensemble's confidence catches glare over
	// the heart or spine. It was 0.25 until development sequences (seeds
	// 31,600,000 and 32,600,000) showed bright phantoms at 0.26-0.41 in
	// every frame of usable sequences, measured with code 1 and agreeing
	// VHS; no frame of 30 unusable-only development sequences reached 0.25.
	MaxGlare = 0.45
	// MinExposure and MaxExposure bound the rectified area's mean grey
	// level.
	MinExposure, MaxExposure = 25.0, 230.0
	// MinScreenShare is the least share of the frame the displayed area
	// must cover.
	MinScreenShare = 0.04
	// MaxTilt is the largest angle, in degrees, between the screen's
	// normal and the camera axis (estimated with the focal length from
	// Aspect, so a few degrees uncertain).
	MaxTilt = 50.0
)

// Quality holds the frame-quality measures of a rectified display area.
type Quality struct {
	Sharpness   float64 // variance of the Laplacian (see MinSharpness)
	Glare       float64 // share of pixels >= 250
	Exposure    float64 // mean grey level
	ScreenShare float64 // quad area / frame area
	Tilt        float64 // degrees
	// Problems names each failed measure ("blurred", "glare",
	// "underexposed", "overexposed", "screen_too_small", "too_tilted");
	// empty when the frame passes.
	Problems []string
}

// OK reports whether every measure passed.
func (q Quality) OK() bool { return len(q.Problems) == 0 }

// Measure computes the quality of the rectified display area rect (BGR or
// grey) for a quad q found in a w x h frame.
func Measure(rect gocv.Mat, q Quad, w, h int) (Quality, error) {
	g := gocv.NewMat()
	defer g.Close()
	if rect.Channels() == 3 {
		gocv.CvtColor(rect, &g, gocv.ColorBGRToGray)
	} else {
		rect.CopyTo(&g)
	}
	if g.Cols() < 2 || g.Rows() < 2 {
		return Quality{}, fmt.Errorf("quality: rectified image %dx%d too small", g.Cols(), g.Rows())
	}
	// Sharpness at the rectified image's own resolution (blur is measured
	// in the camera's pixels), after a light Gaussian that takes out the
	// sensor noise the Laplacian would amplify.
	sm := gocv.NewMat()
	defer sm.Close()
	gocv.GaussianBlur(g, &sm, image.Point{5, 5}, 1, 1, gocv.BorderDefault)
	lap := gocv.NewMat()
	defer lap.Close()
	gocv.Laplacian(sm, &lap, gocv.MatTypeCV16S, 3, 1, 0, gocv.BorderDefault)
	sh := int(math.Max(2, math.Round(float64(g.Rows())*qualityWidth/float64(g.Cols()))))
	gocv.Resize(g, &g, image.Point{qualityWidth, sh}, 0, 0, gocv.InterpolationArea)
	mean, std := gocv.NewMat(), gocv.NewMat()
	defer mean.Close()
	defer std.Close()
	gocv.MeanStdDev(lap, &mean, &std)
	sd := std.GetDoubleAt(0, 0)
	gr, err := grayView(g)
	if err != nil {
		return Quality{}, err
	}
	var sum float64
	bright := 0
	for _, v := range gr.pix {
		sum += float64(v)
		if v >= 250 {
			bright++
		}
	}
	n := float64(len(gr.pix))
	_, f := Aspect(q, w, h)
	out := Quality{
		Sharpness:   sd * sd,
		Glare:       float64(bright) / n,
		Exposure:    sum / n,
		ScreenShare: q.Area() / float64(w*h),
		Tilt:        Tilt(q, w, h, f),
	}
	if out.Sharpness < MinSharpness {
		out.Problems = append(out.Problems, "blurred")
	}
	if out.Glare > MaxGlare {
		out.Problems = append(out.Problems, "glare")
	}
	if out.Exposure < MinExposure {
		out.Problems = append(out.Problems, "underexposed")
	}
	if out.Exposure > MaxExposure {
		out.Problems = append(out.Problems, "overexposed")
	}
	if out.ScreenShare < MinScreenShare {
		out.Problems = append(out.Problems, "screen_too_small")
	}
	if out.Tilt > MaxTilt {
		out.Problems = append(out.Problems, "too_tilted")
	}
	return out, nil
}
