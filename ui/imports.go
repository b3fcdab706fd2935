package ui

import (
	"context"
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/importq"
)

// PrefImportDir is the preference holding the watched import folder.
const PrefImportDir = "import_dir"

// importTab is the Import tab: the watched import folder (a setting) and
// the progress list of the files it brought, each opening on Review when
// tapped once measured.
type importTab struct {
	u       *UI
	content fyne.CanvasObject

	dir    *widget.Entry
	watch  *widget.Button
	stop   *widget.Button
	status *widget.Label
	list   *widget.List

	items  []importq.Item // newest first, as shown
	q      *importq.Queue
	cancel context.CancelFunc
	done   chan struct{}
}

func newImportTab(u *UI) *importTab {
	t := &importTab{u: u, dir: widget.NewEntry(), status: newValueLabel("")}
	t.dir.SetPlaceHolder("folder the X-ray console exports to, or a DICOM receiver writes into")
	t.watch = widget.NewButton("Watch", func() {
		if err := u.WatchImportFolder(t.dir.Text); err != nil {
			t.status.SetText(err.Error())
		}
	})
	t.stop = widget.NewButton("Stop", func() { u.WatchImportFolder("") })
	t.list = widget.NewList(func() int { return len(t.items) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(importRow(t.items[i])) })
	t.list.OnSelected = func(i widget.ListItemID) {
		t.list.UnselectAll()
		if i < len(t.items) {
			t.open(t.items[i])
		}
	}
	t.content = container.NewBorder(container.NewVBox(
		widget.NewLabelWithStyle("Watched import folder", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, widget.NewLabel("Folder"), container.NewHBox(t.watch, t.stop), t.dir),
		t.status,
		widget.NewLabel("New DICOM, JPEG and PNG files are measured in arrival order; tap a measured file to review it."),
		widget.NewSeparator(),
	), nil, nil, nil, t.list)
	t.showStatus()
	return t
}

// importRow is one line of the progress list.
func importRow(it importq.Item) string {
	row := fmt.Sprintf("%d. %s: %s", it.Seq, it.Name, it.State)
	switch {
	case it.State == importq.Failed:
		row += ": " + it.Err
	case it.State == importq.Done && it.Measurement != nil && it.Measurement.Result != nil:
		m := it.Measurement
		if m.PatientID != "" {
			row += ", patient " + m.PatientID.String()
		}
		res := m.Result
		switch {
		case res.Rejected:
			row += ", not read as a radiograph"
		case res.VHS != nil:
			row += fmt.Sprintf(", VHS %.1f", *res.VHS)
			if res.VLAS != nil {
				row += fmt.Sprintf(", VLAS %.1f", *res.VLAS)
			}
		default:
			row += ", no VHS: review it"
		}
	case it.State == importq.Done:
		row += " (no longer held: open the file)"
	}
	return row
}

// open shows a measured item on Review; whose study it is follows the
// same rule as a file opened there (routeFilePatient: the file's patient
// when none or the same is loaded, the question when the tags contradict
// the loaded patient).
func (t *importTab) open(it importq.Item) {
	if it.State != importq.Done || it.Measurement == nil {
		return
	}
	t.u.ShowMeasurement(it.Measurement, it.Name)
	t.u.routeFilePatient(it.Measurement)
}

// showStatus says what is watched.
func (t *importTab) showStatus() {
	switch {
	case t.q == nil:
		t.status.SetText("Not watching a folder.")
		t.stop.Disable()
	case t.q.Err() != "":
		t.status.SetText(t.q.Err())
		t.stop.Enable()
	default:
		t.status.SetText("Watching " + t.q.Dir() + ".")
		t.stop.Enable()
	}
}

// refresh reloads the list from the queue.
func (t *importTab) refresh() {
	t.items = t.items[:0]
	if t.q != nil {
		all := t.q.Items()
		for i := len(all) - 1; i >= 0; i-- {
			t.items = append(t.items, all[i])
		}
	}
	t.list.Refresh()
	t.showStatus()
}

// WatchImportFolder watches dir (saved as the setting) for new radiographs
// and measures them (app.Service.Cardiac.MeasureDesktop, a DICOM file for its own
// Patient ID), replacing any folder watched before; "" stops watching.
// A folder that does not exist is an error.
func (u *UI) WatchImportFolder(dir string) error {
	t := u.imports
	dir = strings.TrimSpace(dir)
	if dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("import folder %q: not a folder this computer can read", dir)
		}
	}
	u.StopImport()
	t.dir.SetText(dir)
	u.setPref(PrefImportDir, dir)
	if dir == "" {
		t.refresh()
		return nil
	}
	svc := u.svc
	q := importq.New(importq.Config{Dir: dir}, func(ctx context.Context, b []byte) (*app.Measurement, error) {
		ctx, cancel := context.WithTimeout(ctx, predictTimeout)
		defer cancel()
		return svc.Cardiac.MeasureDesktop(ctx, "", b)
	})
	q.OnChange(func() { fyne.Do(t.refresh) })
	ctx, cancel := context.WithCancel(context.Background())
	t.q, t.cancel, t.done = q, cancel, make(chan struct{})
	go func(done chan struct{}) {
		q.Run(ctx)
		close(done)
	}(t.done)
	t.refresh()
	return nil
}

// StopImport stops watching the import folder and waits for the file
// being measured, if any.
func (u *UI) StopImport() {
	t := u.imports
	if t.q == nil {
		return
	}
	t.cancel()
	<-t.done
	t.q, t.cancel, t.done = nil, nil, nil
}

// ImportItems is the import progress list, newest first.
func (u *UI) ImportItems() []importq.Item { return append([]importq.Item(nil), u.imports.items...) }
