// Package ui is the VetLens desktop interface (Fyne): the patient record
// above the tabs, Capture (live camera or video, capture sessions), Review
// (cardiac measurement against the species or breed range, editable
// landmarks, hand placement, undo, save, PDF report, print), Bloodwork
// (feline USG screening), Patients (records, history versions, trend
// plots, audit trail) and Server (listener, keys, usage, settings).
// Screens call app.Service use cases; they never touch the store, GoCV or
// ONNX Runtime directly, and print through the Printer port.
package ui

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/learn"
	"vetlens/app/live"
)

// predictTimeout bounds one prediction started from the UI.
const predictTimeout = 2 * time.Minute

// Options configures the UI.
type Options struct {
	// Window hosts dialogs (file open, errors); nil in tests, where the
	// dialogs are not shown and OpenFile is called directly.
	Window fyne.Window
	// Listener controls the in-process HTTPS API listener; nil: the
	// Server tab says the API is not available from this window.
	Listener Listener
	// Prefs persists the settings (data directory, camera, listener
	// address); nil: the current Fyne app's preferences.
	Prefs fyne.Preferences
	// Cameras lists the capture sources the Capture tab offers (camera
	// devices); nil: none but files and folders.
	Cameras func() []string
	// OpenCamera opens a capture source by its spec (a device "device:N",
	// a video file, an image folder or an image file); nil: capture is
	// not available.
	OpenCamera func(spec string) (live.Source, error)
	// Printer prints reports (CUPS lp); nil: Print is disabled and says
	// why.
	Printer Printer
	// Quit ends the application (the menu's Quit, Ctrl+Q, closing the
	// window); nil: the current Fyne app's Quit.
	Quit func()
	// ImportDir is the import folder to watch from the start (--import-dir);
	// "": the saved setting (PrefImportDir), if any.
	ImportDir string
	// Learn is the learning service (the Learning tab); nil: the tab
	// says learning is not available.
	Learn *learn.Service
	// PACS sends reports to the clinic's PACS by C-STORE (dcmtk's
	// storescu); nil: reports are only written to the outbox.
	PACS app.PACSSender
	// DataDir is the data directory this run uses (--data-dir, else the
	// saved setting, else the default), for the Server tab to show; ""
	// when not told.
	DataDir string
}

// Listener is the in-process HTTPS API listener as the Server tab drives it.
type Listener interface {
	// Start listens on addr (HOST:PORT) and serves the API until Stop.
	Start(addr string) error
	// Stop stops serving and waits for the listener to close.
	Stop() error
	// Status reports whether it serves, where, and the certificate's
	// SHA-256 fingerprint for LAN clients to pin.
	Status() ListenerStatus
}

// ListenerStatus is the listener's state.
type ListenerStatus struct {
	Running bool
	// Addr is the address the listener is bound to, as the operating
	// system reports it (for all interfaces, [::]:PORT); Requested the
	// address last asked for (while stopped, where it would listen).
	Addr, Requested string
	// Fingerprint is the certificate's SHA-256 fingerprint; PublicKeyPin
	// its public key pin as curl's --pinnedpubkey takes it.
	Fingerprint  string
	PublicKeyPin string
	// Err is why the listener stopped on its own, if it did.
	Err error
	// LANClients counts the open connections from other machines;
	// LastLANActivity is when one last sent a request or connected.
	LANClients      int
	LastLANActivity time.Time
}

// Preference keys (the window's own settings; the listener's live in the
// data directory, where the listener saves them).
const (
	PrefDataDir = "data_dir"
	PrefCamera  = "camera"
	// PrefListenAddr and PrefListenOnStart are where versions before the
	// data directory's listener.json kept the listener setting; the gui
	// command reads them once when the data directory has none.
	PrefListenAddr    = "listen_addr"
	PrefListenOnStart = "listen_on_start"
)

