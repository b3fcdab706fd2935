// Package pop is the picture-of-picture (PoP) pipeline: it finds the
// display area of a photographed monitor (corners TL, TR, BR, BL with a
// confidence), tells photos of a screen from radiograph files, rectifies
// the display area to its true aspect with a perspective warp, and measures
// frame quality on the rectified area. It is pure computation on GoCV
// (OpenCV) Mats; every Mat it creates is closed before it returns, except
// those it hands to the caller, who closes them.
//
// docs/pop.md describes the method, the thresholds and the measured
// accuracy.
package pop

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // header checks
	_ "image/png"

	"gocv.io/x/gocv"

	"vetlens/engine/imageproc"
)

// MinChroma is the mean per-pixel colour difference (|B-G| + |G-R|, grey
// levels, on a 320-pixel copy) from which an image counts as a colour
// photograph. Radiograph files are grey (0, or under 1 after JPEG
// chroma subsampling); camera photos carry sensor noise and colour casts.
const MinChroma = 1.5

// chromaSide is the long side of the copy chroma is measured on.
const chromaSide = 320

// DecodeFrame decodes JPEG, PNG or DICOM bytes into an 8-bit BGR Mat
// after checking the header against imageproc's limits (its sentinel
// errors come back wrapped). A DICOM file is read by imageproc (its first
// frame as grey). The caller closes the Mat.
func DecodeFrame(b []byte) (gocv.Mat, error) {
	cfg, format, err := imageproc.CheckHeader(b)
	if err != nil {
		return gocv.NewMat(), fmt.Errorf("decode frame: %w", err)
	}
	if format == "dicom" {
		return decodeDICOMFrame(b)
	}
	// OpenCV would turn the picture upright by its EXIF orientation
	// itself, but imageproc.Decode does it for the Go path: one reading of
	// the tag (ReadOrientation) for both, so a frame and its Go decode
	// always show the same picture.
	o := imageproc.ReadOrientation(b)
	rw, rh := o.Displayed(cfg.Width, cfg.Height) // the stored size; a swap undoes itself
	m, err := gocv.IMDecode(b, gocv.IMReadColor|gocv.IMReadIgnoreOrientation)
	if err != nil || m.Empty() {
		m.Close()
		return gocv.NewMat(), fmt.Errorf("decode frame: %w", imageproc.ErrCorrupt)
	}
	if w, h := m.Cols(), m.Rows(); w != rw || h != rh {
		m.Close()
		return gocv.NewMat(), fmt.Errorf("decode frame: %w: size %dx%d, header %dx%d", imageproc.ErrCorrupt, w, h, rw, rh)
	}
	return orientMat(m, o), nil
}

// orientMat returns m shown upright for EXIF orientation o, closing m when
// it makes a new Mat. The caller closes the result.
func orientMat(m gocv.Mat, o imageproc.Orientation) gocv.Mat {
	if o < imageproc.OrientMirrorX || o > imageproc.OrientRotate90CCW {
		return m
	}
	defer m.Close()
	out := gocv.NewMat()
	switch o {
	case imageproc.OrientMirrorX:
		gocv.Flip(m, &out, 1)
	case imageproc.OrientRotate180:
		gocv.Rotate(m, &out, gocv.Rotate180Clockwise)
	case imageproc.OrientMirrorY:
		gocv.Flip(m, &out, 0)
	case imageproc.OrientTranspose:
		gocv.Transpose(m, &out)
	case imageproc.OrientRotate90CW:
		gocv.Rotate(m, &out, gocv.Rotate90Clockwise)
	case imageproc.OrientTransverse:
		gocv.Rotate(m, &out, gocv.Rotate180Clockwise)
		t := gocv.NewMat()
		gocv.Transpose(out, &t)
		out.Close()
		out = t
	case imageproc.OrientRotate90CCW:
		gocv.Rotate(m, &out, gocv.Rotate90CounterClockwise)
	}
	return out
}

// decodeDICOMFrame decodes a DICOM file's first frame (imageproc) into
// an 8-bit BGR Mat.
func decodeDICOMFrame(b []byte) (gocv.Mat, error) {
	img, _, err := imageproc.Decode(b)
	if err != nil {
		return gocv.NewMat(), fmt.Errorf("decode frame: %w", err)
	}
	g, ok := img.(*image.Gray)
	if !ok {
		return gocv.NewMat(), fmt.Errorf("decode frame: %w: DICOM decoded to %T", imageproc.ErrCorrupt, img)
	}
	bd := g.Bounds()
	gray, err := gocv.NewMatFromBytes(bd.Dy(), bd.Dx(), gocv.MatTypeCV8UC1, tightGray(g))
	if err != nil {
		return gocv.NewMat(), fmt.Errorf("decode frame: %w", err)
	}
	defer gray.Close()
	bgr := gocv.NewMat()
	gocv.CvtColor(gray, &bgr, gocv.ColorGrayToBGR)
	return bgr, nil
}

