package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
)

// maxPatientMatches bounds the search list.
const maxPatientMatches = 50

// patientsListWidth is the least width of the Patients tab's search and
// list, enough for the search box's placeholder.
const patientsListWidth = 280

// wrapped makes a label wrap its words (a heading that must not widen
// the panel).
func wrapped(l *widget.Label) *widget.Label {
	l.Wrapping = fyne.TextWrapWord
	return l
}

// patientsTab finds patients by id and shows their VHS and VLAS trends
// (with the normal bands), the measurement list and the USG history.
type patientsTab struct {
	u       *UI
	content fyne.CanvasObject

	query    *widget.Entry
	matches  *fyne.Container
	title    *widget.Label
	vhsPlot  *TrendPlot
	vlasPlot *TrendPlot
	cardiac  *fyne.Container
	usg      *fyne.Container
	status   *widget.Label

	record *app.PatientRecord
}

func newPatientsTab(u *UI) *patientsTab {
	p := &patientsTab{
		u: u, query: widget.NewEntry(), matches: container.NewVBox(), title: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		vhsPlot:  NewTrendPlot("VHS (normal 8.5-10.5)", app.VHSNormalLow, app.VHSNormalHigh),
		vlasPlot: NewTrendPlot("VLAS (normal < 2.5)", 1.0, app.VLASNormalMax),
		cardiac:  container.NewVBox(), usg: container.NewVBox(), status: newValueLabel(""),
	}
	p.query.SetPlaceHolder("find a patient ID (part of it is enough)")
	p.query.OnChanged = func(string) { p.refreshSearch() }
	p.query.OnSubmitted = func(s string) { p.Open(strings.TrimSpace(s)) }
	// The list keeps a readable width however long the record's lines.
	left := withMinWidth(patientsListWidth, container.NewBorder(container.NewVBox(p.query, widget.NewLabel("Patients")), nil, nil, nil, container.NewVScroll(p.matches)))
	// Scrolling both ways, so a long line scrolls instead of squeezing
	// the list.
	right := container.NewScroll(container.NewVBox(
		p.title, p.status,
		container.NewGridWithColumns(2, p.vhsPlot, p.vlasPlot),
		wrapped(widget.NewLabelWithStyle("Cardiac measurements: model, * edited (model landmarks corrected) or * manual (placed by hand); hollow dots are the clinician's values", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
		p.cardiac,
		widget.NewLabelWithStyle("USG screening", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		p.usg,
	))
	split := container.NewHSplit(left, right)
	split.Offset = 0.25
	p.content = split
	return p
}

func (p *patientsTab) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), keyOpTimeout)
}

// refreshSearch lists the patient ids matching the query.
func (p *patientsTab) refreshSearch() {
	ctx, cancel := p.ctx()
	defer cancel()
	ids, err := p.u.svc.Patients(ctx, p.query.Text, maxPatientMatches)
	if err != nil {
		p.matches.Objects = []fyne.CanvasObject{newValueLabel("Search failed: " + err.Error())}
		p.matches.Refresh()
		return
	}
	objs := make([]fyne.CanvasObject, 0, len(ids)+1)
	if len(ids) == 0 {
		objs = append(objs, newValueLabel("No patient found. Measurements saved with a patient ID appear here."))
	}
	for _, id := range ids {
		objs = append(objs, widget.NewButton(id, func() { p.Open(id) }))
	}
	p.matches.Objects = objs
	p.matches.Refresh()
}

// Open shows one patient's record.
func (p *patientsTab) Open(id string) {
	ctx, cancel := p.ctx()
	defer cancel()
	rec, err := p.u.svc.Patient(ctx, id)
	if err != nil {
		p.status.SetText("Could not open the patient: " + err.Error())
		return
	}
	p.record = rec
	p.title.SetText("Patient " + rec.PatientID)
	p.status.SetText(fmt.Sprintf("%d cardiac measurements, %d USG screenings.", len(rec.Cardiac), len(rec.USG)))
	var vhs, vlas []TrendPoint
	rows := []fyne.CanvasObject{}
	for _, e := range rec.Cardiac {
		byHand := e.Kind.Clinician()
		if e.VHS != nil {
			vhs = append(vhs, TrendPoint{Time: e.Time, Value: *e.VHS, Edited: byHand})
		}
		if e.VLAS != nil {
			vlas = append(vlas, TrendPoint{Time: e.Time, Value: *e.VLAS, Edited: byHand})
		}
		line := fmt.Sprintf("%s   VHS %s   VLAS %s   %s", e.Time.Local().Format("2006-01-02 15:04"), fmtValue(e.VHS), fmtValue(e.VLAS), kindNote(e))
		line += "   from " + sourceName(e.Customer)
		rows = append(rows, widget.NewLabel(line))
	}
	if len(rows) == 0 {
		rows = append(rows, widget.NewLabel("No cardiac measurements."))
	}
	p.vhsPlot.SetPoints(vhs)
	p.vlasPlot.SetPoints(vlas)
	p.cardiac.Objects = rows
	p.cardiac.Refresh()
	urows := []fyne.CanvasObject{}
	for _, v := range rec.USG {
		urows = append(urows, widget.NewLabel(fmt.Sprintf("%s   P(impaired) %.1f%%   %s   set {%s}   from %s",
			v.Time.Local().Format("2006-01-02 15:04"), 100*v.ProbabilityImpaired, v.RiskLabel, strings.Join(v.ConformalSet, ", "), sourceName(v.Customer))))
	}
	if len(urows) == 0 {
		urows = append(urows, widget.NewLabel("No USG screenings."))
	}
	p.usg.Objects = urows
	p.usg.Refresh()
}

// kindNote is a history line's kind: model, or * edited / * manual
// with the model's values beside.
func kindNote(e app.CardiacEntry) string {
	if !e.Kind.Clinician() {
		return string(e.Kind)
	}
	if e.ModelVHS == nil && e.ModelVLAS == nil {
		return fmt.Sprintf("* %s (model gave no values)", e.Kind)
	}
	return fmt.Sprintf("* %s (model VHS %s, VLAS %s)", e.Kind, fmtValue(e.ModelVHS), fmtValue(e.ModelVLAS))
}

func sourceName(customer string) string {
	if customer == app.DesktopCustomer {
		return "this desktop"
	}
	return "API client " + customer
}

// OpenPatient shows the Patients tab for one patient id.
func (u *UI) OpenPatient(id string) {
	u.patients.query.SetText(id)
	u.patients.Open(id)
	u.SelectTab("Patients")
}
