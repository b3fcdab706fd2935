package app

import (
	"context"
	"fmt"
)

// DesktopSession is a capture session run from the desktop (live camera
// frames). Frame implements the live runner's frame sink.
type DesktopSession struct {
	svc       *Sessions
	id        string
	patientID PatientID
	// Config is the session's limits.
	Config SessionConfig

	final *Measurement
	// files is set when the frames come from image files (FromFiles);
	// asFile when the result is such a file measured as a file.
	files, asFile bool
}

// StartDesktopSession opens a PoP capture session for the desktop; a
// completed session is metered at the session rate for patientID.
func (s *Sessions) StartDesktopSession(ctx context.Context, patientID PatientID) (*DesktopSession, error) {
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	if err := s.accounts.ensureDesktop(ctx); err != nil {
		return nil, err
	}
	st, err := s.StartSession(ctx, DesktopCaller())
	if err != nil {
		return nil, err
	}
	return &DesktopSession{svc: s, id: st.SessionID, patientID: patientID, Config: st.SessionConfig}, nil
}

// ID is the session id.
func (d *DesktopSession) ID() string { return d.id }

// Frame feeds one JPEG frame. On StatusComplete the session's measurement
// (rectified image, final result, billing) is available from Result; it
// is not recorded in history until SaveMeasurement.
func (d *DesktopSession) Frame(ctx context.Context, jpeg []byte) (FrameOutcome, error) {
	if d.files {
		if d.plainFile(ctx, jpeg) {
			return d.measureFile(ctx, jpeg)
		}
	}
	body, out, err := d.svc.sessionFrame(ctx, DesktopCaller(), d.id, jpeg, d.patientID.String(), sessionDesktop)
	if err != nil {
		return out, err
	}
	if out.Status == StatusComplete && out.Result != nil {
		img, release, err := d.svc.decodeReserved(ctx, out.Rectified, 0)
		if err != nil {
			return out, fmt.Errorf("session result image: %w", err)
		}
		release() // the review keeps img: it is reserved only while decoded
		m := &Measurement{Result: out.Result, Image: img, ModelVersion: d.svc.modelVersion(), PatientID: d.patientID, Captured: true}
		if body.Billing != nil {
			m.Billing = *body.Billing
		}
		d.final = m
	}
	return out, nil
}

// Result is the completed session's measurement, nil before completion.
func (d *DesktopSession) Result() *Measurement { return d.final }
