package dicom

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	dcm "github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/tag"
)

// EncapsulatedPDFStorage is the SOP Class UID of Encapsulated PDF Storage.
const EncapsulatedPDFStorage = "1.2.840.10008.5.1.4.1.1.104.1"

// explicitVRLittleEndian is the transfer syntax the writer uses.
const explicitVRLittleEndian = "1.2.840.10008.1.2.1"

// implementationClassUID names VetLens as the writer of a file (a
// 2.25 UUID-derived root).
const implementationClassUID = "2.25.137039829361473126383315196513342718977"

// PDFReport is a report to return to a PACS as a DICOM Encapsulated PDF:
// it joins the source study (its Study Instance UID, Patient ID and
// name) as a new series with a new instance.
type PDFReport struct {
	// StudyInstanceUID, PatientID and PatientName (a DICOM person name,
	// as the source file wrote it) are the source study's.
	StudyInstanceUID, PatientID, PatientName string
	// AccessionNumber and StudyDate are the source study's, where it
	// gave them.
	AccessionNumber string
	StudyDate       time.Time
	// SeriesInstanceUID and SOPInstanceUID are new UIDs for the report.
	SeriesInstanceUID, SOPInstanceUID string
	// Content is when the report was made; Title its document title.
	Content time.Time
	Title   string
	// PDF is the report.
	PDF []byte
}

// EncapsulatedPDF encodes r as a DICOM Part 10 file (Encapsulated PDF
// Storage, explicit VR little endian): the PDF with its length, the
// source study's identity, and the new series and instance. The study,
// series and instance UIDs and the PDF are required.
func EncapsulatedPDF(r PDFReport) ([]byte, error) {
	switch {
	case r.StudyInstanceUID == "" || r.SeriesInstanceUID == "" || r.SOPInstanceUID == "":
		return nil, errors.New("dicom: encapsulated PDF: the study, series and instance UIDs are required")
	case !bytes.HasPrefix(r.PDF, []byte("%PDF-")):
		return nil, errors.New("dicom: encapsulated PDF: not a PDF")
	}
	date := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("20060102")
	}
	doc := r.PDF
	if len(doc)%2 == 1 {
		doc = append(append([]byte(nil), doc...), 0) // even length; Encapsulated Document Length says the PDF's own
	}
	var elems []*dcm.Element
	add := func(t tag.Tag, v any) error {
		e, err := dcm.NewElement(t, v)
		if err != nil {
			return fmt.Errorf("dicom: encapsulated PDF: element %v: %w", t, err)
		}
		elems = append(elems, e)
		return nil
	}
	for _, f := range []struct {
		t tag.Tag
		v any
	}{
		{tag.FileMetaInformationVersion, []byte{0, 1}},
		{tag.MediaStorageSOPClassUID, []string{EncapsulatedPDFStorage}},
		{tag.MediaStorageSOPInstanceUID, []string{r.SOPInstanceUID}},
		{tag.TransferSyntaxUID, []string{explicitVRLittleEndian}},
		{tag.ImplementationClassUID, []string{implementationClassUID}},
		{tag.SpecificCharacterSet, []string{"ISO_IR 192"}},
		{tag.SOPClassUID, []string{EncapsulatedPDFStorage}},
		{tag.SOPInstanceUID, []string{r.SOPInstanceUID}},
		{tag.StudyDate, []string{date(r.StudyDate)}},
		{tag.ContentDate, []string{date(r.Content)}},
		{tag.AcquisitionDateTime, []string{r.Content.Format("20060102150405")}},
		{tag.StudyTime, []string{""}},
		{tag.ContentTime, []string{r.Content.Format("150405")}},
		{tag.AccessionNumber, []string{r.AccessionNumber}},
		{tag.Modality, []string{"DOC"}},
		{tag.ConversionType, []string{"WSD"}},
		{tag.Manufacturer, []string{"VetLens"}},
		{tag.ReferringPhysicianName, []string{""}},
		{tag.PatientName, []string{r.PatientName}},
		{tag.PatientID, []string{r.PatientID}},
		{tag.PatientBirthDate, []string{""}},
		{tag.PatientSex, []string{""}},
		{tag.StudyInstanceUID, []string{r.StudyInstanceUID}},
		{tag.SeriesInstanceUID, []string{r.SeriesInstanceUID}},
		{tag.StudyID, []string{""}},
		{tag.SeriesNumber, []string{"900"}},
		{tag.InstanceNumber, []string{"1"}},
		{tag.BurnedInAnnotation, []string{"YES"}},
		{tag.DocumentTitle, []string{r.Title}},
		{tag.EncapsulatedDocument, doc},
		{tag.MIMETypeOfEncapsulatedDocument, []string{"application/pdf"}},
		{tag.EncapsulatedDocumentLength, []int{len(r.PDF)}},
	} {
		if err := add(f.t, f.v); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := dcm.Write(&b, dcm.Dataset{Elements: elems}); err != nil {
		return nil, fmt.Errorf("dicom: encapsulated PDF: %w", err)
	}
	return b.Bytes(), nil
}