// tightGray is g's pixels without row padding.
func tightGray(g *image.Gray) []byte {
	bd := g.Bounds()
	if g.Stride == bd.Dx() {
		return g.Pix[:bd.Dx()*bd.Dy()]
	}
	out := make([]byte, 0, bd.Dx()*bd.Dy())
	for y := range bd.Dy() {
		out = append(out, g.Pix[y*g.Stride:y*g.Stride+bd.Dx()]...)
	}
	return out
}

// Chroma is the mean |B-G| + |G-R| of a BGR frame on a small copy; 0 for a
// grey Mat.
func Chroma(frame gocv.Mat) float64 {
	if frame.Channels() != 3 {
		return 0
	}
	s := float64(chromaSide) / float64(max(frame.Cols(), frame.Rows()))
	small := gocv.NewMat()
	defer small.Close()
	if s < 1 {
		gocv.Resize(frame, &small, image.Point{max(1, int(float64(frame.Cols())*s)), max(1, int(float64(frame.Rows())*s))}, 0, 0, gocv.InterpolationNearestNeighbor)
	} else {
		frame.CopyTo(&small)
	}
	b := small.ToBytes()
	var sum float64
	for i := 0; i+2 < len(b); i += 3 {
		sum += absDiff(b[i], b[i+1]) + absDiff(b[i+1], b[i+2])
	}
	return sum / float64(len(b)/3)
}

// frameHashSide is the long side of the copy FrameHash hashes.
const frameHashSide = 256

