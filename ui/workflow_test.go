package ui

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"vetlens/app"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
	"vetlens/platform/printing"
)

// texts collects the text of every label, button, check and entry under o.
func texts(o fyne.CanvasObject) []string {
	var out []string
	switch w := o.(type) {
	case *widget.Label:
		out = append(out, w.Text)
	case *widget.Button:
		out = append(out, w.Text)
	case *widget.Check:
		out = append(out, w.Text)
	case *widget.Accordion:
		for _, it := range w.Items {
			out = append(out, it.Title)
			out = append(out, texts(it.Detail)...)
		}
	case *widget.Form:
		for _, it := range w.Items {
			out = append(out, it.Text)
			out = append(out, texts(it.Widget)...)
		}
	case *widget.Select:
		out = append(out, w.Selected)
	case *fyne.Container:
		for _, c := range w.Objects {
			out = append(out, texts(c)...)
		}
	case *container.Scroll:
		out = append(out, texts(w.Content)...)
	case *container.Split:
		out = append(out, texts(w.Leading)...)
		out = append(out, texts(w.Trailing)...)
	}
	return out
}

// TestClinicalWorkflow: a patient prefilled from an image's tags (the
// DICOM reader's function), the breed range on Review, one save per
// change, reopening from the history and correcting with both versions
// kept, removal with a reason, and the report as a clinic hands it over,
// checked as text and as pixels (pdftoppm). No charge text anywhere on
// Capture, Review or Bloodwork.
func TestClinicalWorkflow(t *testing.T) {
	u, _, done := newTestUI(t, true)
	r := u.review

	// The image's tags prefill the patient bar and create the record.
	res, err := u.PrefillPatient(app.PatientTags{PatientID: "4821", Name: "Smith^Rex", Species: "Canine", Breed: "BOXER", Sex: "M",
		Neutered: "ALTERED", BirthDate: "20210115", WeightKg: 31.5, ResponsiblePerson: "Smith^Jane"})
	if err != nil || !res.Created {
		t.Fatalf("prefill %+v %v", res, err)
	}
	b := u.bar
	if u.PatientID() != "4821" || b.name.Text != "Rex" || b.species.Selected != "dog" || b.breed.Text != "Boxer" || b.sex.Selected != app.SexMaleNeutered ||
		b.birth.Text != "2021-01-15" || b.weight.Text != "31.5" || b.owner.Text != "Jane Smith" || !b.save.Disabled() {
		t.Fatalf("patient bar: %q %q %q %q %q %q %q, save %v", u.PatientID(), b.name.Text, b.species.Selected, b.breed.Text, b.sex.Selected, b.birth.Text, b.owner.Text, b.save.Disabled())
	}
	if !strings.Contains(b.status.Text, "created from the image") {
		t.Fatalf("bar status %q", b.status.Text)
	}

	// The measurement is stated against the Boxer range.
	u.SelectTab("Review")
	if err := u.OpenFile(phantom1); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	if !strings.Contains(r.vhs.Text, "; breed range 10.0-13.2)") || !strings.Contains(r.rangeText.Text, "breed range 10.0-13.2 for Boxer (Lamb et al. 2001") {
		t.Fatalf("range on Review: %q / %q", r.vhs.Text, r.rangeText.Text)
	}
	for _, jargon := range []string{"Result 1", "spread", "log-odds", "conformal"} {
		for _, l := range []*widget.Label{r.vhs, r.vlas, r.reading, r.rangeText, r.status, r.conf} {
			if strings.Contains(l.Text, jargon) {
				t.Fatalf("%q outside Details: %q", jargon, l.Text)
			}
		}
	}
	if !strings.Contains(r.details.Text, "Ensemble spread") || !strings.Contains(r.details.Text, "Result code") {
		t.Fatalf("details %q", r.details.Text)
	}
	// Editing the bar's breed changes the range at once.
	b.breed.SetText("Whippet")
	if !strings.Contains(r.vhs.Text, "breed range 10.0-12.0") || b.save.Disabled() {
		t.Fatalf("after breed edit: %q, save %v", r.vhs.Text, b.save.Disabled())
	}
	b.breed.SetText("Boxer")

	// Save once: the second press saves nothing.
	test.Tap(r.save)
	if !r.save.Disabled() {
		t.Fatal("Save enabled after saving")
	}
	test.Tap(r.save) // disabled: nothing happens
	if err := u.SaveReview(); err != nil || !strings.Contains(r.status.Text, "nothing new to save") {
		t.Fatalf("second save %v %q", err, r.status.Text)
	}
	rec, err := u.svc.Patients.Patient(t.Context(), "4821")
	if err != nil || len(rec.Cardiac) != 1 {
		t.Fatalf("history after two presses %+v %v", rec, err)
	}
	modelVHS := *rec.Cardiac[0].VHS

	// Reopen it from the history, correct it, see both versions.
	u.OpenPatient("4821")
	p := u.patients
	if !strings.Contains(p.title.Text, "Rex (4821): dog, Boxer, male neutered") || p.vhsPlot.BandLow != 10.0 || !strings.Contains(p.vhsPlot.Title, "breed range 10.0-13.2") {
		t.Fatalf("patients: %q, band %v-%v %q", p.title.Text, p.vhsPlot.BandLow, p.vhsPlot.BandHigh, p.vhsPlot.Title)
	}
	open := rowButton(t, p.cardiac.Objects[0], "Open")
	test.Tap(open)
	if u.tabs.Selected().Text != "Review" || r.m.Base == nil || !r.save.Disabled() || !strings.HasPrefix(r.state.Text, "Reopened the measurement") {
		t.Fatalf("reopen: tab %q, base %v, save %v, state %q", u.tabs.Selected().Text, r.m.Base, r.save.Disabled(), r.state.Text)
	}
	start := r.view.WidgetPos(cardiac.HeartBottom)
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 30)}, Dragged: fyne.NewDelta(0, 30)})
	r.view.DragEnd()
	if r.save.Disabled() || r.kind != app.MeasurementEdited {
		t.Fatalf("after correcting: save %v kind %s", r.save.Disabled(), r.kind)
	}
	test.Tap(r.save)
	if !strings.Contains(r.status.Text, "earlier version is kept") {
		t.Fatalf("status %q", r.status.Text)
	}
	// A second correction on the same screen corrects the first one.
	start = r.view.WidgetPos(cardiac.HeartBottom)
	r.view.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: start.AddXY(0, 10)}, Dragged: fyne.NewDelta(0, 10)})
	r.view.DragEnd()
	test.Tap(r.save)
	rec, _ = u.svc.Patients.Patient(t.Context(), "4821")
	if len(rec.Cardiac) != 3 || rec.Cardiac[1].Supersedes != rec.Cardiac[0].Seq || rec.Cardiac[2].Supersedes != rec.Cardiac[1].Seq || !rec.Cardiac[2].Current() {
		t.Fatalf("chain %+v", rec.Cardiac)
	}
	if _, err := u.svc.Patients.HideEntry(t.Context(), "4821", app.DesktopCustomer, rec.Cardiac[2].Seq, "second drag was a slip"); err != nil {
		t.Fatal(err)
	}
	u.OpenPatient("4821")
	if len(p.cardiac.Objects) != 3 {
		t.Fatalf("%d rows", len(p.cardiac.Objects))
	}
	first, second := rowText(p.cardiac.Objects[0]), rowText(p.cardiac.Objects[1])
	if !strings.HasPrefix(first, "EARLIER VERSION (corrected since)") || !strings.Contains(second, "(correction of an earlier version)") || !strings.Contains(second, "* edited") {
		t.Fatalf("rows %q / %q", first, second)
	}
	if pts := p.vhsPlot.Points(); len(pts) != 1 || !pts[0].Edited || pts[0].Value == modelVHS {
		t.Fatalf("trend shows %+v: only the current version belongs there", pts)
	}

	// The report: clinic, animal and owner, breed range and source, kind,
	// no confidence for a corrected value, numbered landmarks with plain
	// names, signature line; and the logo and landmarks as pixels.
	logo := filepath.Join(t.TempDir(), "logo.png")
	writeLogo(t, logo)
	if err := u.SetClinic("Happy Paws Veterinary Clinic", "12 High Street\nSpringfield", logo); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.pdf")
	if err := u.ExportReport(out); err != nil {
		t.Fatal(err)
	}
	text := reportText(t, out)
	for _, want := range []string{"Happy Paws Veterinary Clinic 12 High Street Springfield", "Name: Rex", "Species: dog, Boxer", "Sex: male neutered",
		"Weight: 31.5 kg", "Owner: Jane Smith", "Age: ", "breed range 10.0-13.2 (Boxer; Lamb et al. 2001", "Measurement: Model landmarks corrected by clinician.",
		"1 Carina", "2 Cardiac apex", "7 Vertebra T9 (end)", "Veterinarian: Signature: Date:"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"heart_top", "heart_bottom", "Confidence", "$"} {
		if strings.Contains(text, bad) {
			t.Errorf("report has %q:\n%s", bad, text)
		}
	}
	page := renderPDF(t, out)
	// The logo (pure magenta square) is at the top left.
	if n := countColour(page, image.Rect(0, 0, page.Bounds().Dx()/4, page.Bounds().Dy()/8), color.RGBA{255, 0, 255, 255}, 40); n < 200 {
		t.Errorf("logo: %d magenta pixels at the top left", n)
	}
	// The landmarks' legend discs and the numbered landmarks are drawn in
	// their colours (the carina red, the apex orange).
	for k, min := range map[int]int{cardiac.HeartTop: 12, cardiac.HeartBottom: 12} {
		if n := countColour(page, page.Bounds(), cardiac.LandmarkColor(k), 40); n < min {
			t.Errorf("landmark %d colour: %d pixels", k+1, n)
		}
	}

	// Removal hides with a reason, kept in the audit trail.
	if err := u.RemoveMeasurement("4821", app.DesktopCustomer, rec.Cardiac[0].Seq, "duplicate of the corrected one"); err != nil {
		t.Fatal(err)
	}
	if row := rowText(p.cardiac.Objects[0]); !strings.HasPrefix(row, "REMOVED ") || !strings.Contains(row, "duplicate of the corrected one") {
		t.Fatalf("removed row %q", row)
	}
	var trail []string
	for _, o := range p.audit.Objects {
		trail = append(trail, o.(*widget.Label).Text)
	}
	if all := strings.Join(trail, "\n"); !strings.Contains(all, "patient created") || !strings.Contains(all, "corrected") || !strings.Contains(all, "reason: duplicate of the corrected one") {
		t.Fatalf("audit trail:\n%s", all)
	}

	// No charge text on the clinical screens.
	for _, tab := range []struct {
		name string
		o    fyne.CanvasObject
	}{{"Capture", u.capture.content}, {"Review", r.side}, {"Bloodwork", u.blood.content}} {
		all := texts(tab.o)
		if len(all) < 5 {
			t.Fatalf("%s: read only %q", tab.name, all)
		}
		for _, s := range all {
			for _, bad := range []string{"$", "charged", "paygo", "tier,", "Metered", "billable"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s shows %q: %q", tab.name, bad, s)
				}
			}
		}
	}
}

