package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// Preferences of the way back to the PACS: the outbox folder reports are
// written into, and the node they are sent to.
const (
	PrefPACSOutbox = "pacs_outbox"
	PrefPACSAE     = "pacs_ae_title"
	PrefPACSHost   = "pacs_host"
	PrefPACSPort   = "pacs_port"
)

// pacsSettings is the Server tab's PACS part: the outbox, the node, Save,
// and Send the outbox now.
type pacsSettings struct {
	u                *UI
	content          fyne.CanvasObject
	outbox, ae, host *widget.Entry
	port             *widget.Entry
	save, send       *widget.Button
	status           *widget.Label
}

func newPACSSettings(u *UI) *pacsSettings {
	p := &pacsSettings{u: u, outbox: widget.NewEntry(), ae: widget.NewEntry(), host: widget.NewEntry(), port: widget.NewEntry(), status: newValueLabel("")}
	p.outbox.SetText(u.pref(PrefPACSOutbox, ""))
	p.outbox.SetPlaceHolder("folder the DICOM reports are written into (empty: none)")
	p.ae.SetText(u.pref(PrefPACSAE, ""))
	p.ae.SetPlaceHolder("AE title")
	p.host.SetText(u.pref(PrefPACSHost, ""))
	p.host.SetPlaceHolder("host")
	p.port.SetText(u.pref(PrefPACSPort, ""))
	p.port.SetPlaceHolder("port, e.g. 104")
	p.save = widget.NewButton("Save", func() {
		for key, e := range map[string]*widget.Entry{PrefPACSOutbox: p.outbox, PrefPACSAE: p.ae, PrefPACSHost: p.host, PrefPACSPort: p.port} {
			u.setPref(key, strings.TrimSpace(e.Text))
		}
		p.status.SetText("PACS settings saved.")
	})
	p.send = widget.NewButton("Send the outbox now", func() { u.SendOutbox() })
	field := func(label string, o fyne.CanvasObject) fyne.CanvasObject {
		return container.NewBorder(nil, nil, widget.NewLabel(label), nil, o)
	}
	p.content = container.NewVBox(
		widget.NewLabelWithStyle("Results back to the PACS", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		newValueLabel("On save, the report of a DICOM study is written into the outbox as a DICOM Encapsulated PDF of the same study, with its annotated radiograph as a Secondary Capture, "+
			"and sent to the PACS node when one is set (docs/dicom.md). A report that cannot be sent stays in the outbox for the next send."),
		field("Outbox", p.outbox),
		container.NewGridWithColumns(3, field("AE title", p.ae), field("Host", p.host), field("Port", p.port)),
		container.NewHBox(p.save, p.send),
		p.status,
	)
	return p
}

// pacsNode is the PACS node of the settings; ok false when none is set.
func (u *UI) pacsNode() (app.PACSNode, bool) {
	port, _ := strconv.Atoi(u.pref(PrefPACSPort, ""))
	n := app.PACSNode{AETitle: u.pref(PrefPACSAE, ""), Host: u.pref(PrefPACSHost, ""), Port: port}
	return n, n.AETitle != "" && n.Host != ""
}

// reportToPACS follows a save of the Review tab's measurement: a DICOM
// study's report goes into the outbox (app.ReportToPACS) and, with a
// node set and a sender, the outbox is sent in the background
// (SendOutbox). It says what happened on the Review tab; nothing happens
// without an outbox or for an image that is not a DICOM study.
func (u *UI) reportToPACS() {
	outbox := u.pref(PrefPACSOutbox, "")
	r := u.review
	if outbox == "" || r.m == nil || r.m.DICOM == nil || r.m.DICOM.Tags.StudyInstanceUID == "" {
		return
	}
	rep, err := u.reviewReport()
	if err == nil {
		_, err = app.ReportToPACS(r.m, rep, outbox, time.Now())
	}
	if err != nil {
		r.status.SetText(r.status.Text + " The report for the PACS was not written: " + err.Error())
		return
	}
	r.status.SetText(r.status.Text + " Report written to the PACS outbox.")
	if _, ok := u.pacsNode(); ok && u.opts.PACS != nil {
		u.SendOutbox()
	}
}

// SendOutbox sends the PACS outbox to the node of the settings in the
// background (app.SendOutbox) and says the outcome on the Server tab's
// PACS part and on Review.
func (u *UI) SendOutbox() {
	p := u.server.pacs
	node, ok := u.pacsNode()
	outbox := u.pref(PrefPACSOutbox, "")
	switch {
	case u.opts.PACS == nil:
		p.status.SetText("Sending to a PACS is not available in this window.")
		return
	case outbox == "" || !ok:
		p.status.SetText("Set the outbox and the PACS node (AE title, host, port) and save them first.")
		return
	}
	p.status.SetText("Sending the outbox to " + node.String() + "...")
	var sent []string
	var err error
	u.background(func(ctx context.Context) {
		sent, err = app.SendOutbox(ctx, u.opts.PACS, node, outbox)
	}, func() {
		text := fmt.Sprintf("Sent %d file(s) to %s.", len(sent), node)
		if err != nil {
			text = fmt.Sprintf("Sent %d file(s); %v.", len(sent), err)
		}
		p.status.SetText(text)
		u.review.status.SetText(strings.TrimSpace(u.review.status.Text + " " + text))
	})
}

// SendPatientReports writes the report of each of a patient's
// measurements in effect made on a DICOM study into the PACS outbox
// (app.Service.Patients.ReportsToPACS, the batch from the Patients tab) and sends
// the outbox when a node is set; the Patients tab says what happened.
func (u *UI) SendPatientReports(id app.PatientID) {
	p := u.patients
	outbox := u.pref(PrefPACSOutbox, "")
	if outbox == "" {
		p.status.SetText("Set the PACS outbox on the Server tab first.")
		return
	}
	clinic, err := u.Clinic()
	if err != nil {
		p.status.SetText(err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), keyOpTimeout)
	defer cancel()
	b, err := u.svc.Patients.ReportsToPACS(ctx, id, outbox, clinic)
	text := fmt.Sprintf("%d file(s) written to the PACS outbox (each report and its annotated radiograph).", len(b.Written))
	if b.NoStudy > 0 {
		text += fmt.Sprintf(" %d measurement(s) have no DICOM study to return to (image files, captures, API or older entries).", b.NoStudy)
	}
	if err != nil {
		text += " " + err.Error()
	}
	p.status.SetText(text)
	u.server.pacs.status.SetText(fmt.Sprintf("Patient %s: %s Outbox: %s.", id, text, outbox))
	if _, ok := u.pacsNode(); ok && u.opts.PACS != nil && len(b.Written) > 0 {
		u.SendOutbox()
	}
}

// ShowPACSSettings shows the Server tab scrolled to the PACS settings and
// returns their status line (for the Xvfb run).
func (u *UI) ShowPACSSettings() string {
	u.SelectTab("Server")
	u.server.scroll.ScrollToBottom()
	return u.server.pacs.status.Text
}
