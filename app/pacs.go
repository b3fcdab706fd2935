package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"vetlens/app/repo"
	"vetlens/app/report"
	"vetlens/engine/dicom"
)

// PACSNode is the clinic's PACS as a DICOM node reports are sent to by
// C-STORE: its AE title, host and port, and the AE title VetLens calls
// from.
type PACSNode struct {
	AETitle, Host string
	Port          int
	// CallingAE is VetLens's own AE title ("" : VETLENS).
	CallingAE string
}

// String names the node as messages do: "PACS@10.0.0.5:104".
func (n PACSNode) String() string { return fmt.Sprintf("%s@%s:%d", n.AETitle, n.Host, n.Port) }

// Check refuses a node without an AE title (1 to 16 characters), a host
// or a port from 1 to 65535.
func (n PACSNode) Check() error {
	switch {
	case n.AETitle == "" || len(n.AETitle) > 16:
		return errf(KindInvalid, "PACS AE title %q: 1 to 16 characters", n.AETitle)
	case strings.TrimSpace(n.Host) == "":
		return errf(KindInvalid, "PACS host: required")
	case n.Port < 1 || n.Port > 65535:
		return errf(KindInvalid, "PACS port %d: from 1 to 65535", n.Port)
	}
	return nil
}

// PACSSender sends one DICOM file to a node by C-STORE
// (platform/pacs.StoreSCU: dcmtk's storescu).
type PACSSender interface {
	Send(ctx context.Context, node PACSNode, path string) error
}

// newUID is a new DICOM UID: "2.25." and a random UUID as a decimal.
func newUID() string {
	u := uuid.New()
	return "2.25." + new(big.Int).SetBytes(u[:]).String()
}

// ReportToPACS writes the report rep of the reviewed measurement m (a
// DICOM study) as a DICOM Encapsulated PDF, and its annotated radiograph
// (rep.Image) as a Secondary Capture, into the outbox folder (created),
// each named by its new SOP Instance UID, and returns the files' paths.
// Each carries the source study's Study Instance UID, Patient ID and
// name and Accession Number, and new Series and SOP Instance UIDs, so the
// PACS files it with the study. A measurement that is not of a DICOM
// study with a Study Instance UID has no study to return to
// (KindInvalid).
func ReportToPACS(m *Measurement, rep report.Report, outbox string, now time.Time) ([]string, error) {
	if m == nil || m.DICOM == nil || m.DICOM.Tags.StudyInstanceUID == "" {
		return nil, errf(KindInvalid, "the report goes back to the PACS only for a DICOM study (this image has no Study Instance UID)")
	}
	var pdf bytes.Buffer
	if err := report.WritePDF(&pdf, rep); err != nil {
		return nil, fmt.Errorf("report to PACS: %w", err)
	}
	t := m.DICOM.Tags
	r := dicom.PDFReport{StudyInstanceUID: t.StudyInstanceUID, PatientID: t.PatientID, PatientName: t.PatientNameDICOM,
		AccessionNumber: t.AccessionNumber, StudyDate: t.StudyDate, SeriesInstanceUID: newUID(), SOPInstanceUID: newUID(),
		Content: now, Title: "VetLens cardiac report (VHS, VLAS)", PDF: pdf.Bytes()}
	doc, err := dicom.EncapsulatedPDF(r)
	if err != nil {
		return nil, fmt.Errorf("report to PACS: %w", err)
	}
	files := map[string][]byte{r.SOPInstanceUID: doc}
	if rep.Image != nil {
		c := dicom.CapturedImage{StudyInstanceUID: r.StudyInstanceUID, PatientID: r.PatientID, PatientName: r.PatientName, AccessionNumber: r.AccessionNumber,
			StudyDate: r.StudyDate, SeriesInstanceUID: newUID(), SOPInstanceUID: newUID(), Content: now, Image: rep.Image}
		sc, err := dicom.SecondaryCapture(c)
		if err != nil {
			return nil, fmt.Errorf("report to PACS: %w", err)
		}
		files[c.SOPInstanceUID] = sc
	}
	if err := os.MkdirAll(outbox, 0o755); err != nil {
		return nil, fmt.Errorf("report to PACS: outbox: %w", err)
	}
	var paths []string
	for uid, b := range files {
		path := filepath.Join(outbox, uid+".dcm")
		tmp := path + ".part"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return paths, fmt.Errorf("report to PACS: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return paths, fmt.Errorf("report to PACS: %w", err)
		}
		paths = append(paths, path)
	}
	sort.Strings(paths)
	return paths, nil
}