// TestNoReportForRejectedImage: a photograph the model rejects has no
// report and no Print.
func TestNoReportForRejectedImage(t *testing.T) {
	u, _, done := newTestUI(t, true)
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for y := 0; y < 240; y++ {
		for x := 0; x < 320; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(255 - y), 90, 255})
		}
	}
	path := filepath.Join(t.TempDir(), "gradient.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := u.OpenFile(path); err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	r := u.review
	if !r.m.Result.Rejected {
		t.Skipf("the model did not reject the test image (result %d)", r.m.Result.Code)
	}
	if !r.export.Disabled() || !r.print.Disabled() {
		t.Fatal("report offered for a rejected image")
	}
	if err := u.ExportReport(filepath.Join(t.TempDir(), "r.pdf")); err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("export of a rejected image: %v", err)
	}
	if !strings.Contains(r.printWhy.Text, "printing is not set up") {
		t.Fatalf("print note %q", r.printWhy.Text)
	}
}

// rowButton is the button labelled text in a history row.
func rowButton(t *testing.T, row fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	for _, o := range row.(*fyne.Container).Objects {
		if box, ok := o.(*fyne.Container); ok {
			for _, b := range box.Objects {
				if btn, ok := b.(*widget.Button); ok && btn.Text == text {
					return btn
				}
			}
		}
	}
	t.Fatalf("no %q button in the row", text)
	return nil
}

