// Package report writes the one-page cardiac report a clinician exports
// from the desktop: the annotated radiograph, VHS and VLAS with their
// normal ranges, the plain-words reading, confidence, date, patient and
// model version, as a PDF 1.4 file. The writer is small and
// self-contained (standard fonts, one JPEG image), so it needs no PDF
// library.
package report

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"strings"
	"time"
)

// Report is the content of one report.
type Report struct {
	// PatientID may be empty (shown as "not given").
	PatientID string
	// Date is when the measurement was made.
	Date time.Time
	// Image is the annotated radiograph (landmarks, axes, ruler, values).
	Image image.Image
	// VHS and VLAS are the values in effect; nil where not measured.
	VHS, VLAS *float64
	// Kind states how the values were obtained ("Model measurement",
	// "Model landmarks corrected by clinician", "Placed by hand by
	// clinician"); empty: not stated.
	Kind string
	// Clinician is set when the values are the clinician's (landmarks
	// corrected or placed by hand); ModelVHS and ModelVLAS then hold the
	// model's values, nil where it had none.
	Clinician           bool
	ModelVHS, ModelVLAS *float64
	// Confidence is the model confidence (optimal, good, review).
	Confidence string
	// Result is the result code and its description.
	Result string
	// Reading is the plain-words reading.
	Reading string
	// ModelVersion is the cardiac model version.
	ModelVersion string
	// VHSRange and VLASRange describe the normal ranges ("8.5-10.5", "< 2.5").
	VHSRange, VLASRange string
}

// A4 portrait in points.
const (
	pageW, pageH = 595.0, 842.0
	margin       = 40.0
)

