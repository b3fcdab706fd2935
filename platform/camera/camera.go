// Package camera is the frame source of the desktop Capture screen and of
// `vetlens capture`: a camera device, a video file, a folder of images or
// one image, read with GoCV (OpenCV) and delivered as live.Frame values
// (the decoded RGBA image for the preview and a JPEG for the engine).
// *Source satisfies live.Source.
//
// Source specs (Open):
//
//	device:N        camera device index N (0 is the default camera), opened
//	                with the system's OpenCV backend (deviceAPI: any on
//	                Linux, DirectShow on Windows)
//	PATH            a directory: its JPEG and PNG files (.jpg, .jpeg, .png,
//	                any case) in name order; a JPEG or PNG file (recognised
//	                by its signature, not its name): that one image; any
//	                other file: a video, whatever OpenCV's backends read
//	                (MJPG .avi always)
//	file:PATH       PATH as above, for a path that starts with "device:"
//
// Pacing: a video plays at its native frame rate (15 fps when the file
// does not say), a folder or an image at 15 fps; FPS overrides both and
// NoPacing delivers frames as fast as they decode (tests, batch runs). A
// device delivers at its own rate. Pacing follows a schedule from the
// first frame, so decoding time does not slow playback; a consumer that
// falls behind gets the next frame at once, never a burst.
//
// Ends: Next returns io.EOF after the last frame of a video, folder or
// image; with Loop it starts over instead (Frame.Index keeps counting). A
// device never ends; a device that stops delivering is an error.
//
// Bad input: a missing path, a video OpenCV cannot decode, an empty
// folder, a folder without one decodable image, an undecodable image file
// and a device that cannot be opened or delivers no first frame fail in
// Open. In a folder, a file that cannot be decoded (corrupt, truncated,
// too large) is skipped and dropped from the folder's list; Skipped reports
// them.
//
// Every gocv.Mat the package creates is closed: per-frame Mats before Next
// returns, the Source's own buffers in Close.
package camera

import (
	"bytes"
	"errors"
	"fmt"
	_ "image/jpeg" // header checks
	_ "image/png"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocv.io/x/gocv"

	"vetlens/app/live"
	"vetlens/internal/clock"
)

// Frame is live.Frame: the RGBA image (new for every frame; consumers may
// keep it and must not modify it), the JPEG, the index and the time.
type Frame = live.Frame

var _ live.Source = (*Source)(nil)

// Kind is what a Source reads.
type Kind int

