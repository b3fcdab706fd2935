// Package report writes the one-page cardiac report a clinic hands over,
// exported from the desktop: the clinic's letterhead (name, address,
// logo), the patient and owner, the findings in plain words with the
// reference ranges used and their sources, how the values were obtained,
// the model's confidence for model values, the annotated radiograph with
// numbered landmarks and their legend, a signature line and the
// decision-support notice, as an A4 PDF.
//
// The PDF is written with github.com/signintech/gopdf. Text is set in
// DejaVu Sans, embedded (fonts/, subset into each file), so any patient ID
// the app accepts prints as typed; characters DejaVu Sans lacks (Chinese,
// Japanese, Korean) are set in Droid Sans Fallback. fonts/README.md gives
// the fonts' sources and licences.
package report

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"strings"
	"time"

	"github.com/signintech/gopdf"
)

// Report is the content of one report.
type Report struct {
	// Clinic is the practice handing the report over (Settings); empty
	// fields are left out.
	Clinic Clinic
	// PatientID may be empty (shown as "not given").
	PatientID string
	// Animal holds the animal's and owner's details as labelled lines
	// ("Name", "Rex"), in order; empty values are left out.
	Animal []Field
	// Date is when the measurement was made.
	Date time.Time
	// Image is the annotated radiograph (landmarks, axes, ruler, values).
	Image image.Image
	// Legend names the numbered landmarks on the image, in order.
	Legend []LegendItem
	// VHS and VLAS are the values in effect; nil where not measured.
	VHS, VLAS *float64
	// Findings are the results as a clinician states them ("Heart size:
	// enlarged (VHS 11.2; breed range 10.0-13.2)"), printed in bold.
	Findings []string
	// Kind states how the values were obtained ("Model measurement",
	// "Model landmarks corrected by clinician", "Placed by hand by
	// clinician"); empty: not stated.
	Kind string
	// Clinician is set when the values are the clinician's (landmarks
	// corrected or placed by hand); ModelVHS and ModelVLAS then hold the
	// model's values, nil where it had none.
	Clinician           bool
	ModelVHS, ModelVLAS *float64
	// Confidence is the model confidence (optimal, good, review), for
	// model values only; empty leaves the line out.
	Confidence string
	// Result is the model's result in words.
	Result string
	// Span is the vertebral span check of the landmarks in effect in
	// words (app.SpanCheck.ReportLine); empty leaves the line out.
	Span string
	// Reading is the plain-words reading.
	Reading string
	// ModelVersion is the cardiac model version.
	ModelVersion string
	// VHSRange and VLASRange name the reference ranges used, with their
	// source ("breed range 10.0-13.2 (Boxer; Lamb et al. 2001, ...)").
	VHSRange, VLASRange string
}

// Clinic is the practice's letterhead.
type Clinic struct {
	Name string
	// Address is one or more lines.
	Address string
	// Logo is printed beside the name (scaled to fit); nil: none.
	Logo image.Image
}

// Field is one labelled detail.
type Field struct {
	Label, Value string
}

// LegendItem is one numbered landmark: its number on the image, plain
// name and colour.
type LegendItem struct {
	Number int
	Name   string
	Color  color.RGBA
}

// A4 portrait in points.
const (
	pageW, pageH = 595.0, 842.0
	margin       = 40.0
)

// JPEGQuality is the quality the image is embedded at.
const JPEGQuality = 90

// embedJPEG encodes img for the PDF.
func embedJPEG(img image.Image) (gopdf.ImageHolder, error) {
	// JPEG keeps the file small; gopdf labels a one-channel JPEG (a grey
	// image) DeviceGray and a three-channel one DeviceRGB.
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: JPEGQuality}); err != nil {
		return nil, fmt.Errorf("report: encode image: %w", err)
	}
	h, err := gopdf.ImageHolderByBytes(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("report: image: %w", err)
	}
	return h, nil
}

// logoBox is the largest size of the clinic's logo, in points.
const logoBox = 56.0

