// Delivering frames: reading, converting and pacing them.

package camera

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/jpeg" // header checks
	_ "image/png"
	"io"

	"gocv.io/x/gocv"
)

// Next returns the next frame: io.EOF at the end of a file source without
// Loop, ErrClosed after Close, ctx's error when ctx ends while the frame
// waits for its time.
func (s *Source) Next(ctx context.Context) (Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Frame{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Frame{}, err
	}
	if err := s.advance(); err != nil {
		return Frame{}, err
	}
	f, err := s.convert()
	if err != nil {
		return Frame{}, err
	}
	if err := s.pace(ctx); err != nil {
		return Frame{}, err
	}
	f.Index, f.Time = s.index, s.opts.clock.Now()
	s.index++
	return f, nil
}

// advance puts the next frame in s.mat.
func (s *Source) advance() error {
	if s.pending {
		s.pending = false
		return nil
	}
	switch s.kind {
	case KindDevice:
		if !s.cap.Read(&s.mat) || s.mat.Empty() {
			return fmt.Errorf("camera: %s stopped delivering frames", s.name)
		}
	case KindVideo:
		if s.cap.Read(&s.mat) && !s.mat.Empty() {
			return nil
		}
		if !s.opts.loop {
			return io.EOF
		}
		if err := s.openCapture(s.name); err != nil {
			return fmt.Errorf("camera: loop %s: %w", s.name, err)
		}
		s.pending = false
	case KindFolder:
		if s.readFile() {
			return nil
		}
		if !s.opts.loop {
			return io.EOF
		}
		s.pos = 0
		if !s.readFile() {
			return fmt.Errorf("%w: %s (every file was skipped)", ErrNoFrames, s.name)
		}
	case KindImage:
		if s.done && !s.opts.loop {
			return io.EOF
		}
		s.done = true
	}
	return nil
}

// convert makes the frame's RGBA image and JPEG from s.mat.
func (s *Source) convert() (Frame, error) {
	buf, err := gocv.IMEncodeWithParams(gocv.JPEGFileExt, s.mat, []int{gocv.IMWriteJpegQuality, JPEGQuality})
	if err != nil {
		return Frame{}, fmt.Errorf("camera: encode frame: %w", err)
	}
	jpg := bytes.Clone(buf.GetBytes())
	buf.Close()
	if len(jpg) == 0 {
		return Frame{}, fmt.Errorf("camera: encode frame: empty JPEG from a %dx%d frame", s.mat.Cols(), s.mat.Rows())
	}
	code := gocv.ColorBGRToRGBA
	switch s.mat.Channels() {
	case 1:
		code = gocv.ColorGrayToBGRA // the same bytes as RGBA for grey
	case 4:
		code = gocv.ColorBGRAToRGBA
	}
	gocv.CvtColor(s.mat, &s.rgba, code)
	data, err := s.rgba.DataPtrUint8()
	if err != nil {
		return Frame{}, fmt.Errorf("camera: convert frame: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, s.rgba.Cols(), s.rgba.Rows()))
	if len(data) != len(img.Pix) {
		return Frame{}, fmt.Errorf("camera: convert frame: %d bytes for a %dx%d RGBA image", len(data), s.rgba.Cols(), s.rgba.Rows())
	}
	copy(img.Pix, data)
	return Frame{Image: img, JPEG: jpg}, nil
}

// pace waits until the frame is due. The schedule starts at the first
// frame; when the consumer fell behind by more than a frame it restarts
// from now instead of bursting to catch up.
func (s *Source) pace(ctx context.Context) error {
	if s.period == 0 || s.kind == KindDevice {
		return nil
	}
	now := s.opts.clock.Now()
	if s.next.IsZero() || now.Sub(s.next) > s.period {
		s.next = now
	}
	if d := s.next.Sub(now); d > 0 {
		t := s.opts.clock.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
		}
	}
	s.next = s.next.Add(s.period)
	return nil
}
