package dicom

import (
	"bytes"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dcmtk skips a test without dcmtk's tools (make deps installs them).
func dcmtk(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (dcmtk; make deps)", tool)
		}
	}
}

// TestEncapsulatedPDF: the file dcmtk reads carries the source study's
// identity, the new series and instance and the PDF, which dcm2pdf gives
// back byte for byte (odd and even lengths).
func TestEncapsulatedPDF(t *testing.T) {
	dcmtk(t, "dcmdump", "dcm2pdf")
	for _, pdf := range [][]byte{[]byte("%PDF-1.4\n% odd\n%%EOF\n"), []byte("%PDF-1.4\n% even\n%%EOF\n\n")} {
		r := PDFReport{StudyInstanceUID: "1.2.3.4.5", PatientID: "DICOM-0042", PatientName: "Smith^Rex", AccessionNumber: "ACC7",
			StudyDate: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), SeriesInstanceUID: "2.25.11", SOPInstanceUID: "2.25.12",
			Content: time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC), Title: "VHS report", PDF: pdf}
		b, err := EncapsulatedPDF(r)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "r.dcm")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("dcmdump", "+P", "0020,000d", "+P", "0020,000e", "+P", "0008,0018", "+P", "0008,0016", "+P", "0010,0020", "+P", "0010,0010",
			"+P", "0042,0012", "+P", "0008,0060", path).CombinedOutput()
		if err != nil {
			t.Fatalf("dcmdump: %v\n%s", err, out)
		}
		for _, want := range []string{"[1.2.3.4.5]", "[2.25.11]", "[2.25.12]", "=EncapsulatedPDFStorage", "[DICOM-0042]", "[Smith^Rex]", "[application/pdf]", "[DOC]"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("dcmdump lacks %s:\n%s", want, out)
			}
		}
		back := filepath.Join(dir, "back.pdf")
		if out, err := exec.Command("dcm2pdf", path, back).CombinedOutput(); err != nil {
			t.Fatalf("dcm2pdf: %v\n%s", err, out)
		}
		got, err := os.ReadFile(back)
		if err != nil || !bytes.Equal(got, pdf) {
			t.Errorf("dcm2pdf gave %q (%v), want %q", got, err, pdf)
		}
	}
	if _, err := EncapsulatedPDF(PDFReport{PDF: []byte("%PDF-1.4")}); err == nil {
		t.Error("a report without UIDs was written")
	}
}

// TestSecondaryCapture: dcmtk reads the annotated image back from the
// Secondary Capture with its study and size, pixel for pixel (dcm2pnm).
func TestSecondaryCapture(t *testing.T) {
	dcmtk(t, "dcmdump", "dcm2pnm")
	img := image.NewRGBA(image.Rect(0, 0, 7, 5)) // odd: the pixel data is padded
	for y := range 5 {
		for x := range 7 {
			img.Set(x, y, color.RGBA{uint8(30 * x), uint8(50 * y), 200, 255})
		}
	}
	b, err := SecondaryCapture(CapturedImage{StudyInstanceUID: "1.2.3.4.5", PatientID: "DICOM-0042", PatientName: "Smith^Rex",
		SeriesInstanceUID: "2.25.31", SOPInstanceUID: "2.25.32", Content: time.Now(), Image: img})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sc.dcm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("dcmdump", "+P", "0008,0016", "+P", "0020,000d", "+P", "0028,0010", "+P", "0028,0011", path).CombinedOutput()
	if err != nil {
		t.Fatalf("dcmdump: %v\n%s", err, out)
	}
	for _, want := range []string{"=SecondaryCaptureImageStorage", "[1.2.3.4.5]", "US 5", "US 7"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dcmdump lacks %s:\n%s", want, out)
		}
	}
	ppm := filepath.Join(dir, "sc.ppm")
	if out, err := exec.Command("dcm2pnm", path, ppm).CombinedOutput(); err != nil {
		t.Fatalf("dcm2pnm: %v\n%s", err, out)
	}
	got, err := os.ReadFile(ppm)
	if err != nil {
		t.Fatal(err)
	}
	// P6 header "P6\n7 5\n255\n" then RGB.
	i := bytes.LastIndex(got, []byte("255\n"))
	px := got[i+4:]
	if len(px) != 7*5*3 {
		t.Fatalf("%d bytes of pixels from %q", len(px), got[:i+4])
	}
	for y := range 5 {
		for x := range 7 {
			o := (y*7 + x) * 3
			if px[o] != uint8(30*x) || px[o+1] != uint8(50*y) || px[o+2] != 200 {
				t.Fatalf("pixel %d,%d: %v", x, y, px[o:o+3])
			}
		}
	}
}
