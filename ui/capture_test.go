package ui

import (
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"vetlens/app"
	"vetlens/app/capture"
	"vetlens/app/live"
	"vetlens/engine/cardiac"
	"vetlens/platform/camera"
)

var testVideo = filepath.Join("..", "platform", "camera", "testdata", "screen_sequence.avi")

// newCaptureUI is the UI over the real models and PoP pipeline, with the
// real camera adapter.
func newCaptureUI(t *testing.T) (*UI, chan struct{}) {
	t.Helper()
	pipeline := func(c *cardiac.Engine) *capture.Service {
		return capture.NewService(capture.NewManager(capture.DefaultConfig(), c, capture.PoP{}, time.Now), c, capture.PoP{})
	}
	// Two frames a second: the session measures every frame the video
	// sends, in order, however busy the machine is (at the video's own 15
	// fps a loaded machine drops frames and measures other ones).
	open := func(spec string) (live.Source, error) { return camera.Open(spec, camera.Loop(), camera.FPS(2)) }
	u, _, done := newTestUIWith(t, true, pipeline, Options{OpenCamera: open})
	return u, done
}

func TestCaptureSessionFromVideo(t *testing.T) {
	u, done := newCaptureUI(t)
	u.SetPatientID("Bella-9")
	if err := u.StartCapture(testVideo, true); err != nil {
		t.Fatal(err)
	}
	if running, _ := u.CaptureState(); !running || u.capture.stop.Disabled() || !u.capture.capture.Disabled() {
		t.Fatal("capture not shown as running")
	}
	wait(t, done)
	running, status := u.CaptureState()
	m := u.ReviewMeasurement()
	if running || !strings.Contains(status, "Session complete") || m == nil || m.Result.VHS == nil || !m.Result.PopDetected {
		t.Fatalf("running %v, status %q, measurement %+v", running, status, m)
	}
	if u.tabs.Selected().Text != "Review" || u.capture.frames == 0 || u.capture.progress.Value != 1 {
		t.Fatalf("tab %q, %d previews, progress %v", u.tabs.Selected().Text, u.capture.frames, u.capture.progress.Value)
	}
	if m.Billing.CallType != app.CallSession || !m.Billing.Billable || m.PatientID != "Bella-9" {
		t.Fatalf("billing %+v for %q", m.Billing, m.PatientID)
	}
	// The rectified image is shown, and saving keeps it for the patient.
	if b := m.Image.Bounds(); b.Dx() != m.Result.Width || b.Dy() != m.Result.Height {
		t.Fatalf("image %v, result %dx%d", b, m.Result.Width, m.Result.Height)
	}
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
}

func TestCapturePreviewStopAndErrors(t *testing.T) {
	u, done := newCaptureUI(t)
	if err := u.StartCapture("", false); err == nil {
		t.Fatal("empty source accepted")
	}
	if err := u.StartCapture(filepath.Join(t.TempDir(), "missing.avi"), false); err == nil {
		t.Fatal("missing file accepted")
	}
	if err := u.StartCapture(testVideo, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for u.capture.view.img == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if u.capture.view.img == nil {
		t.Fatal("no preview frame shown")
	}
	// Starting a session replaces the preview; stopping ends it.
	if err := u.StartCapture(testVideo, true); err != nil {
		t.Fatal(err)
	}
	u.StopCapture()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("stopped capture did not finish")
	}
	if running, _ := u.CaptureState(); running {
		t.Fatal("still running after Stop")
	}
}

func TestOpenScreenPhotoIsRectified(t *testing.T) {
	u, done := newCaptureUI(t)
	photo := filepath.Join("..", "engine", "pop", "testdata", "screen_0000.jpg")
	if err := u.OpenFile(photo); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	m := u.ReviewMeasurement()
	if m == nil || !m.Result.PopDetected {
		t.Fatalf("screen photo not detected: %+v", m)
	}
	// The review shows the rectified display area, not the photograph.
	b := m.Image.Bounds()
	if b.Dx() != m.Result.Width || b.Dy() != m.Result.Height || b.Dx() == 0 || (b.Dx() == 960 && b.Dy() == 540) {
		t.Fatalf("shown image %v, result %dx%d", b, m.Result.Width, m.Result.Height)
	}
	if !strings.Contains(u.review.state.Text, "photograph of a screen") && m.Result.Code.HasVHS() {
		t.Fatalf("state %q does not say the photo was corrected", u.review.state.Text)
	}
}

// TestProgressTextSaysCountOnce: the session's reason repeats the good
// frame count; the status says it once, with the last frame's problem.
func TestProgressTextSaysCountOnce(t *testing.T) {
	for _, c := range []struct {
		o    app.FrameOutcome
		want string
	}{
		{app.FrameOutcome{GoodFrames: 2, FramesProcessed: 5, Reason: "2 of 3 good frames"}, "2 of 3 good frames (frame 5 of at most 60)."},
		{app.FrameOutcome{GoodFrames: 1, FramesProcessed: 9, Reason: "1 of 3 good frames: no screen found"}, "1 of 3 good frames (frame 9 of at most 60). Last frame: no screen found"},
	} {
		got := progressText(c.o, app.SessionConfig{GoodFramesNeeded: 3, MaxFrames: 60})
		if got != c.want || strings.Count(got, "good frames") != 1 {
			t.Errorf("progressText(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}

// squareGreyFolder is a folder holding one square grey radiograph file
// (the first phantom cropped to 480x480), as an X-ray console exports.
func squareGreyFolder(t *testing.T) string {
	t.Helper()
	src := phantomImage(t)
	sq := image.NewGray(image.Rect(0, 0, 480, 480))
	draw.Draw(sq, sq.Bounds(), src, image.Pt(80, 0), draw.Src)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "IM0001.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, sq); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCaptureFromAFolderOfFiles: a folder of plain radiograph files (not
// photos of a screen) draws no screen outline on the preview, and
// Capture measures the file as a file, its aspect ratio kept, instead of
// failing for want of a screen.
func TestCaptureFromAFolderOfFiles(t *testing.T) {
	dir := squareGreyFolder(t)
	u, _ := newCaptureUI(t)
	if err := u.StartCapture(dir, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for u.capture.frames < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var outlined bool
	fyne.DoAndWait(func() { outlined = u.capture.view.outline.OK })
	if u.capture.frames < 5 || outlined {
		t.Fatalf("%d previews, screen outline drawn %v", u.capture.frames, outlined)
	}
	u.SetPatientID("Bella-9")
	if err := u.StartCapture(dir, true); err != nil {
		t.Fatal(err)
	}
	var status string
	for running, end := true, time.Now().Add(time.Minute); running && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		fyne.DoAndWait(func() { running, status = u.CaptureState() })
	}
	m := u.ReviewMeasurement()
	if m == nil || !strings.Contains(status, "measured as a file") {
		t.Fatalf("status %q, measurement %v", status, m)
	}
	if b := m.Image.Bounds(); b.Dx() != 480 || b.Dy() != 480 || m.Result.PopDetected {
		t.Fatalf("measured %v (screen %v), want the 480x480 file as it is", b, m.Result.PopDetected)
	}
}