// WritePDF writes r as a one-page A4 PDF: the clinic's letterhead, the
// animal and owner, the findings in plain words with the reference
// ranges used and their sources, how the values were obtained, the
// annotated radiograph with a legend of its numbered landmarks, a
// signature line and the decision-support notice.
func WritePDF(w io.Writer, r Report) error {
	if r.Image == nil || r.Image.Bounds().Empty() {
		return fmt.Errorf("report: no image")
	}
	holder, err := embedJPEG(r.Image)
	if err != nil {
		return err
	}

	pdf := &gopdf.GoPdf{}
	pdf.Start(gopdf.Config{PageSize: *gopdf.PageSizeA4, Unit: gopdf.UnitPT})
	pdf.SetInfo(gopdf.PdfInfo{Title: "VHS report " + r.PatientID, Producer: "VetLens", Creator: "VetLens", CreationDate: r.Date})
	pdf.AddPage()
	p := &page{pdf: pdf, added: map[*face]bool{}}
	textW := pageW - 2*margin

	// Letterhead: logo, clinic name and address.
	y := margin
	textX := margin
	if r.Clinic.Logo != nil && !r.Clinic.Logo.Bounds().Empty() {
		lh, err := embedJPEG(flatten(r.Clinic.Logo))
		if err != nil {
			return fmt.Errorf("report: logo: %w", err)
		}
		lb := r.Clinic.Logo.Bounds()
		sc := min(logoBox/float64(lb.Dx()), logoBox/float64(lb.Dy()))
		if err := pdf.ImageByHolder(lh, margin, y, &gopdf.Rect{W: float64(lb.Dx()) * sc, H: float64(lb.Dy()) * sc}); err != nil {
			return fmt.Errorf("report: place logo: %w", err)
		}
		textX = margin + logoBox + 10
	}
	headW := pageW - margin - textX
	hy := y
	if name := strings.TrimSpace(r.Clinic.Name); name != "" {
		for _, l := range p.wrap(bold, 14, headW, name) {
			hy += 15
			p.text(bold, 14, textX, hy, l)
		}
	}
	for _, al := range strings.Split(r.Clinic.Address, "\n") {
		for _, l := range p.wrap(regular, 9, headW, al) {
			hy += 11
			p.text(regular, 9, textX, hy, l)
		}
	}
	if r.Clinic.Logo != nil {
		hy = max(hy, y+logoBox)
	}
	y = hy + 22
	p.text(bold, 16, margin, y, "Cardiac radiograph report: vertebral heart score")
	y += 4
	patient := strings.TrimSpace(r.PatientID)
	if patient == "" {
		patient = "not given"
	}
	for _, line := range p.wrap(regular, 10, textW, fmt.Sprintf("Patient ID: %s    Date: %s    Model: %s", patient, r.Date.Local().Format("2006-01-02 15:04"), r.ModelVersion)) {
		y += 14
		p.text(regular, 10, margin, y, line)
	}
	// The animal and owner, two columns.
	if len(r.Animal) > 0 {
		y += 4
		colW := textW / 2
		for i := 0; i < len(r.Animal); i += 2 {
			y += 13
			for j := 0; j < 2 && i+j < len(r.Animal); j++ {
				f := r.Animal[i+j]
				x := margin + float64(j)*colW
				lw := p.width(bold, 10, f.Label+": ")
				p.text(bold, 10, x, y, f.Label+": ")
				v := f.Value
				for p.width(regular, 10, v) > colW-lw-8 && len([]rune(v)) > 1 {
					v = string([]rune(v)[:len([]rune(v))-2]) + "…"
				}
				p.text(regular, 10, x+lw, y, v)
			}
		}
	}
	y += 10
	findings := r.Findings
	if len(findings) == 0 {
		findings = []string{fmt.Sprintf("VHS %s", value(r.VHS)), fmt.Sprintf("VLAS %s", value(r.VLAS))}
	}
	for _, f := range findings {
		for _, l := range p.wrap(bold, 12, textW, f) {
			y += 16
			p.text(bold, 12, margin, y, l)
		}
	}
	for _, line := range p.wrap(regular, 10, textW, r.Reading) {
		y += 14
		p.text(regular, 10, margin, y, line)
	}
	var ranges []string
	if r.VHSRange != "" {
		ranges = append(ranges, "VHS reference: "+r.VHSRange+".")
	}
	if r.VLASRange != "" {
		ranges = append(ranges, "VLAS reference: "+r.VLASRange+".")
	}
	for _, rl := range ranges {
		for _, l := range p.wrap(regular, 9, textW, rl) {
			y += 12
			p.text(regular, 9, margin, y, l)
		}
	}
	if r.Kind != "" || r.Clinician {
		line := "Measurement: " + orDash(r.Kind) + "."
		if r.Clinician {
			if r.ModelVHS == nil && r.ModelVLAS == nil {
				line += " The model gave no values for this image."
			} else {
				line += fmt.Sprintf(" The model measured VHS %s, VLAS %s.", value(r.ModelVHS), value(r.ModelVLAS))
			}
		}
		for _, l := range p.wrap(bold, 10, textW, line) {
			y += 14
			p.text(bold, 10, margin, y, l)
		}
	}
	var detail []string
	if r.Confidence != "" {
		detail = append(detail, "Model confidence: "+r.Confidence)
	}
	if r.Result != "" {
		detail = append(detail, r.Result)
	}
	if r.Span != "" {
		detail = append(detail, strings.TrimSuffix(r.Span, "."))
	}
	if len(detail) > 0 {
		for _, l := range p.wrap(regular, 10, textW, strings.Join(detail, ".    ")) {
			y += 14
			p.text(regular, 10, margin, y, l)
		}
	}
	y += 10

	footer := []string{
		"Decision support only: confirm the measurement on the original radiograph before acting on it.",
		"The models were trained on synthetic phantom radiographs (see the model card); they have not been validated on patients.",
	}
	const signatureH, legendRowH = 40.0, 13.0
	legendRows := (len(r.Legend) + 3) / 4
	imageBottom := pageH - margin - float64(len(footer))*12 - 8 - signatureH - float64(legendRows)*legendRowH - 6
	b := r.Image.Bounds()
	maxW, maxH := textW, imageBottom-y
	if maxH < 50 {
		return fmt.Errorf("report: the text leaves no room for the image")
	}
	scale := min(maxW/float64(b.Dx()), maxH/float64(b.Dy()))
	iw, ih := float64(b.Dx())*scale, float64(b.Dy())*scale
	x0 := margin + (maxW-iw)/2
	if err := pdf.ImageByHolder(holder, x0, y, &gopdf.Rect{W: iw, H: ih}); err != nil {
		return fmt.Errorf("report: place image: %w", err)
	}
	y += ih + 4
	// Legend: a coloured disc with the landmark's number, and its name.
	colW := textW / 4
	for i, it := range r.Legend {
		if i%4 == 0 {
			y += legendRowH
		}
		x := margin + float64(i%4)*colW
		pdf.SetFillColor(it.Color.R, it.Color.G, it.Color.B)
		pdf.SetStrokeColor(0, 0, 0)
		pdf.SetLineWidth(0.5)
		if err := pdf.Rectangle(x, y-8, x+9, y+1, "FD", 4.5, 8); err != nil {
			return fmt.Errorf("report: legend: %w", err)
		}
		pdf.SetFillColor(0, 0, 0)
		name := fmt.Sprintf("%d %s", it.Number, it.Name)
		for p.width(regular, 8, name) > colW-16 && len([]rune(name)) > 1 {
			name = string([]rune(name)[:len([]rune(name))-2]) + "…"
		}
		p.text(regular, 8, x+12, y, name)
	}
	// Signature line.
	sy := pageH - margin - float64(len(footer))*12 - 14
	pdf.SetStrokeColor(0, 0, 0)
	pdf.SetLineWidth(0.6)
	p.text(regular, 10, margin, sy, "Veterinarian:")
	pdf.Line(margin+70, sy+2, margin+250, sy+2)
	p.text(regular, 10, margin+265, sy, "Signature:")
	pdf.Line(margin+318, sy+2, margin+440, sy+2)
	p.text(regular, 10, margin+450, sy, "Date:")
	pdf.Line(margin+478, sy+2, pageW-margin, sy+2)
	fy := pageH - margin - float64(len(footer)-1)*12
	for _, f := range footer {
		p.text(regular, 8, margin, fy, f)
		fy += 12
	}
	if p.err != nil {
		return p.err
	}
	if err := pdf.Write(w); err != nil {
		return fmt.Errorf("report: write: %w", err)
	}
	return nil
}

// flatten draws img on white (a logo with transparency prints on paper).
func flatten(img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Over)
	return out
}

func value(v *float64) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf("%.2f", *v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
