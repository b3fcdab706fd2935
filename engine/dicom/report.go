package dicom

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"sort"
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
	doc := r.PDF
	if len(doc)%2 == 1 {
		doc = append(append([]byte(nil), doc...), 0) // even length; Encapsulated Document Length says the PDF's own
	}
	return write("encapsulated PDF", EncapsulatedPDFStorage, r.identity(), []field{
		{tag.Modality, []string{"DOC"}},
		{tag.ConversionType, []string{"WSD"}},
		{tag.BurnedInAnnotation, []string{"YES"}},
		{tag.DocumentTitle, []string{r.Title}},
		{tag.EncapsulatedDocument, doc},
		{tag.MIMETypeOfEncapsulatedDocument, []string{"application/pdf"}},
		{tag.EncapsulatedDocumentLength, []int{len(r.PDF)}},
	})
}

// field is one element to write: its tag and value (as dcm.NewElement
// takes it).
type field struct {
	t tag.Tag
	v any
}

// identity is the source study's and the new object's identification
// (study, patient, series, instance, dates), shared by the report and
// the image.
type identity struct {
	StudyInstanceUID, PatientID, PatientName, AccessionNumber string
	StudyDate                                                 time.Time
	SeriesInstanceUID, SOPInstanceUID                         string
	Content                                                   time.Time
	SeriesNumber                                              string
}

func (r PDFReport) identity() identity {
	return identity{r.StudyInstanceUID, r.PatientID, r.PatientName, r.AccessionNumber, r.StudyDate, r.SeriesInstanceUID, r.SOPInstanceUID, r.Content, "900"}
}

// write encodes a Part 10 file of SOP class sopClass: the file meta
// information, the identity, and the class's own fields; the elements
// are sorted by tag as the encoding requires.
func write(what, sopClass string, id identity, own []field) ([]byte, error) {
	date := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("20060102")
	}
	fields := append([]field{
		{tag.FileMetaInformationVersion, []byte{0, 1}},
		{tag.MediaStorageSOPClassUID, []string{sopClass}},
		{tag.MediaStorageSOPInstanceUID, []string{id.SOPInstanceUID}},
		{tag.TransferSyntaxUID, []string{explicitVRLittleEndian}},
		{tag.ImplementationClassUID, []string{implementationClassUID}},
		{tag.SpecificCharacterSet, []string{"ISO_IR 192"}},
		{tag.SOPClassUID, []string{sopClass}},
		{tag.SOPInstanceUID, []string{id.SOPInstanceUID}},
		{tag.StudyDate, []string{date(id.StudyDate)}},
		{tag.ContentDate, []string{date(id.Content)}},
		{tag.AcquisitionDateTime, []string{id.Content.Format("20060102150405")}},
		{tag.StudyTime, []string{""}},
		{tag.ContentTime, []string{id.Content.Format("150405")}},
		{tag.AccessionNumber, []string{id.AccessionNumber}},
		{tag.Manufacturer, []string{"VetLens"}},
		{tag.ReferringPhysicianName, []string{""}},
		{tag.PatientName, []string{id.PatientName}},
		{tag.PatientID, []string{id.PatientID}},
		{tag.PatientBirthDate, []string{""}},
		{tag.PatientSex, []string{""}},
		{tag.StudyInstanceUID, []string{id.StudyInstanceUID}},
		{tag.SeriesInstanceUID, []string{id.SeriesInstanceUID}},
		{tag.StudyID, []string{""}},
		{tag.SeriesNumber, []string{id.SeriesNumber}},
		{tag.InstanceNumber, []string{"1"}},
	}, own...)
	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i].t, fields[j].t
		return a.Group < b.Group || a.Group == b.Group && a.Element < b.Element
	})
	elems := make([]*dcm.Element, 0, len(fields))
	for _, f := range fields {
		e, err := dcm.NewElement(f.t, f.v)
		if err != nil {
			return nil, fmt.Errorf("dicom: %s: element %v: %w", what, f.t, err)
		}
		elems = append(elems, e)
	}
	var b bytes.Buffer
	if err := dcm.Write(&b, dcm.Dataset{Elements: elems}); err != nil {
		return nil, fmt.Errorf("dicom: %s: %w", what, err)
	}
	return b.Bytes(), nil
}

// SecondaryCaptureStorage is the SOP Class UID of Secondary Capture
// Image Storage.
const SecondaryCaptureStorage = "1.2.840.10008.5.1.4.1.1.7"

// CapturedImage is an image to return to a PACS as a Secondary Capture
// (the annotated radiograph of a report), in the source study as a new
// series, like PDFReport.
type CapturedImage struct {
	StudyInstanceUID, PatientID, PatientName, AccessionNumber string
	StudyDate                                                 time.Time
	SeriesInstanceUID, SOPInstanceUID                         string
	Content                                                   time.Time
	// Image is the picture; it is written as 8-bit RGB.
	Image image.Image
}

// SecondaryCapture encodes c as a DICOM Part 10 file (Secondary Capture
// Image Storage, 8-bit RGB, explicit VR little endian), series number
// 901. The study, series and instance UIDs and the image are required.
func SecondaryCapture(c CapturedImage) ([]byte, error) {
	if c.StudyInstanceUID == "" || c.SeriesInstanceUID == "" || c.SOPInstanceUID == "" || c.Image == nil {
		return nil, errors.New("dicom: secondary capture: the study, series and instance UIDs and the image are required")
	}
	bnd := c.Image.Bounds()
	w, h := bnd.Dx(), bnd.Dy()
	if w == 0 || h == 0 || w > 65535 || h > 65535 {
		return nil, fmt.Errorf("dicom: secondary capture: a %dx%d image", w, h)
	}
	px := make([]byte, 0, w*h*3+1)
	for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
		for x := bnd.Min.X; x < bnd.Max.X; x++ {
			r, g, b, _ := c.Image.At(x, y).RGBA()
			px = append(px, byte(r>>8), byte(g>>8), byte(b>>8))
		}
	}
	if len(px)%2 == 1 {
		px = append(px, 0)
	}
	id := identity{c.StudyInstanceUID, c.PatientID, c.PatientName, c.AccessionNumber, c.StudyDate, c.SeriesInstanceUID, c.SOPInstanceUID, c.Content, "901"}
	return write("secondary capture", SecondaryCaptureStorage, id, []field{
		{tag.Modality, []string{"OT"}},
		{tag.ConversionType, []string{"WSD"}},
		{tag.BurnedInAnnotation, []string{"YES"}},
		{tag.SamplesPerPixel, []int{3}},
		{tag.PhotometricInterpretation, []string{"RGB"}},
		{tag.PlanarConfiguration, []int{0}},
		{tag.Rows, []int{h}},
		{tag.Columns, []int{w}},
		{tag.BitsAllocated, []int{8}},
		{tag.BitsStored, []int{8}},
		{tag.HighBit, []int{7}},
		{tag.PixelRepresentation, []int{0}},
		{tag.PixelData, dcm.PixelDataInfo{IntentionallyUnprocessed: true, UnprocessedValueData: px}},
	})
}