// writeLogo writes a 64x64 magenta PNG.
func writeLogo(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = []uint8{255, 0, 255, 255}[i%4]
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// renderPDF renders the first page at 72 dpi with pdftoppm.
func renderPDF(t *testing.T, path string) image.Image {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "page")
	if out, err := exec.Command("pdftoppm", "-png", "-r", "72", "-f", "1", "-l", "1", path, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm (poppler-utils): %v %s", err, out)
	}
	matches, _ := filepath.Glob(prefix + "*.png")
	if len(matches) != 1 {
		t.Fatalf("pdftoppm wrote %v", matches)
	}
	f, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countColour counts the pixels of r within tol (per channel) of c.
func countColour(img image.Image, r image.Rectangle, c color.RGBA, tol int) int {
	n := 0
	abs := func(v int) int { return max(v, -v) }
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if abs(int(cr>>8)-int(c.R)) <= tol && abs(int(cg>>8)-int(c.G)) <= tol && abs(int(cb>>8)-int(c.B)) <= tol {
				n++
			}
		}
	}
	return n
}

// TestLastPatientKept: the patient in the bar opens again in the next
// window (a restart), with its record.
func TestLastPatientKept(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	u.SetPatientID("Tom-5")
	u.bar.name.SetText("Tom")
	u.bar.species.SetSelected("cat")
	if u.bar.save.Disabled() {
		t.Fatal("Save patient off after an edit")
	}
	if err := u.SavePatient(); err != nil {
		t.Fatal(err)
	}
	if !u.bar.save.Disabled() || !strings.Contains(u.bar.status.Text, "Patient Tom-5 saved") {
		t.Fatalf("after saving: save %v, status %q", u.bar.save.Disabled(), u.bar.status.Text)
	}
	if err := u.SavePatient(); err != nil || u.bar.status.Text != "No change to save." {
		t.Fatalf("second save: %v %q", err, u.bar.status.Text)
	}
	next := New(u.svc, Options{}) // the same preferences: the next start
	if next.PatientID() != "Tom-5" || next.bar.name.Text != "Tom" || next.bar.species.Selected != "cat" || !next.bar.save.Disabled() {
		t.Fatalf("next start: %q %q %q", next.PatientID(), next.bar.name.Text, next.bar.species.Selected)
	}
	// A bad birth date is refused with the field named, nothing stored.
	next.bar.birth.SetText("03/04/2020")
	if err := next.SavePatient(); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
		t.Fatalf("bad date: %v", err)
	}
	if p, _, _ := u.svc.Patients.PatientDetails(t.Context(), "Tom-5"); p.BirthDate != "" {
		t.Fatalf("stored %+v", p)
	}
}

