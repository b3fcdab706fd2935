// Opening each kind of source, and reading frames from files.

package camera

import (
	"errors"
	"fmt"
	_ "image/jpeg" // header checks
	_ "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gocv.io/x/gocv"

	"vetlens/engine/pop"
)

func (s *Source) openDevice(n int) error {
	s.kind, s.device, s.name = KindDevice, n, "device:"+strconv.Itoa(n)
	if !deviceNodeMayExist(n) {
		return fmt.Errorf("%w: %s (no %s%d)", ErrNoDevice, s.name, deviceNode, n)
	}
	c, err := gocv.VideoCaptureDeviceWithAPI(n, deviceAPI)
	s.cap = c
	if err != nil || !c.IsOpened() {
		return fmt.Errorf("%w: %s cannot be opened", ErrNoDevice, s.name)
	}
	if !c.Read(&s.mat) || s.mat.Empty() {
		return fmt.Errorf("%w: %s delivered no frame", ErrNoDevice, s.name)
	}
	s.pending = true
	return nil
}

// deviceNodeMayExist is false where the system names its camera devices
// (deviceNode: Linux's /dev/videoN) and device n's is missing, so that
// probing an absent camera neither asks OpenCV (which logs a warning) nor
// takes time.
func deviceNodeMayExist(n int) bool {
	if deviceNode == "" {
		return true
	}
	_, err := os.Stat(deviceNode + strconv.Itoa(n))
	return err == nil
}

func (s *Source) openVideo(path string) error {
	s.kind = KindVideo
	if err := s.openCapture(path); err != nil {
		return err
	}
	fps := s.cap.Get(gocv.VideoCaptureFPS)
	if math.IsNaN(fps) || fps <= 0 || fps > 1000 {
		fps = DefaultFPS
	}
	s.setPace(fps)
	return nil
}

// openCapture (re)opens the video file and reads its first frame.
func (s *Source) openCapture(path string) error {
	if s.cap != nil {
		s.cap.Close()
		s.cap = nil
	}
	c, err := gocv.VideoCaptureFile(path)
	s.cap = c
	if err != nil || !c.IsOpened() {
		return fmt.Errorf("%w: %s: OpenCV cannot open it as a video", ErrUnreadable, path)
	}
	if !c.Read(&s.mat) || s.mat.Empty() {
		return fmt.Errorf("%w: %s: no video frame could be decoded", ErrUnreadable, path)
	}
	s.pending = true
	return nil
}

func (s *Source) openFolder(dir string) error {
	s.kind = KindFolder
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("camera: read folder: %w", err)
	}
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".jpg", ".jpeg", ".png":
			if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
				s.files = append(s.files, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(s.files)
	if len(s.files) == 0 {
		return fmt.Errorf("%w: %s holds no .jpg, .jpeg or .png files", ErrNoFrames, dir)
	}
	s.setPace(DefaultFPS)
	// Decode the first readable image now: a folder of broken files fails
	// here rather than at the first Next.
	if !s.readFile() {
		return fmt.Errorf("%w: %s (%d files skipped: %v)", ErrNoFrames, dir, len(s.skipped), errors.Join(s.skipped...))
	}
	s.pending = true
	return nil
}

func (s *Source) openImage(path string) error {
	s.kind = KindImage
	m, err := decodeFile(path)
	if err != nil {
		return err
	}
	s.mat.Close()
	s.mat = m
	s.setPace(DefaultFPS)
	return nil
}

func (s *Source) setPace(native float64) {
	switch {
	case s.opts.noPacing:
		s.period = 0
	case s.opts.fps > 0:
		s.period = time.Duration(float64(time.Second) / s.opts.fps)
	default:
		s.period = time.Duration(float64(time.Second) / native)
	}
}

// decodeFile reads a JPEG or PNG file into a BGR Mat (the caller closes
// it), within MaxImageFileBytes and imageproc's pixel limits.
func decodeFile(path string) (gocv.Mat, error) {
	f, err := os.Open(path)
	if err != nil {
		return gocv.Mat{}, fmt.Errorf("camera: open %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxImageFileBytes+1))
	f.Close()
	if err != nil {
		return gocv.Mat{}, fmt.Errorf("camera: read %s: %w", path, err)
	}
	if len(b) > MaxImageFileBytes {
		return gocv.Mat{}, fmt.Errorf("%w: %s is larger than %d MiB", ErrUnreadable, path, MaxImageFileBytes>>20)
	}
	m, err := pop.DecodeFrame(b)
	if err != nil {
		m.Close() // DecodeFrame hands back a Mat to close on error too
		return gocv.Mat{}, fmt.Errorf("%w: %s: %w", ErrUnreadable, path, err)
	}
	return m, nil
}

// readFile decodes the folder's next readable file into s.mat, dropping
// unreadable (or vanished) files from the list. False at the end of the
// list.
func (s *Source) readFile() bool {
	for s.pos < len(s.files) {
		path := s.files[s.pos]
		m, err := decodeFile(path)
		if err != nil {
			s.skipped = append(s.skipped, err)
			s.files = append(s.files[:s.pos], s.files[s.pos+1:]...)
			continue
		}
		s.mat.Close()
		s.mat = m
		s.pos++
		return true
	}
	return false
}