// OutboxSent is the folder inside an outbox the sent files move to.
const OutboxSent = "sent"

// SendOutbox sends every DICOM file waiting in the outbox folder to node
// with sender, oldest name first, and moves each one sent into the
// outbox's OutboxSent folder. It stops at the first file that cannot be
// sent: that file and the rest stay in the outbox for a retry, and the
// error names the node and says so. It returns the files sent.
func SendOutbox(ctx context.Context, sender PACSSender, node PACSNode, outbox string) ([]string, error) {
	if err := node.Check(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(outbox)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("send to PACS: outbox: %w", err)
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".dcm") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	var sent []string
	for i, name := range files {
		path := filepath.Join(outbox, name)
		if err := sender.Send(ctx, node, path); err != nil {
			return sent, fmt.Errorf("send to PACS %s: %s not sent (%w); it and %d more stay in the outbox %s to be sent again",
				node, name, err, len(files)-i-1, outbox)
		}
		if err := os.MkdirAll(filepath.Join(outbox, OutboxSent), 0o755); err != nil {
			return sent, fmt.Errorf("send to PACS: %w", err)
		}
		if err := os.Rename(path, filepath.Join(outbox, OutboxSent, name)); err != nil {
			return sent, fmt.Errorf("send to PACS: %s was sent but not moved out of the outbox: %w", name, err)
		}
		sent = append(sent, path)
	}
	return sent, nil
}

// studyOf is the DICOM study of a measurement as the history keeps it
// (nil for an image that is not a DICOM study with a Study Instance UID).
func studyOf(m *Measurement) *repo.Study {
	if m == nil || m.DICOM == nil || m.DICOM.Tags.StudyInstanceUID == "" {
		return nil
	}
	t := m.DICOM.Tags
	st := &repo.Study{InstanceUID: t.StudyInstanceUID, PatientID: t.PatientID, PatientName: t.PatientNameDICOM, Accession: t.AccessionNumber}
	if !t.StudyDate.IsZero() {
		st.Date = t.StudyDate.Format("20060102")
	}
	return st
}

// PACSBatch is what ReportsToPACS did.
type PACSBatch struct {
	// Written are the files written into the outbox: a report and its
	// annotated image per measurement.
	Written []string
	// NoStudy counts the measurements in effect that are not of a DICOM
	// study the history knows (JPEG or PNG files, captures, API entries,
	// entries saved before studies were kept): they have no study to
	// return to.
	NoStudy int
}

// ReportsToPACS writes the report of every measurement of a patient in
// effect (desktop entries neither removed nor corrected since) that was
// made on a DICOM study into the outbox (ReportToPACS), each as it was
// saved (its kind, landmarks and values, dated when it was saved), with
// the patient's record and the clinic's letterhead: the batch from the
// Patients tab.
func (s *Patients) ReportsToPACS(ctx context.Context, patientID PatientID, outbox string, clinic report.Clinic) (PACSBatch, error) {
	var out PACSBatch
	rec, err := s.Patient(ctx, patientID)
	if err != nil {
		return out, fmt.Errorf("reports to PACS: %w", err)
	}
	for _, e := range rec.Cardiac {
		if !e.Current() {
			continue
		}
		if e.Customer != DesktopCustomer || e.Study == nil || !e.HasImage {
			out.NoStudy++
			continue
		}
		m, err := s.ReopenMeasurement(ctx, rec.PatientID, e.Customer, e.Seq)
		if err != nil {
			return out, fmt.Errorf("reports to PACS: %w", err)
		}
		req := SaveRequest{PatientID: rec.PatientID, Measurement: m, Kind: e.Kind}
		if e.Kind.Clinician() {
			lm := m.Result.Landmarks
			req.Landmarks = &lm
		}
		rep, err := DesktopReport(req, e.Time, ReportDetails{Patient: rec.Details, Clinic: clinic})
		if err != nil {
			return out, fmt.Errorf("reports to PACS: measurement %d: %w", e.Seq, err)
		}
		paths, err := ReportToPACS(m, rep, outbox, s.clock.Now())
		if err != nil {
			return out, err
		}
		out.Written = append(out.Written, paths...)
	}
	return out, nil
}
