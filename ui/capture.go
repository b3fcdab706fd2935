package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/live"
)

// outlineColor is the detected screen outline on the live preview.
var outlineColor = color.NRGBA{R: 0x00, G: 0xe6, B: 0x76, A: 0xff}

// captureTab is the Capture tab: pick a source (camera, video file, image
// folder or file), preview it live with the detected screen outline, and
// run a capture session that ends on the Review tab.
type captureTab struct {
	u       *UI
	content fyne.CanvasObject

	source   *widget.Entry
	cameras  *widget.Select
	preview  *widget.Button
	capture  *widget.Button
	stop     *widget.Button
	view     *FrameView
	progress *widget.ProgressBar
	status   *widget.Label

	mu     sync.Mutex
	cancel context.CancelFunc // the running preview or session; nil when none runs
	done   chan struct{}      // closed when the running loop has finished

	pending  live.Preview // the newest preview not yet shown
	hasFrame bool
	// Frames counts previews shown (tests).
	frames int
}

func newCaptureTab(u *UI) *captureTab {
	c := &captureTab{u: u, source: widget.NewEntry(), view: NewFrameView(), progress: widget.NewProgressBar(), status: newValueLabel("")}
	c.source.SetText(u.pref(PrefCamera, ""))
	c.source.SetPlaceHolder("device:0, a video file, an image folder or an image file")
	var cams []string
	if u.opts.Cameras != nil {
		cams = u.opts.Cameras()
	}
	c.cameras = widget.NewSelect(cams, func(s string) { c.source.SetText(s) })
	c.cameras.PlaceHolder = "cameras"
	if len(cams) == 0 {
		c.cameras.PlaceHolder = "no camera found"
		c.cameras.Disable()
	}
	browseFile := widget.NewButton("File...", c.chooseFile)
	browseDir := widget.NewButton("Folder...", c.chooseFolder)
	c.preview = widget.NewButton("Preview", func() { c.report(u.StartCapture(c.source.Text, false)) })
	c.capture = widget.NewButton("Capture", func() { c.report(u.StartCapture(c.source.Text, true)) })
	c.capture.Importance = widget.HighImportance
	c.stop = widget.NewButton("Stop", u.StopCapture)
	c.stop.Disable()
	if u.opts.OpenCamera == nil {
		c.preview.Disable()
		c.capture.Disable()
		c.status.SetText("Capture is not available in this window.")
	}
	top := container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabel("Source"), container.NewHBox(c.cameras, browseFile, browseDir), c.source),
		container.NewHBox(c.preview, c.capture, c.stop),
		c.progress, c.status,
	)
	c.progress.Max = 1
	c.content = container.NewBorder(top, nil, nil, nil, c.view)
	return c
}

func (c *captureTab) report(err error) {
	if err != nil {
		c.status.SetText(err.Error())
	}
}

func (c *captureTab) chooseFile() {
	if c.u.opts.Window == nil {
		return
	}
	c.u.newFilePicker("Capture from a video or image file", pickOpen, nil, "", func(path string) { c.source.SetText(path) }).Show()
}

func (c *captureTab) chooseFolder() {
	if c.u.opts.Window == nil {
		return
	}
	c.u.newFilePicker("Capture from a folder of images", pickFolder, nil, "", func(path string) { c.source.SetText(path) }).Show()
}

// StartCapture opens the source spec and runs its live preview; with
// session it also runs a capture session for the patient in the patient
// field, whose result opens on the Review tab. A running preview or
// session is stopped first. The spec is saved as the camera setting.
func (u *UI) StartCapture(spec string, session bool) error {
	c := u.capture
	if u.opts.OpenCamera == nil {
		return errors.New("capture is not available in this window")
	}
	if spec == "" {
		return errors.New("choose a camera, a video file, an image folder or an image file")
	}
	if session && u.svc.Sessions.Pipeline() == nil {
		return fmt.Errorf("capture: %w", app.ErrPoPUnavailable)
	}
	u.StopCapture()
	src, err := u.opts.OpenCamera(spec)
	if err != nil {
		return fmt.Errorf("open %s: %w", spec, err)
	}
	u.setPref(PrefCamera, spec)
	ctx, cancel := context.WithCancel(context.Background())
	cfg := live.Config{OnPreview: c.onPreview}
	files := isFileSource(spec)
	if p := u.svc.Sessions.Pipeline(); p != nil {
		cfg.Outliner = live.PoPOutliner(p)
		if files {
			cfg.Outliner = live.FileOutliner(p)
		}
	}
	var sess *app.DesktopSession
	if session {
		var id app.PatientID
		if id, err = u.patientID(); err == nil {
			sess, err = u.svc.Sessions.StartDesktopSession(ctx, id)
		}
		if err != nil {
			cancel()
			src.Close()
			return fmt.Errorf("start capture session: %w", err)
		}
		if files {
			sess.FromFiles()
		}
		cfg.Sink = sess
		cfg.OnProgress = func(o app.FrameOutcome) { fyne.Do(func() { c.showProgress(o, sess.Config) }) }
		c.status.SetText(fmt.Sprintf("Hold the camera on the radiograph: %d good frames that agree are needed.", sess.Config.GoodFramesNeeded))
	} else {
		c.status.SetText("Previewing " + spec)
	}
	c.progress.SetValue(0)
	done := make(chan struct{})
	c.mu.Lock()
	c.cancel, c.done = cancel, done
	c.mu.Unlock()
	c.preview.Disable()
	c.capture.Disable()
	c.stop.Enable()
	go func() {
		defer close(done)
		out, err := live.NewRunner(src, cfg).Run(ctx)
		src.Close()
		cancel()
		fyne.Do(func() { c.finish(done, sess, out, err) })
	}()
	return nil
}

