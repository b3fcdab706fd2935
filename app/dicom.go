package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"vetlens/engine/cardiac"
	"vetlens/engine/dicom"
	"vetlens/engine/imageproc"
)

// ImageKind tells an image by its first bytes, never its name: "dicom"
// (DICM at offset 128), "jpeg", "png", or "" for anything else. The first
// 132 bytes are enough.
func ImageKind(head []byte) string {
	switch {
	case dicom.Is(head):
		return "dicom"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	}
	return ""
}

// DICOMTags are the patient and study attributes of a DICOM file, for
// prefilling the patient record. Empty strings and zero values mean the
// file does not give them.
type DICOMTags struct {
	// PatientID is Patient ID (0010,0020).
	PatientID string
	// Name is Patient's Name, given name first ("Rex Smith" for the
	// veterinary "Smith^Rex": owner's family name, animal's name).
	Name string
	// AnimalName is the animal's name from it ("Rex"): the record's name.
	AnimalName string
	// SpeciesDescription and Breed are the species and breed descriptions
	// as written (0010,2201 and 0010,2292); Species gives the record's dog
	// or cat.
	SpeciesDescription, Breed string
	// Sex is M, F or O; Neutered is ALTERED or UNALTERED.
	Sex, Neutered string
	// BirthDate is Patient's Birth Date; zero when absent.
	BirthDate time.Time
	// WeightKg is Patient's Weight in kg; 0 when absent.
	WeightKg float64
	// Owner is Responsible Person, given name first; OwnerOrganization is
	// Responsible Organization.
	Owner, OwnerOrganization string
	// StudyDate is the study's date; zero when absent.
	StudyDate time.Time
	// StudyDescription, Modality (DX, CR, ...), BodyPart and Institution
	// describe the study.
	StudyDescription, Modality, BodyPart, Institution string
	// StudyInstanceUID, AccessionNumber and PatientNameDICOM (Patient's
	// Name as written, "Smith^Rex") are what a report returned to the
	// PACS carries (ReportToPACS).
	StudyInstanceUID, AccessionNumber, PatientNameDICOM string
}

// Species is the record's species from the species description: "dog"
// (canine, dog, Canis, K9), "cat" (feline, cat, Felis) or "" when the
// description says neither.
func (t DICOMTags) Species() string {
	d := strings.ToLower(t.SpeciesDescription)
	for _, w := range []string{"canine", "canis", "dog", "k9"} {
		if strings.Contains(d, w) {
			return "dog"
		}
	}
	for _, w := range []string{"feline", "felis", "cat"} {
		if strings.Contains(d, w) {
			return "cat"
		}
	}
	return ""
}

// PatientTags are the tags as PrefillPatient takes them: the animal's
// name, the owner given name first, the birth date as YYYYMMDD.
func (t DICOMTags) PatientTags() PatientTags {
	p := PatientTags{PatientID: t.PatientID, Name: t.AnimalName, Species: t.SpeciesDescription, Breed: t.Breed,
		Sex: t.Sex, Neutered: t.Neutered, WeightKg: t.WeightKg, ResponsiblePerson: t.Owner}
	if !t.BirthDate.IsZero() {
		p.BirthDate = t.BirthDate.Format("20060102")
	}
	return p
}

// DICOMImage is what a measured DICOM file carried besides its pixels.
type DICOMImage struct {
	// Tags are the patient and study tags.
	Tags DICOMTags
	// PixelSpacingMM is the row and column pixel spacing in mm (Pixel
	// Spacing, else Imager Pixel Spacing); zero when the file gives none.
	PixelSpacingMM [2]float64
	// TransferSyntax names how the pixels were encoded.
	TransferSyntax string
	// Frames is the file's frame count; the first was measured.
	Frames int
	// VOI says how the grey levels were chosen (VOI LUT, window, full range).
	VOI string
}

// newDICOMImage copies a decoded file's attributes.
func newDICOMImage(d *dicom.Image) *DICOMImage {
	t := d.Tags
	return &DICOMImage{
		Tags: DICOMTags{
			PatientID: t.PatientID, Name: t.PatientName, AnimalName: t.AnimalName, SpeciesDescription: t.Species, Breed: t.Breed,
			Sex: t.Sex, Neutered: t.Neutered, BirthDate: t.BirthDate, WeightKg: t.WeightKg,
			Owner: t.ResponsiblePerson, OwnerOrganization: t.ResponsibleOrganization, StudyDate: t.StudyDate,
			StudyDescription: t.StudyDescription, Modality: t.Modality, BodyPart: t.BodyPart, Institution: t.Institution,
			StudyInstanceUID: t.StudyInstanceUID, AccessionNumber: t.AccessionNumber, PatientNameDICOM: t.PatientNameDICOM,
		},
		PixelSpacingMM: d.PixelSpacing, TransferSyntax: d.TransferSyntax, Frames: d.Frames, VOI: d.VOI,
	}
}

// measureDesktopDICOM measures a DICOM file's first frame as it is (a
// DICOM is never a photograph of a screen), holding its reservation of
// the pixel budget while it decodes and measures.
func (s *measurer) measureDesktopDICOM(ctx context.Context, b []byte) (*cardiac.Result, *dicom.Image, error) {
	_, need, err := imageproc.DecodeCost(b)
	if err != nil {
		return nil, nil, imageError(err)
	}
	release, err := s.reservePixels(ctx, need)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	d, err := imageproc.DecodeDICOM(b)
	if err != nil {
		return nil, nil, imageError(err)
	}
	res, err := s.predictImage(ctx, d.Gray, cardiac.PredictOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("measure: %w", err)
	}
	return res, d, nil
}
