package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/app/report"
)

// Preference keys of the clinic's letterhead on reports.
const (
	PrefClinicName    = "clinic_name"
	PrefClinicAddress = "clinic_address"
	PrefClinicLogo    = "clinic_logo" // path of a PNG or JPEG
)

// Printer prints a PDF file through the system's printing (platform/printing:
// CUPS lp; on Windows the shell's print verb).
type Printer interface {
	// Ready reports whether a printer is set up, and if not, why, in a
	// few words for the Print button.
	Ready() (ok bool, why string)
	// Print sends the PDF at path to the default printer and returns the
	// print system's answer (the job id).
	Print(ctx context.Context, path string) (string, error)
}

// printerReady reports whether Print can be offered, and why not.
func (u *UI) printerReady() (bool, string) {
	if u.opts.Printer == nil {
		return false, "printing is not set up in this window"
	}
	if u.printerState == nil {
		ok, why := u.opts.Printer.Ready()
		u.printerState = &printerState{ok: ok, why: why}
	}
	return u.printerState.ok, u.printerState.why
}

// printerState caches Printer.Ready for the session (it runs lpstat).
type printerState struct {
	ok  bool
	why string
}

// Clinic is the clinic's letterhead from the settings; a logo that
// cannot be read is left out and reported.
func (u *UI) Clinic() (report.Clinic, error) {
	c := report.Clinic{Name: u.pref(PrefClinicName, ""), Address: u.pref(PrefClinicAddress, "")}
	path := strings.TrimSpace(u.pref(PrefClinicLogo, ""))
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("clinic logo: %w", err)
	}
	// Decoded as every image is: within the size limits, and a phone
	// photo of the letterhead upright.
	img, err := app.DecodeImage(b)
	if err != nil {
		return c, fmt.Errorf("clinic logo %s: %w", path, err)
	}
	c.Logo = img
	return c, nil
}

// SetClinic stores the clinic's letterhead for reports.
func (u *UI) SetClinic(name, address, logoPath string) error {
	logoPath = strings.TrimSpace(logoPath)
	if logoPath != "" {
		b, err := os.ReadFile(logoPath)
		if err != nil {
			return fmt.Errorf("clinic logo: %w", err)
		}
		if _, err := app.DecodeImage(b); err != nil {
			return fmt.Errorf("clinic logo %s: a PNG or JPEG image is needed: %w", logoPath, err)
		}
	}
	u.setPref(PrefClinicName, strings.TrimSpace(name))
	u.setPref(PrefClinicAddress, strings.TrimSpace(address))
	u.setPref(PrefClinicLogo, logoPath)
	return nil
}

// clinicDialog edits the clinic's letterhead (needs Options.Window).
func (r *review) clinicDialog() {
	w := r.u.opts.Window
	if w == nil {
		return
	}
	name, addr, logo := widget.NewEntry(), widget.NewMultiLineEntry(), widget.NewEntry()
	name.SetText(r.u.pref(PrefClinicName, ""))
	addr.SetText(r.u.pref(PrefClinicAddress, ""))
	addr.SetMinRowsVisible(3)
	logo.SetText(r.u.pref(PrefClinicLogo, ""))
	logo.SetPlaceHolder("path of a PNG or JPEG logo (optional)")
	items := []*widget.FormItem{widget.NewFormItem("Clinic name", name), widget.NewFormItem("Address", addr), widget.NewFormItem("Logo file", logo)}
	d := dialog.NewForm("Clinic details for reports", "Save", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		if err := r.u.SetClinic(name.Text, addr.Text, logo.Text); err != nil {
			dialog.ShowError(err, w)
			return
		}
		r.status.SetText("Clinic details saved; reports carry them from now on.")
	}, w)
	d.Resize(fyne.NewSize(520, 320))
	d.Show()
}

// reviewReport is the report of the Review tab's measurement as on
// screen, with the patient bar's record and the clinic's letterhead.
func (u *UI) reviewReport() (report.Report, error) {
	r := u.review
	if r.m == nil {
		return report.Report{}, fmt.Errorf("nothing measured")
	}
	if r.kind.Clinician() && !r.view.Complete() {
		return report.Report{}, fmt.Errorf("place all %d landmarks first (%d placed)", app.NumLandmarks, r.view.Placed())
	}
	date := r.savedAt
	if date.IsZero() {
		date = time.Now()
	}
	clinic, err := u.Clinic()
	if err != nil {
		return report.Report{}, err
	}
	req, err := u.saveRequest()
	if err != nil {
		return report.Report{}, err
	}
	return app.DesktopReport(req, date, app.ReportDetails{Patient: u.Patient(), Clinic: clinic})
}

// ExportReport writes the one-page PDF report of the Review tab's
// measurement (with any edits) to path, atomically (a temporary file
// renamed into place), so a failed export never leaves half a file.
// There is no report for an image the model rejected (unless confirmed
// and measured by hand).
func (u *UI) ExportReport(path string) error {
	rep, err := u.reviewReport()
	if err != nil {
		return fmt.Errorf("export report: %w", err)
	}
	if err := writeReport(path, rep); err != nil {
		return fmt.Errorf("export report: %w", err)
	}
	u.review.status.SetText("Report written to " + path)
	return nil
}

// writeReport writes rep to path through a temporary file.
func writeReport(path string, rep report.Report) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vetlens-report-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := report.WritePDF(tmp, rep); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// printTimeout bounds handing a report to the printing system.
const printTimeout = 30 * time.Second

// PrintReport prints the Review tab's report on the default printer
// (Options.Printer: CUPS lp, or the Windows shell): the same PDF as
// Export, written to a temporary file that lp spools (the Windows printer
// keeps its own copy for the PDF program).
func (u *UI) PrintReport() error {
	if err := u.reportReady(); err != nil {
		return err
	}
	if ok, why := u.printerReady(); !ok {
		return fmt.Errorf("print report: %s; export the PDF report and print it from another program", why)
	}
	rep, err := u.reviewReport()
	if err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	dir, err := os.MkdirTemp("", "vetlens-print-")
	if err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report.pdf")
	if err := writeReport(path, rep); err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), printTimeout)
	defer cancel()
	job, err := u.opts.Printer.Print(ctx, path)
	if err != nil {
		return fmt.Errorf("print report: %w", err)
	}
	u.review.status.SetText("Sent to the printer: " + job)
	return nil
}