// TestUSGHistoryLine: a screening lists the values as entered with their
// units; an API screening (no entered values) lists the model's values in
// the spec's units, and its corrections render in the bundled font.
func TestUSGHistoryLine(t *testing.T) {
	desk := usgLine(app.USGVisit{Customer: app.DesktopCustomer, ProbabilityImpaired: 0.25, RiskLabel: "Low risk",
		Entered: []app.EnteredValue{{Name: "Creatinine", Value: 160, Unit: app.UnitUmolL}, {Name: "Lymphocytes (absolute)", Value: 1.5, Unit: app.UnitThousandPerU}}})
	api := usgLine(app.USGVisit{Customer: "lan-pc", ProbabilityImpaired: 0.7, RiskLabel: "High risk",
		Features:    map[string]float64{"BUN": 30, "CREATININE": 3},
		Corrections: []string{"Creatinine (mg/dL): 265 → 3 (converted from umol/L to mg/dL)"}})
	for _, tc := range []struct{ got, want string }{
		{desk, "values: Creatinine 160 µmol/L, Lymphocytes (absolute) 1.5 10³/µL"},
		{desk, "25% chance of impaired concentration, Low risk   from this desktop"},
		{api, "values: BUN 30 mg/dL, Creatinine 3 mg/dL"},
		{api, "corrected: Creatinine (mg/dL): 265 to 3"},
	} {
		if !strings.Contains(tc.got, tc.want) {
			t.Errorf("%q lacks %q", tc.got, tc.want)
		}
	}
	checkGlyphs(t, desk, api)
}

