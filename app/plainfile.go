package app

import (
	"context"
	"fmt"
)

// FromFiles tells the session that its frames come from image files (a
// folder or a file as the capture source, not a camera or a video): a
// frame that is a radiograph file (PoP.PlainFile: grey, and not taken for
// a photograph of a screen) is then measured as the file it is
// (MeasureDesktop: as it is, aspect ratio kept, no screen looked for) and
// completes the session, instead of failing it for want of a screen.
func (d *DesktopSession) FromFiles() { d.files = true }

// MeasuredAsFile reports whether the session's result is a radiograph
// file measured as a file (FromFiles).
func (d *DesktopSession) MeasuredAsFile() bool { return d.asFile }

// plainFile reports whether a frame of a session from files is a
// radiograph file (PoP.PlainFile); an undecodable frame is not, and goes
// to the session, which reports it as a bad frame.
func (d *DesktopSession) plainFile(ctx context.Context, frame []byte) bool {
	plain, err := d.svc.pop.PlainFile(ctx, frame)
	return err == nil && plain
}

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
