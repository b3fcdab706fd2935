package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	audit    *fyne.Container
	status   *widget.Label
	// toPACS writes the patient's DICOM studies' reports into the PACS
	// outbox and sends it (SendPatientReports).
	toPACS *widget.Button
	// right is the record's scrolled column: laid out again whenever the
	// rows change, so a row never overlaps the heading below it.
	right *container.Scroll

	record *app.PatientRecord
}

func newPatientsTab(u *UI) *patientsTab {
	p := &patientsTab{
		u: u, query: widget.NewEntry(), matches: container.NewVBox(), title: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		vhsPlot:  NewTrendPlot("VHS", 0, 0),
		vlasPlot: NewTrendPlot("VLAS", 0, 0),
		cardiac:  container.NewVBox(), usg: container.NewVBox(), audit: container.NewVBox(), status: newValueLabel(""),
	}
	p.toPACS = widget.NewButton("Send this patient's reports to the PACS", func() {
		if p.record != nil {
			u.SendPatientReports(p.record.PatientID)
		}
	})
	p.query.SetPlaceHolder("find by name or ID (part will do)")
	p.query.OnChanged = func(string) { p.refreshSearch() }
	p.query.OnSubmitted = func(s string) {
		// The search field is typed text: parsed here, refused here.
		id, err := app.ParsePatientID(strings.TrimSpace(s))
		if err != nil {
			p.status.SetText("Could not open the patient: " + err.Error())
			return
		}
		p.u.OpenPatient(id)
	}
	// The list keeps a readable width however long the record's lines.
	left := withMinWidth(patientsListWidth, container.NewBorder(container.NewVBox(p.query, widget.NewLabel("Patients")), nil, nil, nil, container.NewVScroll(p.matches)))
	// Scrolling both ways, so a long line scrolls instead of squeezing
	// the list.
	p.right = container.NewScroll(container.NewVBox(
		p.title, container.NewHBox(p.toPACS), p.status,
		container.NewGridWithColumns(2, p.vhsPlot, p.vlasPlot),
		wrapped(widget.NewLabelWithStyle("Cardiac measurements: model, * edited (model landmarks corrected) or * manual (placed by hand); hollow dots are the clinician's values", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})),
		p.cardiac,
		widget.NewLabelWithStyle("Bloodwork screening (USG)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		p.usg,
		widget.NewLabelWithStyle("Changes (audit trail)", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		p.audit,
	))
	split := container.NewHSplit(left, p.right)
	split.Offset = 0.25
	p.content = split
	return p
}

func (p *patientsTab) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), keyOpTimeout)
}

// refreshSearch lists the patients whose name or id matches the query.
func (p *patientsTab) refreshSearch() {
	ctx, cancel := p.ctx()
	defer cancel()
	found, err := p.u.svc.Patients.FindPatients(ctx, p.query.Text, maxPatientMatches)
	if err != nil {
		p.matches.Objects = []fyne.CanvasObject{newValueLabel("Search failed: " + err.Error())}
		p.matches.Refresh()
		return
	}
	objs := make([]fyne.CanvasObject, 0, len(found)+1)
	if len(found) == 0 {
		objs = append(objs, newValueLabel("No patient found. Patients appear here once saved, or once a measurement is saved with their ID."))
	}
	for _, m := range found {
		id := m.Patient.ID
		objs = append(objs, widget.NewButton(m.Label(), func() { p.u.OpenPatient(id) }))
	}
	p.matches.Objects = objs
	p.matches.Refresh()
}

// follow shows the current patient's record (the patient bar's id), read
// again from the store: the tab follows every change of patient and
// every save at once, whether or not it is selected. With no patient it
// says so.
func (p *patientsTab) follow() {
	id, err := p.u.patientID()
	if id == "" || err != nil {
		p.clear()
		return
	}
	p.Open(id)
}

// clear shows no patient.
func (p *patientsTab) clear() {
	p.record = nil
	p.title.SetText("No patient open")
	p.status.SetText("Type a patient ID above, or find one here.")
	p.vhsPlot.SetPoints(nil)
	p.vlasPlot.SetPoints(nil)
	for _, c := range []*fyne.Container{p.cardiac, p.usg, p.audit} {
		c.Objects = nil
	}
	p.relayout()
}

// relayout lays the record's column out again after its rows changed.
func (p *patientsTab) relayout() {
	for _, c := range []*fyne.Container{p.cardiac, p.usg, p.audit} {
		c.Refresh()
	}
	p.right.Content.Refresh()
	p.right.Refresh()
}