// showPhantomResult shows on Review a code-1 model result on the first
// phantom at its true landmarks.
func showPhantomResult(t *testing.T, u *UI) cardiac.Landmarks {
	t.Helper()
	truth, vhs := phantomTruth(t, "xraysim_1_640x480.png")
	res := &cardiac.Result{Width: 640, Height: 480, Code: cardiac.CodeHighConfidence, Landmarks: truth, ModelLandmarks: []cardiac.Landmarks{truth},
		VHS: &vhs, Confidence: cardiac.ConfidenceOptimal, LandmarksDetected: true, AxesPerpendicular: true}
	u.ShowMeasurement(&app.Measurement{Result: res, Image: phantomImage(t), ModelVersion: "m-1"}, "test image")
	return truth
}

// below fails unless heading's top is at or below the bottom of rows,
// both in the record's column.
func below(t *testing.T, rows *fyne.Container, heading fyne.CanvasObject, when string) {
	t.Helper()
	walkObjects(rows, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok && l.Visible() && l.MinSize().Height > l.Size().Height+0.5 {
			t.Errorf("%s: a row's text needs %.0f px but is given %.0f: %q", when, l.MinSize().Height, l.Size().Height, l.Text)
		}
	})
	if bottom := rows.Position().Y + rows.Size().Height; heading.Position().Y < bottom-0.5 {
		t.Errorf("%s: the heading at y %.0f is drawn over the rows ending at %.0f", when, heading.Position().Y, bottom)
	}
}

// TestPatientsTabFollows: the Patients tab shows the current patient and
// every save at once, without being clicked again (a save, a correction
// of a reopened entry, a change of patient in the header), and its rows
// never overlap the bloodwork heading below them.
func TestPatientsTabFollows(t *testing.T) {
	u, w, _ := newTestUI(t, false)
	w.Resize(fyne.NewSize(1024, 700))
	p := u.patients
	var heading fyne.CanvasObject
	for _, o := range p.right.Content.(*fyne.Container).Objects {
		if l, ok := o.(*widget.Label); ok && strings.HasPrefix(l.Text, "Bloodwork screening") {
			heading = l
		}
	}
	if heading == nil {
		t.Fatal("no bloodwork heading")
	}
	u.SelectTab("Patients")
	u.SetPatientID("Rex-1")
	if p.record == nil || p.record.PatientID != "Rex-1" {
		t.Fatalf("header Rex-1, tab shows %+v", p.record)
	}
	u.SelectTab("Review")
	truth := showPhantomResult(t, u)
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	if len(p.record.Cardiac) != 1 || len(p.vhsPlot.Points()) != 1 || len(p.cardiac.Objects) != 1 {
		t.Fatalf("after the save: %d entries, %d points, %d rows", len(p.record.Cardiac), len(p.vhsPlot.Points()), len(p.cardiac.Objects))
	}
	// A correction of the reopened entry shows at once too.
	u.SelectTab("Patients")
	if err := u.ReopenMeasurement("Rex-1", app.DesktopCustomer, p.record.Cardiac[0].Seq); err != nil {
		t.Fatal(err)
	}
	dragTo(u.review.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 8})
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	if len(p.record.Cardiac) != 2 || p.record.Cardiac[0].SupersededBy == 0 || len(p.vhsPlot.Points()) != 1 || *p.record.Cardiac[1].VHS == *p.record.Cardiac[0].VHS {
		t.Fatalf("after the correction: %+v", p.record.Cardiac)
	}
	if pt := p.vhsPlot.Points()[0]; pt.Value != *p.record.Cardiac[1].VHS {
		t.Errorf("trend shows %.2f, not the correction's %.2f", pt.Value, *p.record.Cardiac[1].VHS)
	}
	u.SelectTab("Patients")
	below(t, p.cardiac, heading, "two rows")
	// The header's patient is the tab's.
	u.SetPatientID("Bella")
	if p.record == nil || p.record.PatientID != "Bella" || !strings.Contains(p.title.Text, "Bella") || len(p.record.Cardiac) != 0 {
		t.Fatalf("header Bella, tab shows %q", p.title.Text)
	}
	below(t, p.cardiac, heading, "no rows")
	// Back to Rex-1 while the tab is on screen: the rows grow in place.
	u.SetPatientID("Rex-1")
	below(t, p.cardiac, heading, "two rows, shown in place")
	u.SetPatientID("")
	if p.record != nil || p.title.Text != "No patient open" {
		t.Fatalf("no patient, tab shows %q", p.title.Text)
	}
}