// isFileSource reports whether a capture source spec names image files
// (a folder, or a JPEG or PNG file) rather than a camera or a video.
func isFileSource(spec string) bool {
	st, err := os.Stat(spec)
	if err != nil {
		return false
	}
	if st.IsDir() {
		return true
	}
	switch strings.ToLower(filepath.Ext(spec)) {
	case ".jpg", ".jpeg", ".png":
		return true
	}
	return false
}

// maxOutlineAge is how many frames old an outline may be and still be
// drawn on the preview (about half a second at 15 fps).
const maxOutlineAge = 8

// StopCapture stops the running preview or session and waits for it.
func (u *UI) StopCapture() {
	c := u.capture
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	// The loop's final fyne.Do cannot run while this UI callback holds
	// the UI goroutine, so wait for the loop itself only.
	<-done
}

// onPreview hands the newest frame to the UI goroutine, dropping frames
// while one is waiting to be shown.
func (c *captureTab) onPreview(p live.Preview) {
	c.mu.Lock()
	queued := c.hasFrame
	c.pending, c.hasFrame = p, true
	c.mu.Unlock()
	if queued {
		return
	}
	fyne.Do(func() {
		c.mu.Lock()
		p := c.pending
		c.hasFrame = false
		c.mu.Unlock()
		c.frames++
		o := p.Outline
		if p.Index-o.FrameIndex > maxOutlineAge { // the camera moved since: do not mislead
			o.OK = false
		}
		c.view.SetFrame(p.Image, o)
	})
}

// showProgress shows one session outcome.
func (c *captureTab) showProgress(o app.FrameOutcome, cfg app.SessionConfig) {
	switch o.Status {
	case app.StatusContinue:
		c.progress.SetValue(min(1, float64(o.GoodFrames)/float64(max(1, cfg.GoodFramesNeeded))))
		c.status.SetText(progressText(o, cfg))
	case app.StatusComplete:
		c.progress.SetValue(1)
	}
}

// progressText is a session's progress: the good frames, the frame
// count, and why the last frame was not good. The outcome's reason starts
// with the same count ("2 of 3 good frames: why"), which is said once.
func progressText(o app.FrameOutcome, cfg app.SessionConfig) string {
	text := fmt.Sprintf("%d of %d good frames (frame %d of at most %d).", o.GoodFrames, cfg.GoodFramesNeeded, o.FramesProcessed, cfg.MaxFrames)
	if _, why, ok := strings.Cut(o.Reason, ": "); ok && why != "" {
		text += " Last frame: " + why
	}
	return text
}