// Open shows one patient's record: details, trends against the species
// or breed range (current versions only), every cardiac measurement with
// its versions and removals, the bloodwork screenings with the values
// entered, and the audit trail.
func (p *patientsTab) Open(id app.PatientID) {
	ctx, cancel := p.ctx()
	defer cancel()
	rec, err := p.u.svc.Patients.Patient(ctx, id)
	if err != nil {
		p.status.SetText("Could not open the patient: " + err.Error())
		return
	}
	p.record = rec
	title := "Patient " + rec.PatientID.String()
	if d := rec.Details; d.Name != "" {
		title = fmt.Sprintf("%s (%s)", d.Name, rec.PatientID)
	}
	if about := detailsLine(rec); about != "" {
		title += ": " + about
	}
	p.title.SetText(title)
	hidden, hiddenUSG := 0, 0
	for _, e := range rec.Cardiac {
		if e.Hidden != nil {
			hidden++
		}
	}
	for _, v := range rec.USG {
		if v.Hidden != nil {
			hiddenUSG++
		}
	}
	hidden += hiddenUSG
	status := fmt.Sprintf("%d cardiac measurements, %d bloodwork screenings.", len(rec.Cardiac)-hidden+hiddenUSG, len(rec.USG)-hiddenUSG)
	if hidden > 0 {
		status += fmt.Sprintf(" %d removed (listed below, with the reason).", hidden)
	}
	if !rec.HasDetails {
		status += " No record yet: enter the details above and press Save patient."
	}
	p.status.SetText(status)
	ref := rec.Reference
	p.vhsPlot.Title = fmt.Sprintf("VHS (%s %s)", ref.VHS.Scope(), ref.VHS.Describe())
	p.vhsPlot.BandLow, p.vhsPlot.BandHigh = ref.VHS.Low, ref.VHS.High
	if ref.HasVLAS {
		p.vlasPlot.Title = fmt.Sprintf("VLAS (reference %s)", ref.VLAS.Describe())
		p.vlasPlot.BandLow, p.vlasPlot.BandHigh = max(ref.VLAS.Low, ref.VLAS.High-1.3), ref.VLAS.High
	} else {
		p.vlasPlot.Title = "VLAS (no published range for this species)"
		p.vlasPlot.BandLow, p.vlasPlot.BandHigh = 0, 0
	}
	vhs, vlas := trendPoints(rec.Trend())
	rows := []fyne.CanvasObject{}
	for _, e := range rec.Cardiac {
		rows = append(rows, p.cardiacRow(rec.PatientID, e))
	}
	if len(rows) == 0 {
		rows = append(rows, widget.NewLabel("No cardiac measurements."))
	}
	if !ref.HasVLAS && len(vlas) > 0 {
		// No band: an empty one at the first value keeps the axis on the data.
		p.vlasPlot.BandLow, p.vlasPlot.BandHigh = vlas[0].Value, vlas[0].Value
	}
	p.vhsPlot.SetPoints(vhs)
	p.vlasPlot.SetPoints(vlas)
	p.cardiac.Objects = rows
	p.cardiac.Refresh()
	urows := []fyne.CanvasObject{}
	for _, v := range rec.USG {
		urows = append(urows, p.usgRow(rec.PatientID, v))
	}
	if len(urows) == 0 {
		urows = append(urows, widget.NewLabel("No bloodwork screenings."))
	}
	p.usg.Objects = urows
	p.usg.Refresh()
	arows := []fyne.CanvasObject{}
	for _, a := range rec.Audit {
		line := fmt.Sprintf("%s   %s", a.Time.Local().Format("2006-01-02 15:04"), strings.ReplaceAll(a.Action, "_", " "))
		if a.Detail != "" {
			line += ": " + a.Detail
		}
		if a.Reason != "" {
			line += "   reason: " + a.Reason
		}
		arows = append(arows, newValueLabel(line))
	}
	if len(arows) == 0 {
		arows = append(arows, widget.NewLabel("No changes recorded."))
	}
	p.audit.Objects = arows
	p.relayout()
}

// trendPoints are the VHS and VLAS points of a trend (app.PatientRecord.
// Trend): one per study, at the study's time, with the values of the
// versions it corrected.
func trendPoints(trend []app.TrendEntry) (vhs, vlas []TrendPoint) {
	vhsOf := func(e app.CardiacEntry) *float64 { return e.VHS }
	vlasOf := func(e app.CardiacEntry) *float64 { return e.VLAS }
	for _, t := range trend {
		if pt, ok := trendPoint(t, vhsOf); ok {
			vhs = append(vhs, pt)
		}
		if pt, ok := trendPoint(t, vlasOf); ok {
			vlas = append(vlas, pt)
		}
	}
	return vhs, vlas
}

// trendPoint is one study's point of the value value picks, at the study's
// time with the values of the versions it corrected; ok is false where
// the version in effect has no such value.
func trendPoint(t app.TrendEntry, value func(app.CardiacEntry) *float64) (TrendPoint, bool) {
	v := value(t.Entry)
	if v == nil {
		return TrendPoint{}, false
	}
	pt := TrendPoint{Time: t.StudyTime, Value: *v, Edited: t.Entry.Kind.Clinician()}
	for _, old := range t.Earlier {
		if w := value(old); w != nil {
			pt.Earlier = append(pt.Earlier, *w)
		}
	}
	return pt, true
}

// detailsLine is the record's details in one line.
func detailsLine(rec *app.PatientRecord) string {
	d := rec.Details
	var parts []string
	for _, v := range []string{d.Species, d.Breed, d.Sex} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	if months, ok := app.Age(d.BirthDate, time.Now()); ok {
		parts = append(parts, app.AgeText(months))
	}
	if d.WeightKg != nil {
		parts = append(parts, fmt.Sprintf("%g kg", *d.WeightKg))
	}
	if d.Owner != "" {
		parts = append(parts, "owner "+d.Owner)
	}
	return strings.Join(parts, ", ")
}

// OpenPatient shows the Patients tab for one patient id and makes it
// the current patient.
//
// Changing the patient while Review holds unsaved work asks first.
func (u *UI) OpenPatient(id app.PatientID) {
	open := func() {
		if u.PatientID() != id.String() {
			u.SetPatientID(id)
		}
		u.patients.Open(id)
		u.SelectTab("Patients")
	}
	if u.PatientID() == id.String() {
		open()
		return
	}
	u.confirmDiscard("open patient "+patientName(id.String()), open, nil)
}