// TestCorrectionOnTheTrend: a study corrected after a later study was
// saved stays one point at its own study's time, with the corrected
// value and the value it was corrected from; it is not plotted as a new
// measurement after the later study.
func TestCorrectionOnTheTrend(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	p := u.patients
	u.SetPatientID("Rex-1")
	truth := showPhantomResult(t, u)
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	first := p.record.Cardiac[0]
	// A later study (other landmarks, so not a repeat).
	showPhantomResult(t, u)
	dragTo(u.review.view, cardiac.HeartLeft, cardiac.Point{X: truth[cardiac.HeartLeft].X + 6, Y: truth[cardiac.HeartLeft].Y})
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	second := p.record.Cardiac[1]
	// The first study corrected now.
	if err := u.ReopenMeasurement("Rex-1", app.DesktopCustomer, first.Seq); err != nil {
		t.Fatal(err)
	}
	dragTo(u.review.view, cardiac.HeartBottom, cardiac.Point{X: truth[cardiac.HeartBottom].X, Y: truth[cardiac.HeartBottom].Y + 8})
	if err := u.SaveReview(); err != nil {
		t.Fatal(err)
	}
	correction := p.record.Cardiac[2]
	if correction.Supersedes != first.Seq || !correction.Time.After(second.Time) {
		t.Fatalf("correction %+v", correction.HistoryEntry)
	}
	pts := p.vhsPlot.Points()
	if len(pts) != 2 {
		t.Fatalf("%d points: %+v", len(pts), pts)
	}
	if !pts[0].Time.Equal(first.Time) || pts[0].Value != *correction.VHS || len(pts[0].Earlier) != 1 || pts[0].Earlier[0] != *first.VHS {
		t.Errorf("corrected study plotted as %+v; want %.2f at %v, corrected from %.2f", pts[0], *correction.VHS, first.Time, *first.VHS)
	}
	if !pts[1].Time.Equal(second.Time) || pts[1].Value != *second.VHS || len(pts[1].Earlier) != 0 {
		t.Errorf("later study plotted as %+v", pts[1])
	}
	r := test.WidgetRenderer(p.vhsPlot).(*plotRenderer)
	if len(r.earlier) != 1 || !strings.Contains(r.values[0].Text, fmt.Sprintf("corrected from %.2f", *first.VHS)) {
		t.Errorf("%d earlier marks, label %q", len(r.earlier), r.values[0].Text)
	}
}

// breedChoices opens the breed field's suggestions and returns them.
func breedChoices(t *testing.T, u *UI, w fyne.Window) []string {
	t.Helper()
	for w.Canvas().Overlays().Top() != nil {
		w.Canvas().Overlays().Remove(w.Canvas().Overlays().Top())
	}
	test.Tap(u.bar.breedPick.ActionItem.(fyne.Tappable))
	var out []string
	if top := w.Canvas().Overlays().Top(); top != nil {
		walkObjects(top, func(o fyne.CanvasObject) {
			if tx, ok := o.(*canvas.Text); ok && tx.Text != "" {
				out = append(out, tx.Text)
			}
		})
	}
	return out
}