// UI is the application's content: build it with New and put Content in
// a window.
type UI struct {
	svc  *app.Service
	opts Options

	patient *widget.Entry
	bar     *patientBar
	tabs    *container.AppTabs
	// start is the first-start note (startHere), shown while no patient
	// is chosen and nothing is measured.
	start *widget.Label

	capture  *captureTab
	review   *review
	blood    *bloodwork
	patients *patientsTab
	server   *serverTab
	imports  *importTab
	learning *learningTab

	// workDone, when set (tests), is called after a background
	// prediction's result has been shown.
	workDone func()
	// printerState caches whether a printer is set up.
	printerState *printerState
	// lastPicker is the file dialog opened last (tests).
	lastPicker *filePicker
	// discardAsked is set while the unsaved-work question is open
	// (confirmDiscard).
	discardAsked bool
}

// New builds the UI for svc without needing a real window.
func New(svc *app.Service, opts Options) *UI {
	if opts.Prefs == nil {
		if a := fyne.CurrentApp(); a != nil {
			opts.Prefs = a.Preferences()
		}
	}
	u := &UI{svc: svc, opts: opts, patient: widget.NewEntry(), start: newValueLabel(startHere)}
	u.start.TextStyle = fyne.TextStyle{Bold: true}
	u.patient.SetPlaceHolder("patient ID")
	u.patient.Validator = func(s string) error { _, err := app.ParsePatientID(s); return err }
	u.bar = newPatientBar(u)
	u.review = newReview(u)
	u.capture = newCaptureTab(u)
	u.blood = newBloodwork(u)
	u.patients = newPatientsTab(u)
	u.server = newServerTab(u)
	u.imports = newImportTab(u)
	u.learning = newLearningTab(u, opts.Learn)
	u.tabs = container.NewAppTabs(
		container.NewTabItem("Capture", u.capture.content),
		container.NewTabItem("Review", u.review.content),
		container.NewTabItem("Bloodwork", u.blood.content),
		container.NewTabItem("Patients", u.patients.content),
		container.NewTabItem("Server", u.server.content),
		container.NewTabItem("Import", u.imports.content),
		container.NewTabItem("Learning", u.learning.content),
	)
	u.tabs.SetTabLocation(container.TabLocationTop)
	u.patient.OnChanged = u.bar.idChanged
	if last, err := app.ParsePatientID(u.pref(PrefLastPatient, "")); last != "" && err == nil {
		u.SetPatientID(last) // the last patient, kept across restarts
	}
	if opts.Window != nil {
		opts.Window.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { u.Dropped(uris) })
		u.installWindow(opts.Window)
	}
	if dir := firstSet(opts.ImportDir, u.pref(PrefImportDir, "")); dir != "" {
		if err := u.WatchImportFolder(dir); err != nil {
			u.imports.dir.SetText(dir)
			u.imports.status.SetText(err.Error())
		}
	}
	u.tabs.OnSelected = func(t *container.TabItem) {
		if t.Text == "Patients" {
			u.patients.refreshSearch()
		}
		if t.Text == "Server" {
			u.server.refresh()
		}
		if t.Text == "Learning" {
			u.learning.refresh()
		}
	}
	return u
}

// Content returns the root object to show in a window: the patient
// record above the tabs.
func (u *UI) Content() fyne.CanvasObject {
	return container.NewBorder(container.NewVBox(u.bar.content, u.start), nil, nil, nil, u.tabs)
}

// patientChanged follows a change of the patient (id or details): the
// Review tab's ranges and its Save button follow.
func (u *UI) patientChanged() {
	u.showStartHere()
	if u.review != nil {
		u.review.update()
	}
	if u.blood != nil {
		u.blood.followPatient()
	}
}

// showStartHere shows the first-start note while no patient is chosen
// and Review holds nothing, and hides it otherwise.
func (u *UI) showStartHere() {
	if u.PatientID() == "" && (u.review == nil || u.review.m == nil) {
		u.start.Show()
	} else {
		u.start.Hide()
	}
}

// recordsChanged follows a change of the current patient or of what is
// stored for it (a measurement, screening or record saved): the
// Patients tab shows it at once, and its list finds it.
func (u *UI) recordsChanged() {
	if u.patients == nil {
		return
	}
	u.patients.follow()
	u.patients.refreshSearch()
}