// FrameHash is the SHA-256 of the decoded frame's size and of a copy
// downscaled to frameHashSide pixels on its long side by nearest-
// neighbour sampling. It depends on the pixels, not the encoding: bytes
// appended to the file, other metadata or a lossless re-encoding give the
// same hash, so a session can tell the same photograph sent again.
// Nearest-neighbour sampling keeps each sampled pixel's sensor noise (an
// area average would smooth it away), so two camera frames of a still
// screen still differ. A lossy re-encoding changes the pixels and is not
// caught.
func FrameHash(frame gocv.Mat) [32]byte {
	small := gocv.NewMat()
	defer small.Close()
	s := float64(frameHashSide) / float64(max(frame.Cols(), frame.Rows()))
	if s < 1 {
		gocv.Resize(frame, &small, image.Point{max(1, int(float64(frame.Cols())*s)), max(1, int(float64(frame.Rows())*s))}, 0, 0, gocv.InterpolationNearestNeighbor)
	} else {
		frame.CopyTo(&small)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%dx%dx%d:", frame.Cols(), frame.Rows(), frame.Channels())
	h.Write(small.ToBytes())
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func absDiff(a, b uint8) float64 {
	if a > b {
		return float64(a - b)
	}
	return float64(b - a)
}

// Analysis is what the pipeline learns about one frame.
type Analysis struct {
	// FrameHash identifies the decoded frame (FrameHash): the same
	// picture sent twice, whatever its bytes, has the same hash.
	FrameHash [32]byte
	Corners   Corners
	// Chroma is the frame's colourfulness (Chroma).
	Chroma float64
	// FileFrame: the screen candidate is the file's own frame (a border,
	// collimation or crop edge on the pixel grid, Corners.FileFrame), so
	// the frame is a radiograph file, not a screen photo.
	FileFrame bool
	// PoPDetected: the frame is taken for a photograph of a screen
	// (ScreenPhoto for the learned pipeline: colour, or grey on stronger
	// evidence; the classical pipeline: a colour frame showing a screen
	// candidate with confidence >= SuspectConfidence that is not the
	// file's own frame).
	PoPDetected bool
	// PossibleScreen: not PoPDetected, yet the frame may be a screen
	// photographed at an angle (PossibleScreen, learned pipeline only): a
	// measurement of it as a plain file would carry the perspective, so
	// the caller withholds its numbers.
	PossibleScreen bool
	// Corrected: PoPDetected, the corners were found confidently and the
	// display area was rectified.
	Corrected bool
	// Rectified is the display area warped upright (BGR); nil unless
	// Corrected.
	Rectified image.Image
	// RectifiedJPEG is Rectified encoded as JPEG, once EncodeRectified has
	// run: analysing a frame leaves it empty, because most frames of a
	// capture session are never kept and encoding cost about 5 % of a
	// frame's CPU.
	RectifiedJPEG []byte
	// Quality is measured on the rectified area when Corrected.
	Quality Quality
	// Failure says why correction failed when PoPDetected && !Corrected.
	Failure string
	// Learned holds the learned finder's measures; nil for the classical
	// pipeline.
	Learned *Learned
}

// JPEGQuality is the quality rectified images are encoded at.
const JPEGQuality = 92

// Analyze runs corner detection, PoP detection, rectification and frame
// quality on a decoded BGR frame with the classical pipeline (no model
// files; Models.Analyze is the learned one).
func Analyze(frame gocv.Mat) (*Analysis, error) {
	c, err := DetectCorners(frame)
	if err != nil {
		return nil, fmt.Errorf("detect corners: %w", err)
	}
	a := &Analysis{FrameHash: FrameHash(frame), Corners: c, Chroma: Chroma(frame), FileFrame: c.FileFrame()}
	a.PoPDetected = a.Chroma >= MinChroma && c.Confidence >= SuspectConfidence && !a.FileFrame
	if !a.PoPDetected {
		return a, nil
	}
	if !c.Found {
		a.Failure = fmt.Sprintf("screen corners not found confidently (confidence %.2f < %.2f)", c.Confidence, FoundConfidence)
		return a, nil
	}
	rw, rh, err := RectifiedSize(c.Quad, c.Width, c.Height)
	if err != nil {
		a.Failure = err.Error()
		return a, nil
	}
	return a, a.rectify(frame, rw, rh, nil)
}

// PlainFile reports whether the analysed frame, read from an image file,
// is a radiograph file rather than a photograph of a screen: grey (Chroma
// under MinChroma), as X-ray systems and viewers write radiographs, and
// not taken for a screen photo all the same (PoPDetected: a grey photo of
// a screen, a camera's monochrome mode, on ScreenPhoto's stronger
// evidence). It is the one rule for frames from files; a colour frame is
// never a plain file, since a camera's frames are in colour.
func (a *Analysis) PlainFile() bool { return a.Chroma < MinChroma && !a.PoPDetected }

// EncodeRectified sets RectifiedJPEG to Rectified encoded as JPEG at
// JPEGQuality (the same bytes as encoding the rectified Mat), unless it is
// set already. It fails when nothing was rectified.
func (a *Analysis) EncodeRectified() error {
	if len(a.RectifiedJPEG) > 0 {
		return nil
	}
	var m gocv.Mat
	var err error
	switch img := a.Rectified.(type) {
	case nil:
		return errors.New("encode rectified image: the frame was not rectified")
	case *image.Gray:
		m, err = gocv.ImageGrayToMatGray(img)
	default:
		m, err = gocv.ImageToMatRGB(img)
	}
	defer m.Close()
	if err != nil {
		return fmt.Errorf("encode rectified image: %w", err)
	}
	if a.RectifiedJPEG, err = EncodeJPEG(m, JPEGQuality); err != nil {
		return fmt.Errorf("encode rectified image: %w", err)
	}
	return nil
}

// rectify warps the found quad to rw x rh and measures its quality (then
// calls extra, when given, to add problems), setting Corrected; the JPEG
// is left to EncodeRectified.
func (a *Analysis) rectify(frame gocv.Mat, rw, rh int, extra func(*Quality)) error {
	c := a.Corners
	rect, err := Rectify(frame, c.Quad, rw, rh)
	defer rect.Close()
	if err != nil {
		a.Failure = err.Error()
		return nil
	}
	if a.Quality, err = Measure(rect, c.Quad, c.Width, c.Height); err != nil {
		return err
	}
	if extra != nil {
		extra(&a.Quality)
	}
	if a.Rectified, err = rect.ToImage(); err != nil {
		return fmt.Errorf("rectified image: %w", err)
	}
	a.Corrected = true
	return nil
}

// AnalyzeBytes decodes a JPEG or PNG frame (DecodeFrame) and analyses it.
func AnalyzeBytes(b []byte) (*Analysis, error) {
	m, err := DecodeFrame(b)
	defer m.Close()
	if err != nil {
		return nil, err
	}
	return Analyze(m)
}

// Version is the classical PoP pipeline's model_version for the corners,
// rectify and preprocess bodies; with the learned models loaded the
// family's version (Models.Version) is reported instead.
const Version = "pop-geometry-1"

// DetectCornersBytes decodes a JPEG or PNG frame (DecodeFrame) and finds
// its corners with the classical detector (DetectCorners).
func DetectCornersBytes(b []byte) (Corners, error) {
	f, err := DecodeFrame(b)
	defer f.Close()
	if err != nil {
		return Corners{}, err
	}
	return DetectCorners(f)
}