// WritePDF writes r as a one-page A4 PDF.
func WritePDF(w io.Writer, r Report) error {
	if r.Image == nil || r.Image.Bounds().Empty() {
		return fmt.Errorf("report: no image")
	}
	var img bytes.Buffer
	if err := jpeg.Encode(&img, r.Image, &jpeg.Options{Quality: 90}); err != nil {
		return fmt.Errorf("report: encode image: %w", err)
	}
	content := pageContent(r)

	pw := &pdfWriter{w: bufio.NewWriter(w)}
	pw.raw("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	pw.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
	pw.object(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	pw.object(3, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] "+
		"/Resources << /Font << /F1 4 0 R /F2 5 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 7 0 R >>", pageW, pageH))
	pw.object(4, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	pw.object(5, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
	b := r.Image.Bounds()
	pw.stream(6, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "+
		"/BitsPerComponent 8 /Filter /DCTDecode", b.Dx(), b.Dy()), img.Bytes())
	pw.stream(7, "", []byte(content))
	pw.object(8, fmt.Sprintf("<< /Title %s /Producer (VetLens) /CreationDate (D:%s) >>",
		pdfString("VHS report "+r.PatientID), r.Date.UTC().Format("20060102150405Z")))
	pw.trailer(8)
	if pw.err != nil {
		return fmt.Errorf("report: write: %w", pw.err)
	}
	if err := pw.w.Flush(); err != nil {
		return fmt.Errorf("report: write: %w", err)
	}
	return nil
}

// pageContent lays out the page: heading, facts, values, reading, the
// image scaled into the remaining space, and the footer.
func pageContent(r Report) string {
	var c strings.Builder
	y := pageH - margin - 16
	text := func(font string, size float64, x float64, s string) {
		fmt.Fprintf(&c, "BT /%s %g Tf %g %g Td %s Tj ET\n", font, size, x, y, pdfString(s))
	}
	text("F2", 18, margin, "VetLens cardiac report: vertebral heart score")
	y -= 24
	patient := r.PatientID
	if patient == "" {
		patient = "not given"
	}
	text("F1", 10, margin, fmt.Sprintf("Patient ID: %s    Date: %s    Model: %s", patient, r.Date.Local().Format("2006-01-02 15:04"), r.ModelVersion))
	y -= 26
	text("F2", 13, margin, fmt.Sprintf("VHS %s  (normal %s)", value(r.VHS), r.VHSRange))
	text("F2", 13, margin+270, fmt.Sprintf("VLAS %s  (normal %s)", value(r.VLAS), r.VLASRange))
	y -= 17
	text("F1", 10, margin, fmt.Sprintf("Confidence: %s    %s", orDash(r.Confidence), r.Result))
	if r.Kind != "" || r.Clinician {
		line := "Measurement: " + orDash(r.Kind) + "."
		if r.Clinician {
			if r.ModelVHS == nil && r.ModelVLAS == nil {
				line += " The model gave no values for this image."
			} else {
				line += fmt.Sprintf(" The model measured VHS %s, VLAS %s.", value(r.ModelVHS), value(r.ModelVLAS))
			}
		}
		y -= 14
		text("F2", 10, margin, line)
	}
	for _, line := range wrap(r.Reading, 100) {
		y -= 14
		text("F1", 10, margin, line)
	}
	y -= 12

	footer := []string{
		"Decision support only: confirm the measurement on the original radiograph before acting on it.",
		"The models were trained on synthetic phantom radiographs (see the model card); they have not been validated on patients.",
	}
	bottom := margin + float64(len(footer))*12 + 8
	b := r.Image.Bounds()
	maxW, maxH := pageW-2*margin, y-bottom
	scale := min(maxW/float64(b.Dx()), maxH/float64(b.Dy()))
	iw, ih := float64(b.Dx())*scale, float64(b.Dy())*scale
	x0 := margin + (maxW-iw)/2
	fmt.Fprintf(&c, "q %.2f 0 0 %.2f %.2f %.2f cm /Im1 Do Q\n", iw, ih, x0, y-ih)
	y = margin + float64(len(footer)-1)*12
	for _, f := range footer {
		text("F1", 8, margin, f)
		y -= 12
	}
	return c.String()
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

// wrap breaks s into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > n {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// pdfString is s as a PDF literal string in WinAnsi (Latin-1 here):
// parentheses and backslashes escaped, characters outside Latin-1 as '?'.
func pdfString(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, r := range s {
		switch {
		case r == '(' || r == ')' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case r < 32:
			b.WriteByte(' ')
		case r < 128:
			b.WriteRune(r)
		case r < 256:
			fmt.Fprintf(&b, "\\%03o", r)
		default:
			b.WriteByte('?')
		}
	}
	b.WriteByte(')')
	return b.String()
}

// pdfWriter writes numbered objects and remembers their offsets for the
// cross-reference table.
type pdfWriter struct {
	w       *bufio.Writer
	n       int
	offsets map[int]int
	err     error
}

func (p *pdfWriter) raw(s string) { p.bytes([]byte(s)) }

func (p *pdfWriter) bytes(b []byte) {
	if p.err != nil {
		return
	}
	k, err := p.w.Write(b)
	p.n += k
	p.err = err
}

func (p *pdfWriter) begin(id int) {
	if p.offsets == nil {
		p.offsets = map[int]int{}
	}
	p.offsets[id] = p.n
	p.raw(fmt.Sprintf("%d 0 obj\n", id))
}

func (p *pdfWriter) object(id int, body string) {
	p.begin(id)
	p.raw(body + "\nendobj\n")
}

func (p *pdfWriter) stream(id int, dict string, data []byte) {
	p.begin(id)
	p.raw(fmt.Sprintf("<< %s /Length %d >>\nstream\n", dict, len(data)))
	p.bytes(data)
	p.raw("\nendstream\nendobj\n")
}

func (p *pdfWriter) trailer(info int) {
	xref := p.n
	size := len(p.offsets) + 1
	p.raw(fmt.Sprintf("xref\n0 %d\n0000000000 65535 f \n", size))
	for id := 1; id < size; id++ {
		p.raw(fmt.Sprintf("%010d 00000 n \n", p.offsets[id]))
	}
	p.raw(fmt.Sprintf("trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, info, xref))
}