// Tabs names the screens in order (for screenshots and tests).
func (u *UI) Tabs() []string {
	out := make([]string, len(u.tabs.Items))
	for i, t := range u.tabs.Items {
		out[i] = t.Text
	}
	return out
}

// SelectTab shows the screen named name.
func (u *UI) SelectTab(name string) {
	for _, t := range u.tabs.Items {
		if t.Text == name {
			u.tabs.Select(t)
			return
		}
	}
}

// PatientID is the patient field's trimmed text, as typed: for showing
// and comparing. Use cases take the parsed id (patientID).
func (u *UI) PatientID() string { return strings.TrimSpace(u.patient.Text) }

// patientID parses the patient field (trimmed, app.ParsePatientID): the
// one place every screen reads the current patient for a use case. ""
// is no patient; the error is ParsePatientID's, shown where the screen
// shows its errors.
func (u *UI) patientID() (app.PatientID, error) { return app.ParsePatientID(u.PatientID()) }

// SetPatientID fills the patient field.
func (u *UI) SetPatientID(id app.PatientID) { u.patient.SetText(id.String()) }

// pref reads a string preference (def when unset or without preferences).
func (u *UI) pref(key, def string) string {
	if u.opts.Prefs == nil {
		return def
	}
	return u.opts.Prefs.StringWithFallback(key, def)
}

func (u *UI) setPref(key, v string) {
	if u.opts.Prefs != nil {
		u.opts.Prefs.SetString(key, v)
	}
}

func (u *UI) showError(err error) {
	if u.opts.Window != nil {
		dialog.ShowError(err, u.opts.Window)
	}
}

// background runs work off the UI goroutine and then show (with work's
// results captured by the closure) on it via fyne.Do.
func (u *UI) background(work func(ctx context.Context), show func()) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), predictTimeout)
		work(ctx)
		cancel()
		fyne.Do(func() {
			show()
			if u.workDone != nil {
				u.workDone()
			}
		})
	}()
}

// newValueLabel is a label whose text wraps.
func newValueLabel(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// Dropped handles files dropped on the window: a JPEG, PNG or DICOM file
// (told by its content, whatever its name) opens on the Review tab
// (measured for the patient in the patient field); a video file or a
// folder becomes the Capture tab's source. Only the first item counts.
func (u *UI) Dropped(uris []fyne.URI) {
	if len(uris) == 0 {
		return
	}
	path := uris[0].Path()
	switch {
	case isRadiographFile(path):
		u.SelectTab("Review")
		if err := u.OpenFile(path); err != nil {
			u.review.status.SetText(err.Error())
			u.showError(err)
		}
	default:
		u.SetCaptureSource(path)
		u.SelectTab("Capture")
		u.capture.status.SetText("Source set to " + filepath.Base(path) + ": press Preview or Capture.")
	}
}

// LoadingScreen is the window's content while the store and the models
// load (busy) or, when they could not, the reason.
func LoadingScreen(text string, busy bool) fyne.CanvasObject {
	box := container.NewVBox(widget.NewLabelWithStyle("VetLens", fyne.TextAlignCenter, fyne.TextStyle{Bold: true}), newValueLabel(text))
	if busy {
		box.Add(widget.NewProgressBarInfinite())
	}
	return container.NewCenter(box)
}

// isRadiographFile reports whether path is named like a radiograph
// (.jpg, .jpeg, .png, .dcm, .dicom, any case: Review then says what is
// wrong with it) or is a regular file whose first bytes are a DICOM, JPEG
// or PNG signature.
func isRadiographFile(path string) bool {
	if ext := strings.ToLower(filepath.Ext(path)); ext != "" && slices.Contains(radiographExts, ext) {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 132)
	n, _ := io.ReadFull(f, head)
	return app.ImageKind(head[:n]) != ""
}

// firstSet is the first non-empty string.
func firstSet(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