// finish runs on the UI goroutine when the loop ended.
// A loop that was replaced by a newer one (StartCapture stopped it) shows
// nothing. The tab stops counting as running (CaptureState) only once the
// outcome is shown, so whoever sees it stopped also sees why, even where
// fyne.Do runs on the caller's goroutine (Fyne's test driver).
func (c *captureTab) finish(done chan struct{}, sess *app.DesktopSession, out app.FrameOutcome, err error) {
	c.mu.Lock()
	current := c.done == done
	c.mu.Unlock()
	if !current {
		return
	}
	defer func() {
		c.mu.Lock()
		if c.done == done {
			c.cancel = nil
		}
		c.mu.Unlock()
	}()
	c.preview.Enable()
	c.capture.Enable()
	c.stop.Disable()
	switch {
	case sess != nil && out.Status == app.StatusComplete && sess.MeasuredAsFile():
		c.status.SetText("The source shows a radiograph file, not a photo of a screen: it was measured as a file, its aspect ratio kept. To measure every new file of a folder, watch it on the Import tab.")
		c.u.ShowMeasurement(sess.Result(), "Radiograph file from the capture source")
	case sess != nil && out.Status == app.StatusComplete && sess.Result() != nil:
		c.status.SetText(fmt.Sprintf("Session complete after %d frames.", out.FramesProcessed))
		c.u.ShowMeasurement(sess.Result(), "Capture session")
	case out.Status == app.StatusFailed:
		c.status.SetText("Session failed (" + out.Error + "): start again, holding the camera steady and square to the screen.")
	case errors.Is(err, context.Canceled):
		c.status.SetText("Stopped.")
	case errors.Is(err, live.ErrSourceEnded) && sess != nil:
		c.status.SetText("The source ended before enough good frames were seen.")
	case errors.Is(err, live.ErrSourceEnded):
		c.status.SetText("End of the source.")
	case err != nil:
		c.status.SetText("Capture stopped: " + err.Error())
	}
	if c.u.workDone != nil {
		c.u.workDone()
	}
}

// FrameView shows a live frame with the detected screen outline.
type FrameView struct {
	widget.BaseWidget

	img     image.Image
	outline live.Outline
}

// NewFrameView returns an empty view.
func NewFrameView() *FrameView {
	v := &FrameView{}
	v.ExtendBaseWidget(v)
	return v
}

// SetFrame shows img with outline (drawn when outline.OK).
func (v *FrameView) SetFrame(img image.Image, outline live.Outline) {
	v.img, v.outline = img, outline
	v.Refresh()
}

// MinSize implements fyne.Widget.
func (v *FrameView) MinSize() fyne.Size { return fyne.NewSize(320, 240) }

// CreateRenderer implements fyne.Widget.
func (v *FrameView) CreateRenderer() fyne.WidgetRenderer {
	r := &frameRenderer{v: v, img: canvas.NewImageFromImage(nil),
		hint: canvas.NewText("No source running: choose one and press Preview or Capture.", color.Gray{Y: 0x90})}
	r.img.FillMode = canvas.ImageFillContain
	r.img.ScaleMode = canvas.ImageScaleFastest
	for i := range r.edges {
		r.edges[i] = canvas.NewLine(outlineColor)
		r.edges[i].StrokeWidth = 3
	}
	r.Refresh()
	return r
}

type frameRenderer struct {
	v     *FrameView
	img   *canvas.Image
	hint  *canvas.Text
	edges [4]*canvas.Line
}

func (r *frameRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.img, r.hint, r.edges[0], r.edges[1], r.edges[2], r.edges[3]}
}

func (r *frameRenderer) Destroy() {}

func (r *frameRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func (r *frameRenderer) Layout(size fyne.Size) {
	r.img.Resize(size)
	r.hint.Move(fyne.NewPos(12, size.Height/2))
	show := r.v.img != nil && r.v.outline.OK
	for _, e := range r.edges {
		if show {
			e.Show()
		} else {
			e.Hide()
		}
	}
	if r.v.img == nil {
		r.hint.Show()
		return
	}
	r.hint.Hide()
	if !show {
		return
	}
	b := r.v.img.Bounds()
	iw, ih := float32(b.Dx()), float32(b.Dy())
	s := min(size.Width/iw, size.Height/ih)
	ox, oy := (size.Width-iw*s)/2, (size.Height-ih*s)/2
	c := r.v.outline.Corners
	p := func(i int) fyne.Position { return fyne.NewPos(ox+float32(c[i][0])*s, oy+float32(c[i][1])*s) }
	for i, e := range r.edges {
		e.Position1, e.Position2 = p(i), p((i+1)%4)
	}
}

func (r *frameRenderer) Refresh() {
	r.img.Image = r.v.img
	r.Layout(r.v.Size())
	for _, o := range r.Objects() {
		canvas.Refresh(o)
	}
}

// SetCaptureSource fills the Capture tab's source field.
func (u *UI) SetCaptureSource(spec string) { u.capture.source.SetText(spec) }

// CaptureState reports whether a preview or session runs, and the Capture
// tab's status line.
func (u *UI) CaptureState() (running bool, status string) {
	c := u.capture
	c.mu.Lock()
	running = c.cancel != nil
	c.mu.Unlock()
	return running, c.status.Text
}

// ReviewMeasurement is the measurement on the Review tab (nil: none).
func (u *UI) ReviewMeasurement() *app.Measurement { return u.review.m }

// PreviewFramesShown counts the preview frames the Capture tab has drawn.
func (u *UI) PreviewFramesShown() int { return u.capture.frames }