// Source kinds.
const (
	KindDevice Kind = iota // a camera device
	KindVideo              // a video file
	KindFolder             // a folder of JPEG/PNG images
	KindImage              // one JPEG/PNG image
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindDevice:
		return "device"
	case KindVideo:
		return "video"
	case KindFolder:
		return "folder"
	case KindImage:
		return "image"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Pacing and encoding defaults.
const (
	// DefaultFPS paces folders, images and videos whose file gives no
	// frame rate.
	DefaultFPS = 15
	// JPEGQuality is the quality of Frame.JPEG.
	JPEGQuality = 90
	// MaxImageFileBytes is the largest image file a folder or image
	// source reads (imageproc's pixel limits apply as well).
	MaxImageFileBytes = 64 << 20
)

// Errors of Open and Next (match with errors.Is). A missing path wraps
// fs.ErrNotExist instead.
var (
	// ErrBadSpec: the spec is empty or "device:" is not followed by a
	// non-negative integer.
	ErrBadSpec = errors.New("camera: bad source spec")
	// ErrNoDevice: the camera device does not exist, cannot be opened or
	// delivers no frame.
	ErrNoDevice = errors.New("camera: camera device unavailable")
	// ErrUnreadable: a video or image OpenCV cannot decode.
	ErrUnreadable = errors.New("camera: not a decodable video or image")
	// ErrNoFrames: a folder without a decodable JPEG or PNG image.
	ErrNoFrames = errors.New("camera: no decodable images in the folder")
	// ErrClosed: Next after Close.
	ErrClosed = errors.New("camera: source closed")
)

// Option changes how Open reads a source.
type Option func(*options)

type options struct {
	loop, noPacing bool
	fps            float64
	clock          clock.Clock
}

// Loop starts a video, folder or image over at its end instead of
// returning io.EOF (the preview loops; capture sessions on a looping file
// see earlier frames again, which they reject as duplicates).
func Loop() Option { return func(o *options) { o.loop = true } }

// NoPacing delivers file frames as fast as they decode.
func NoPacing() Option { return func(o *options) { o.noPacing = true } }

// FPS paces a video, folder or image at fps frames a second instead of
// its native or default rate (fps <= 0 is ignored).
func FPS(fps float64) Option {
	return func(o *options) {
		if fps > 0 && !math.IsInf(fps, 0) {
			o.fps = fps
		}
	}
}

// WithClock paces file frames and stamps Frame.Time on c instead of the
// wall clock (tests use a fake one).
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// Source yields frames from a device, video, folder or image. Next is
// called from one goroutine at a time; Close may be called from any
// goroutine (it waits for a Next in progress).
type Source struct {
	mu     sync.Mutex
	kind   Kind
	name   string // the device index or path, for errors
	opts   options
	period time.Duration // 0: no pacing
	closed bool

	cap     *gocv.VideoCapture // device, video
	device  int
	mat     gocv.Mat // the last frame read (device, video, folder) or the image
	pending bool     // mat holds a frame not yet delivered (read by Open)
	rgba    gocv.Mat // conversion buffer

	files   []string // folder, in name order
	pos     int      // next file
	skipped []error
	done    bool // image delivered (without Loop)

	index int
	next  time.Time // pacing: when the next frame is due
}

// Open opens the source a spec names (see the package comment).
func Open(spec string, opts ...Option) (*Source, error) {
	s := &Source{mat: gocv.NewMat(), rgba: gocv.NewMat()}
	for _, o := range opts {
		o(&s.opts)
	}
	s.opts.clock = clock.Or(s.opts.clock)
	if err := s.open(spec); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

func (s *Source) open(spec string) error {
	if spec == "" {
		return fmt.Errorf("%w: empty", ErrBadSpec)
	}
	if rest, ok := strings.CutPrefix(spec, "device:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %q: want device:N with N >= 0", ErrBadSpec, spec)
		}
		return s.openDevice(n)
	}
	path := strings.TrimPrefix(spec, "file:")
	s.name = path
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("camera: open %w", err)
	}
	if st.IsDir() {
		return s.openFolder(path)
	}
	isImage, err := sniffImage(path)
	if err != nil {
		return err
	}
	if isImage {
		return s.openImage(path)
	}
	return s.openVideo(path)
}

// sniffImage tells a JPEG or PNG file by its signature.
func sniffImage(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("camera: open %w", err)
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}) || bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")), nil
}

// Kind is what the source reads.
func (s *Source) Kind() Kind { return s.kind }

// Skipped lists the folder files skipped so far because they could not be
// decoded (each error names the file; a corrupt or oversized one wraps
// ErrUnreadable). A skipped
// file is dropped from the folder's list, so it is reported once.
func (s *Source) Skipped() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.skipped...)
}

// Close releases the capture and the buffers. It waits for a Next in
// progress; later calls do nothing.
func (s *Source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.release()
	return nil
}

func (s *Source) release() {
	if s.cap != nil {
		s.cap.Close()
		s.cap = nil
	}
	s.mat.Close()
	s.rgba.Close()
}

// Device is a camera device OpenCV can open.
type Device struct {
	// Index is the device index; Spec ("device:N") opens it.
	Index int
	Spec  string
	// Width and Height are the frame size it reports (0 when unknown).
	Width, Height int
}

// ListDevices probes device indices 0..max-1 and lists those OpenCV can
// open, closing each again. On Linux an index without /dev/videoN is not
// probed, so with no camera it returns at once (an empty list).
func ListDevices(max int) []Device {
	var out []Device
	for i := 0; i < max; i++ {
		if !deviceNodeMayExist(i) {
			continue
		}
		c, err := gocv.VideoCaptureDeviceWithAPI(i, deviceAPI)
		if err == nil && c.IsOpened() {
			out = append(out, Device{Index: i, Spec: "device:" + strconv.Itoa(i),
				Width: int(c.Get(gocv.VideoCaptureFrameWidth)), Height: int(c.Get(gocv.VideoCaptureFrameHeight))})
		}
		c.Close()
	}
	return out
}