// TestBreedsFollowSpecies: the breed suggestions are the species' own; a
// cat is not offered dog breeds.
func TestBreedsFollowSpecies(t *testing.T) {
	u, w, _ := newTestUI(t, false)
	for _, tc := range []struct {
		species string
		boxer   bool
	}{{"dog", true}, {"cat", false}, {"dog", true}} {
		u.bar.species.SetSelected(tc.species)
		got := breedChoices(t, u, w)
		if slices.Contains(got, "Boxer") != tc.boxer || len(got) != len(app.StudiedBreeds(app.ParseSpecies(tc.species))) {
			t.Errorf("%s offered %v", tc.species, got)
		}
	}
}

// TestBloodworkAgeFromBirthDate: Age (months) is filled from the
// patient's birth date and follows the patient; an age typed by hand is
// kept.
func TestBloodworkAgeFromBirthDate(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	age := u.blood.entries[app.BloodworkAge]
	born := time.Now().AddDate(-2, -3, -1).Format("2006-01-02")
	u.SetPatientID("Tom-1")
	u.bar.species.SetSelected("cat")
	u.bar.birth.SetText(born)
	if age.Text != "27" {
		t.Fatalf("born %s: age %q, want 27", born, age.Text)
	}
	if err := u.SavePatient(); err != nil {
		t.Fatal(err)
	}
	u.SetPatientID("Other-2") // no birth date
	if age.Text != "" {
		t.Fatalf("a patient without a birth date kept the age %q", age.Text)
	}
	u.SetPatientID("Tom-1")
	if age.Text != "27" {
		t.Fatalf("back to Tom-1: age %q", age.Text)
	}
	age.SetText("30") // typed by hand
	u.bar.birth.SetText(time.Now().AddDate(-1, 0, -1).Format("2006-01-02"))
	if age.Text != "30" {
		t.Fatalf("a typed age was replaced: %q", age.Text)
	}
}

// TestFindPatientByOwner: the Patients search finds a patient by the
// owner's name.
func TestFindPatientByOwner(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	u.SetPatientID("Rex-1")
	u.bar.name.SetText("Rex")
	u.bar.owner.SetText("Jane Smith")
	if err := u.SavePatient(); err != nil {
		t.Fatal(err)
	}
	u.patients.query.SetText("smith")
	got := texts(u.patients.matches)
	if len(got) != 1 || !strings.HasPrefix(got[0], "Rex-1  Rex") {
		t.Fatalf("found %q", got)
	}
}

// TestPrintButtonSpeaksToTheClinic: on a computer without a printing
// system the Print button says so in the clinic's words, not the
// package to install.
func TestPrintButtonSpeaksToTheClinic(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "lp")
	u, w, _ := newTestUIWith(t, false, nil, Options{Printer: printing.LP{LPPath: missing, LPStatPath: missing}})
	u.SetPatientID("Rex-1")
	showPhantomResult(t, u)
	if min := w.Content().MinSize().Width; min > 1024 {
		t.Errorf("the window needs %.0f px across: the reason Print is off widens it", min)
	}
	got := u.review.printWhy.Text
	if !u.review.print.Disabled() || !u.review.printWhy.Visible() || !strings.Contains(got, "printing is not set up on this computer") || strings.Contains(got, "CUPS") || strings.Contains(got, "cups-client") {
		t.Fatalf("print button %q", got)
	}
}

// TestFirstStartAndCaution: a first start says what to do first until a
// patient is chosen; the synthetic-data caution stands where results
// appear, on Review and under a bloodwork result, not before.
func TestFirstStartAndCaution(t *testing.T) {
	u, _, _ := newTestUI(t, false)
	if !u.start.Visible() || !strings.Contains(u.start.Text, "patient") || !strings.Contains(u.start.Text, "radiograph or DICOM") || !strings.Contains(u.start.Text, "Capture") {
		t.Fatalf("first start: shown %v, %q", u.start.Visible(), u.start.Text)
	}
	if u.review.caution.Visible() || u.blood.caution.Visible() {
		t.Fatal("caution shown with no result")
	}
	u.SetPatientID("Rex-1")
	if u.start.Visible() {
		t.Fatal("the first-start note stays with a patient chosen")
	}
	showPhantomResult(t, u)
	if !u.review.caution.Visible() || !strings.Contains(u.review.caution.Text, "synthetic data") {
		t.Fatalf("Review caution: shown %v, %q", u.review.caution.Visible(), u.review.caution.Text)
	}
	u.blood.show(&usg.Result{ProbabilityImpaired: 0.2, RiskLabel: "low", ConformalSet: []string{"adequate"}})
	if !u.blood.caution.Visible() || !strings.Contains(u.blood.caution.Text, "synthetic data") {
		t.Fatal("no caution under the bloodwork result")
	}
	u.blood.fail("Check the values")
	if u.blood.caution.Visible() {
		t.Fatal("caution left without a result")
	}
}

