package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
)

// recentLANClient is how recently a client on another machine must have
// been active for quitting to ask first.
const recentLANClient = 5 * time.Minute

// quitShortcut is Ctrl+Q (Cmd+Q on macOS).
var quitShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}

// Menu labels.
const (
	MenuOpen   = "Open radiograph..."
	MenuExport = "Export PDF report..."
	MenuPrint  = "Print report..."
	MenuQuit   = "Quit"
	MenuAbout  = "About VetLens"
)

// MainMenu is the window's menu: File (open a radiograph, export or
// print the Review tab's report, quit with Ctrl+Q, asking first while
// clinic network clients are connected) and Help (About: the version,
// the models' versions and the synthetic-data note).
func (u *UI) MainMenu() *fyne.MainMenu {
	quit := fyne.NewMenuItem(MenuQuit, u.RequestQuit)
	quit.IsQuit = true
	quit.Shortcut = quitShortcut
	return fyne.NewMainMenu(
		fyne.NewMenu("File",
			fyne.NewMenuItem(MenuOpen, func() { u.SelectTab("Review"); u.review.chooseFile() }),
			fyne.NewMenuItem(MenuExport, func() {
				if err := u.reportReady(); err != nil {
					u.showError(err)
					return
				}
				u.SelectTab("Review")
				u.review.chooseReportFile()
			}),
			fyne.NewMenuItem(MenuPrint, func() {
				if err := u.PrintReport(); err != nil {
					u.showError(err)
				}
			}),
			fyne.NewMenuItemSeparator(),
			quit,
		),
		fyne.NewMenu("Help", fyne.NewMenuItem(MenuAbout, u.ShowAbout)),
	)
}

// installWindow gives the window the menu, Ctrl+Q and the question
// before closing while clinic network clients are connected.
func (u *UI) installWindow(w fyne.Window) {
	w.SetMainMenu(u.MainMenu())
	w.Canvas().AddShortcut(quitShortcut, func(fyne.Shortcut) { u.RequestQuit() })
	w.SetCloseIntercept(u.RequestQuit)
}

// reportReady tells whether the Review tab has a measurement to report.
func (u *UI) reportReady() error {
	if u.review.m == nil {
		return errors.New("no report yet: open a radiograph or run a capture session first")
	}
	return nil
}

// QuitQuestion is what quitting asks first while Review holds unsaved
// work (UnsavedWork) or the API serves clients on other machines
// (connections open, or one active within the last few minutes); empty
// when quitting can go ahead at once.
func (u *UI) QuitQuestion() string {
	var parts []string
	if work := u.UnsavedWork(); work != "" {
		parts = append(parts, "Review holds unsaved work for patient "+patientName(u.PatientID())+" ("+work+"): quitting loses it.")
	}
	if l := u.opts.Listener; l != nil {
		switch st := l.Status(); {
		case !st.Running:
		case st.LANClients > 0:
			parts = append(parts, fmt.Sprintf("%d connection(s) from other machines are open to the API. Quitting stops the API for them.", st.LANClients))
		case !st.LastLANActivity.IsZero() && time.Since(st.LastLANActivity) < recentLANClient:
			parts = append(parts, fmt.Sprintf("A client on another machine used the API %s ago. Quitting stops the API for the clinic network.",
				time.Since(st.LastLANActivity).Round(time.Second)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + " Quit anyway?"
}

// patientName is a patient id as a question names it ("none" for the
// empty id).
func patientName(id string) string {
	if id == "" {
		return "(none)"
	}
	return id
}

// confirmDiscard runs proceed at once while Review holds no unsaved work
// (or there is no window to ask in); else it asks first, naming what
// would be lost and action (what proceed does), and runs proceed on
// "Discard" or back on "Back".
func (u *UI) confirmDiscard(action string, proceed, back func()) {
	work := u.UnsavedWork()
	if work == "" || u.opts.Window == nil {
		proceed()
		return
	}
	if u.discardAsked {
		return // one question at a time: keys typed meanwhile ask nothing more
	}
	u.discardAsked = true
	msg := newValueLabel("Review holds unsaved work for patient " + patientName(u.PatientID()) + " (" + work + "). To " + action +
		", discard it? To keep it, go back and save it first.")
	d := dialog.NewCustomConfirm("Unsaved work", "Discard", "Back", msg, func(discard bool) {
		u.discardAsked = false
		if !discard {
			if back != nil {
				back()
			}
			return
		}
		u.review.clear()
		proceed()
	}, u.opts.Window)
	d.Resize(fyne.NewSize(520, 220))
	d.Show()
}

// RequestQuit quits (the menu's Quit, Ctrl+Q, closing the window),
// asking first while clients on other machines use the API.
func (u *UI) RequestQuit() {
	q := u.QuitQuestion()
	if q == "" || u.opts.Window == nil {
		u.quit()
		return
	}
	title := "Quit VetLens?"
	if u.UnsavedWork() == "" {
		title = "Stop serving the clinic network?"
	}
	dialog.ShowConfirm(title, q, func(ok bool) {
		if ok {
			u.quit()
		}
	}, u.opts.Window)
}

func (u *UI) quit() {
	if u.opts.Quit != nil {
		u.opts.Quit()
		return
	}
	if a := fyne.CurrentApp(); a != nil {
		a.Quit()
	}
}

// resultCaution is the word on the models where results appear (Review,
// Bloodwork): the shipped models are trained on synthetic data.
const resultCaution = "Caution: VetLens's models are trained on synthetic data and are not validated for clinical use; check every result."

// startHere is the first-start note above the tabs while no patient is
// chosen and nothing is measured: what to do first.
const startHere = "Start here: type a patient ID above to create a patient (or find one on the Patients tab), then open a radiograph or DICOM file on Review, or run the camera on Capture."

// syntheticNote is the About box's word on the models.
const syntheticNote = "All shipped models are trained on synthetic data (simulated radiograph phantoms, a simulated feline cohort). " +
	"They demonstrate the pipeline and are not validated for clinical use."

// AboutText is the About box: the app's name and version, the loaded
// models' versions, and the synthetic-data note.
func (u *UI) AboutText() string {
	name, version := "VetLens", ""
	if a := fyne.CurrentApp(); a != nil {
		if m := a.Metadata(); m.Name != "" {
			name, version = m.Name, m.Version
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(name + " " + version))
	models := u.svc.Status.Models()
	b.WriteString("\n\nCardiac models (VHS, VLAS): ")
	if models.CardiacLoaded {
		b.WriteString(models.CardiacVersion)
	} else {
		b.WriteString("not loaded")
	}
	b.WriteString("\nUSG model (feline bloodwork): ")
	if models.USGLoaded {
		b.WriteString(models.USGVersion)
	} else {
		b.WriteString("not loaded")
	}
	b.WriteString("\n\n" + syntheticNote)
	return b.String()
}

// ShowAbout shows the About box.
func (u *UI) ShowAbout() {
	if u.opts.Window == nil {
		return
	}
	d := dialog.NewCustom(MenuAbout, "Close", newValueLabel(u.AboutText()), u.opts.Window)
	d.Resize(fyne.NewSize(560, 340)) // a wrapping label has no width of its own
	d.Show()
}
