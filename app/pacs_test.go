package app

import (
	"bytes"
	"context"
	"errors"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"vetlens/app/repo"
	"vetlens/app/report"
	"vetlens/engine/cardiac"
)

// TestReportToPACS: the report of a DICOM study is written into the
// outbox as an Encapsulated PDF and its annotated image as a Secondary
// Capture, each with the study's UID, Patient ID and name and new series
// and instance UIDs, and dcm2pdf gives the report back; a study that is
// not DICOM is refused.
func TestReportToPACS(t *testing.T) {
	res, _ := landmarkResult()
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1",
		DICOM: &DICOMImage{Tags: DICOMTags{PatientID: "DICOM-0042", PatientNameDICOM: "Smith^Rex", StudyInstanceUID: "1.2.826.0.1.3680043.2.1125.1", AccessionNumber: "A7"}}}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	rep, err := DesktopReport(SaveRequest{PatientID: "DICOM-0042", Measurement: m}, now, ReportDetails{Patient: repo.Patient{ID: "DICOM-0042"}})
	if err != nil {
		t.Fatal(err)
	}
	outbox := filepath.Join(t.TempDir(), "outbox")
	paths, err := ReportToPACS(m, rep, outbox, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("written %v, want the report and its image", paths)
	}
	if _, err := exec.LookPath("dcmdump"); err != nil {
		t.Skip("dcmdump not installed (dcmtk; make deps)")
	}
	classes := map[string]string{}
	for _, path := range paths {
		if filepath.Dir(path) != outbox || !strings.HasPrefix(filepath.Base(path), "2.25.") {
			t.Fatalf("written to %s", path)
		}
		out, err := exec.Command("dcmdump", "+P", "0008,0016", "+P", "0020,000d", "+P", "0020,000e", "+P", "0008,0018", "+P", "0010,0020", "+P", "0010,0010", "+P", "0008,0050", path).CombinedOutput()
		if err != nil {
			t.Fatalf("dcmdump: %v\n%s", err, out)
		}
		for _, want := range []string{"[1.2.826.0.1.3680043.2.1125.1]", "[DICOM-0042]", "[Smith^Rex]", "[A7]", "[" + strings.TrimSuffix(filepath.Base(path), ".dcm") + "]"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("dcmdump lacks %s:\n%s", want, out)
			}
		}
		if strings.Count(string(out), "[2.25.") != 2 {
			t.Errorf("want new series and instance UIDs:\n%s", out)
		}
		for _, c := range []string{"EncapsulatedPDFStorage", "SecondaryCaptureImageStorage"} {
			if strings.Contains(string(out), "="+c) {
				classes[c] = path
			}
		}
	}
	if len(classes) != 2 {
		t.Fatalf("SOP classes %v", classes)
	}
	back := filepath.Join(t.TempDir(), "back.pdf")
	if out, err := exec.Command("dcm2pdf", classes["EncapsulatedPDFStorage"], back).CombinedOutput(); err != nil {
		t.Fatalf("dcm2pdf: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(back); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("dcm2pdf gave %d bytes: %v", len(b), err)
	}
	m.DICOM = nil
	if _, err := ReportToPACS(m, rep, outbox, now); KindOf(err) != KindInvalid {
		t.Fatalf("a JPEG study went to the PACS: %v", err)
	}
}

// fakeSender fails from the failAt-th file (0: never).
type fakeSender struct {
	failAt int
	n      int
}

func (f *fakeSender) Send(ctx context.Context, node PACSNode, path string) error {
	f.n++
	if f.failAt > 0 && f.n >= f.failAt {
		return errors.New("association refused")
	}
	return nil
}

// TestSendOutbox: files go in name order and move to sent/; the first
// refusal stops, and it and the rest stay for a retry.
func TestSendOutbox(t *testing.T) {
	node := PACSNode{AETitle: "PACS", Host: "10.0.0.5", Port: 104}
	for _, tc := range []struct {
		name          string
		failAt, sent  int
		left          int
		wantErrSubstr string
	}{{"all sent", 0, 3, 0, ""}, {"second refused", 2, 1, 2, "b.dcm not sent"}} {
		t.Run(tc.name, func(t *testing.T) {
			outbox := t.TempDir()
			for _, n := range []string{"c.dcm", "a.dcm", "b.dcm", "notes.txt"} {
				if err := os.WriteFile(filepath.Join(outbox, n), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sent, err := SendOutbox(context.Background(), &fakeSender{failAt: tc.failAt}, node, outbox)
			if len(sent) != tc.sent || (err == nil) != (tc.wantErrSubstr == "") || err != nil && (!strings.Contains(err.Error(), tc.wantErrSubstr) || !strings.Contains(err.Error(), "PACS@10.0.0.5:104")) {
				t.Fatalf("sent %v, %v", sent, err)
			}
			left, _ := filepath.Glob(filepath.Join(outbox, "*.dcm"))
			if len(left) != tc.left {
				t.Fatalf("left in the outbox: %v", left)
			}
		})
	}
	if _, err := SendOutbox(context.Background(), &fakeSender{}, PACSNode{Host: "x", Port: 104}, t.TempDir()); KindOf(err) != KindInvalid {
		t.Fatalf("a node without an AE title: %v", err)
	}
}

// TestReportsToPACS: the batch writes the report of each measurement in
// effect made on a DICOM study (a reopened and corrected one once, as
// corrected), and counts the others as having no study.
func TestReportsToPACS(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	res, l := landmarkResult()
	study := &DICOMImage{Tags: DICOMTags{PatientID: "Rex", PatientNameDICOM: "Smith^Rex", StudyInstanceUID: "1.2.3.9"}}
	m := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 400, 300)), ModelVersion: "fake-1", DICOM: study}
	saved, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: m})
	if err != nil {
		t.Fatal(err)
	}
	re, err := s.Patients.ReopenMeasurement(ctx, "Rex", DesktopCustomer, saved.Entry.Seq)
	if err != nil || re.DICOM == nil || re.DICOM.Tags.StudyInstanceUID != "1.2.3.9" {
		t.Fatalf("reopened %+v, %v", re, err)
	}
	moved := l
	moved[cardiac.HeartBottom].Y += 20
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: re, Landmarks: &moved}); err != nil {
		t.Fatal(err)
	}
	jpeg := &Measurement{Result: res, Image: image.NewGray(image.Rect(0, 0, 401, 300)), ModelVersion: "fake-1"}
	if _, err := s.Patients.SaveMeasurement(ctx, SaveRequest{PatientID: "Rex", Measurement: jpeg}); err != nil {
		t.Fatal(err)
	}
	outbox := t.TempDir()
	b, err := s.Patients.ReportsToPACS(ctx, "Rex", outbox, report.Clinic{Name: "Test clinic"})
	if err != nil || len(b.Written) != 2 || b.NoStudy != 1 { // the report and its image
		t.Fatalf("batch %+v, %v", b, err)
	}
}
