package app

import (
	"context"
	"fmt"

	"vetlens/engine/pop"
)

// PlainFile reports whether an encoded frame (JPEG or PNG) read from an
// image file is a radiograph file rather than a photograph of a screen:
// it is grey (pop.Chroma below pop.MinChroma), as X-ray systems and
// viewers write radiographs and as a camera never photographs a screen.
// Only frames from files are asked (a folder or a file as the capture
// source): a monochrome camera would be grey too.
func PlainFile(frame []byte) (bool, error) {
	m, err := pop.DecodeFrame(frame)
	defer m.Close()
	if err != nil {
		return false, fmt.Errorf("plain file: %w", err)
	}
	return pop.Chroma(m) < pop.MinChroma, nil
}

// FromFiles tells the session that its frames come from image files (a
// folder or a file as the capture source, not a camera or a video): a
// frame that is a radiograph file (PlainFile) is then measured as the
// file it is (MeasureDesktop: as it is, aspect ratio kept, no screen
// looked for) and completes the session, instead of failing it for want
// of a screen.
func (d *DesktopSession) FromFiles() { d.files = true }

// MeasuredAsFile reports whether the session's result is a radiograph
// file measured as a file (FromFiles).
func (d *DesktopSession) MeasuredAsFile() bool { return d.asFile }

// measureFile measures a radiograph file frame as a file and completes
// the session with it.
func (d *DesktopSession) measureFile(ctx context.Context, frame []byte) (FrameOutcome, error) {
	m, err := d.svc.cardiacUse.MeasureDesktop(ctx, d.patientID, frame)
	if err != nil {
		return FrameOutcome{}, fmt.Errorf("measure the radiograph file: %w", err)
	}
	d.final, d.asFile = m, true
	return FrameOutcome{Status: StatusComplete, FramesProcessed: 1, GoodFrames: 1, Result: m.Result}, nil
}
