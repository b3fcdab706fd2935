package ui

import (
	"context"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/engine/cardiac"
)

// Canine reference ranges shown beside the values.
const (
	vhsLow, vhsHigh = 8.5, 10.5
	vlasHigh        = 2.5
)

// review is the Review tab: one radiograph, its measurement, editable
// landmarks.
type review struct {
	u       *UI
	content fyne.CanvasObject

	view                           *LandmarkView
	file, vhs, vlas, reading, conf *widget.Label
	status, edited                 *widget.Label
	open                           *widget.Button
	side                           *fyne.Container
}

func newReview(u *UI) *review {
	r := &review{
		u: u, view: NewLandmarkView(),
		file: newValueLabel("No radiograph open."), vhs: newValueLabel("VHS: -"), vlas: newValueLabel("VLAS: -"),
		reading: newValueLabel(""), conf: newValueLabel(""), status: newValueLabel(""), edited: newValueLabel(""),
	}
	r.view.OnChange = r.landmarksEdited
	r.open = widget.NewButton("Open radiograph...", r.chooseFile)
	side := container.NewVBox(
		r.open, r.file, widget.NewSeparator(),
		r.vhs, r.vlas, r.reading, r.conf, r.edited, r.status,
		widget.NewLabel("Drag a landmark to correct it; VHS and VLAS follow."),
	)
	r.side = side
	split := container.NewHSplit(r.view, container.NewVScroll(side))
	split.Offset = 0.7
	r.content = split
	return r
}

// chooseFile shows the file-open dialog (needs Options.Window).
func (r *review) chooseFile() {
	if r.u.opts.Window == nil {
		return
	}
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(err, r.u.opts.Window)
			return
		}
		if rc == nil {
			return
		}
		path := rc.URI().Path()
		rc.Close()
		if err := r.u.OpenFile(path); err != nil {
			dialog.ShowError(err, r.u.opts.Window)
		}
	}, r.u.opts.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".jpg", ".jpeg", ".png", ".JPG", ".JPEG", ".PNG"}))
	d.Show()
}

// OpenFile reads and decodes a radiograph (JPEG or PNG) and starts its
// measurement in the background; the Review tab shows the result when it
// is done. Errors reading or decoding the file are returned at once.
func (u *UI) OpenFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("open radiograph: %w", err)
	}
	img, err := app.DecodeImage(b)
	if err != nil {
		return fmt.Errorf("open radiograph %s: %w", filepath.Base(path), err)
	}
	eng := u.svc.Cardiac()
	if eng == nil {
		return fmt.Errorf("open radiograph: %w", app.ErrCardiacUnavailable)
	}
	r := u.review
	r.file.SetText(filepath.Base(path))
	r.status.SetText("Measuring...")
	r.open.Disable()
	var res *cardiac.Result
	u.background(func(ctx context.Context) {
		res, err = eng.Predict(ctx, img, cardiac.PredictOptions{})
	}, func() {
		r.open.Enable()
		if err != nil {
			r.status.SetText("Measurement failed: " + err.Error())
			return
		}
		r.show(img, res)
	})
	return nil
}

// show displays a fresh model result.
func (r *review) show(img image.Image, res *cardiac.Result) {
	r.view.SetImage(img, res.Landmarks, res.LandmarksDetected)
	r.edited.SetText("")
	r.status.SetText(fmt.Sprintf("Result %d: %s", res.Code, res.Code.Description()))
	if res.Rejected {
		r.conf.SetText("")
	} else {
		r.conf.SetText(fmt.Sprintf("Model confidence: %s (ensemble spread %.4f)", res.Confidence, res.Spread))
	}
	r.setValues(res.VHS, res.VLAS)
}

// landmarksEdited recomputes VHS and VLAS from the dragged landmarks.
func (r *review) landmarksEdited(l cardiac.Landmarks) {
	g := cardiac.Measure(l)
	var vhs, vlas *float64
	if finite(g.VHS) {
		v := math.Round(g.VHS*100) / 100
		vhs = &v
	}
	if finite(g.VLAS) {
		v := math.Round(g.VLAS*100) / 100
		vlas = &v
	}
	r.edited.SetText("EDITED: landmarks moved by hand; values recomputed from the edited landmarks, model confidence no longer applies.")
	if !g.AxesPerpendicular() {
		r.edited.SetText(r.edited.Text + " The heart axes are not perpendicular.")
	}
	r.setValues(vhs, vlas)
}

func (r *review) setValues(vhs, vlas *float64) {
	r.vhs.SetText(valueLine("VHS", vhs, fmt.Sprintf("normal %.1f-%.1f", vhsLow, vhsHigh)))
	r.vlas.SetText(valueLine("VLAS", vlas, fmt.Sprintf("normal < %.1f", vlasHigh)))
	r.reading.SetText(Reading(vhs, vlas))
	// Wrapped labels change height with their text: lay the panel out again.
	r.side.Refresh()
}

func valueLine(name string, v *float64, ref string) string {
	if v == nil {
		return name + ": not measured (" + ref + ")"
	}
	return fmt.Sprintf("%s: %.2f (%s)", name, *v, ref)
}

// Reading puts VHS and VLAS in plain words against the canine reference
// ranges (VHS 8.5-10.5, VLAS below 2.5); nil values were not measured.
func Reading(vhs, vlas *float64) string {
	var s string
	switch {
	case vhs == nil:
		return "No heart size could be measured on this image."
	case *vhs > vhsHigh:
		s = "The heart is larger than normal (VHS above 10.5), consistent with cardiomegaly."
	case *vhs < vhsLow:
		s = "The heart is smaller than the usual range (VHS below 8.5)."
	default:
		s = "The heart size is within the normal range."
	}
	switch {
	case vlas == nil:
		s += " The left atrium could not be measured."
	case *vlas >= vlasHigh:
		s += " The left atrium appears enlarged (VLAS 2.5 or more)."
	default:
		s += " The left atrium size is normal."
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