// TestBloodworkShowsTheCorrectedValue: after an automatic unit
// correction the field shows the value used, the correction line sits
// between the button and the result without covering it, Screen again
// screens nothing, and Undo puts the typed value back (then refused).
func TestBloodworkShowsTheCorrectedValue(t *testing.T) {
	u, w, done := newTestUI(t, true)
	w.Resize(fyne.NewSize(1024, 700))
	u.SelectTab("Bloodwork")
	b := u.blood
	u.SubmitBloodwork([usg.NumFeatures]string{"30", "160", "12", "2000", "120"})
	wait(t, done)
	if got := b.entries[1].Text; got != "1.81" {
		t.Fatalf("creatinine field %q after the correction, want the 1.81 used", got)
	}
	if len(b.corrections.Objects) != 1 || !strings.HasPrefix(b.result.Text, "Urine concentrating ability") {
		t.Fatalf("%d corrections, result %q, error %q", len(b.corrections.Objects), b.result.Text, b.errLabel.Text)
	}
	abs := func(o fyne.CanvasObject) float32 {
		return fyne.CurrentApp().Driver().AbsolutePositionForObject(o).Y
	}
	row := b.corrections.Objects[0]
	if bottom := abs(row) + row.Size().Height; bottom > abs(b.result)+0.5 {
		t.Errorf("the correction line (bottom %.0f) covers the result (top %.0f)", bottom, abs(b.result))
	}
	test.Tap(b.predict)
	if !strings.Contains(b.errLabel.Text, "just screened") {
		t.Fatalf("Screen again: %q", b.errLabel.Text)
	}
	var undo *widget.Button
	for _, o := range row.(*fyne.Container).Objects {
		if btn, ok := o.(*widget.Button); ok && btn.Text == "Undo" {
			undo = btn
		}
	}
	if undo == nil {
		t.Fatal("no Undo on the correction line")
	}
	test.Tap(undo)
	if b.entries[1].Text != "160" || !strings.Contains(b.errLabel.Text, "creatinine 160 mg/dL is above the plausible range") {
		t.Fatalf("undo: field %q, %q", b.entries[1].Text, b.errLabel.Text)
	}
}

// TestReviewActionsStayInView: at 1024x700, with long notes on Review,
// Save, Export and Print are inside the window without scrolling, and do
// not move when the status line grows.
func TestReviewActionsStayInView(t *testing.T) {
	u, w, _ := newTestUI(t, false)
	w.Resize(fyne.NewSize(1024, 700))
	u.SetPatientID("Rex-1")
	u.SelectTab("Review")
	showPhantomResult(t, u)
	r := u.review
	d := fyne.CurrentApp().Driver()
	var before []fyne.Position
	for _, b := range []*widget.Button{r.save, r.export, r.print} {
		p := d.AbsolutePositionForObject(b)
		if !b.Visible() || p.Y < 0 || p.Y+b.Size().Height > w.Canvas().Size().Height+0.5 || b.Size().Height == 0 {
			t.Fatalf("%q at %v size %v: outside the 1024x700 window", b.Text, p, b.Size())
		}
		before = append(before, p)
	}
	r.status.SetText(strings.Repeat("A long status line that wraps over several lines of the panel. ", 8))
	r.side.Refresh()
	for i, b := range []*widget.Button{r.save, r.export, r.print} {
		if p := d.AbsolutePositionForObject(b); p != before[i] {
			t.Errorf("%q moved from %v to %v with the status line", b.Text, before[i], p)
		}
	}
}
