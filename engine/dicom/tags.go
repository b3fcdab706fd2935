package dicom

import (
	"strconv"
	"strings"
	"time"

	dcm "github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/tag"
)

// Tags are the patient and study attributes a clinic's patient record is
// prefilled from. Empty strings and zero values mean the file does not
// give them.
type Tags struct {
	// PatientID is Patient ID (0010,0020).
	PatientID string
	// PatientName is Patient's Name (0010,0010) as read: the components
	// in given-name-first order, "Rex Smith" for "Smith^Rex" (veterinary
	// files put the owner's family name first and the animal's name second).
	PatientName string
	// AnimalName is the animal's name by the veterinary convention for
	// Patient's Name (owner's family name, then the animal's name): the
	// given-name component, else the whole name ("Rex" for "Smith^Rex").
	AnimalName string
	// Species is Patient Species Description (0010,2201), e.g. "Canine".
	Species string
	// Breed is Patient Breed Description (0010,2292).
	Breed string
	// Sex is Patient's Sex (0010,0040): M, F or O.
	Sex string
	// Neutered is Patient's Sex Neutered (0010,2203): ALTERED or UNALTERED.
	Neutered string
	// BirthDate is Patient's Birth Date (0010,0030); zero when absent.
	BirthDate time.Time
	// WeightKg is Patient's Weight (0010,1030) in kg; 0 when absent.
	WeightKg float64
	// ResponsiblePerson is Responsible Person (0010,2297), the owner, given
	// name first.
	ResponsiblePerson string
	// ResponsibleOrganization is Responsible Organization (0010,2299).
	ResponsibleOrganization string
	// StudyDate is Study Date (0008,0020); zero when absent.
	StudyDate time.Time
	// StudyDescription is Study Description (0008,1030).
	StudyDescription string
	// Modality is Modality (0008,0060), e.g. DX or CR.
	Modality string
	// BodyPart is Body Part Examined (0018,0015).
	BodyPart string
	// Institution is Institution Name (0008,0080).
	Institution string
	// StudyInstanceUID is Study Instance UID (0020,000D) and
	// AccessionNumber Accession Number (0008,0050): what a report
	// returned to the PACS joins.
	StudyInstanceUID, AccessionNumber string
	// PatientNameDICOM is Patient's Name as the file wrote it (a DICOM
	// person name, "Smith^Rex"), for a report returned to the PACS.
	PatientNameDICOM string
}

// tagsOf reads the Tags of a data set.
func tagsOf(ds *dcm.Dataset) Tags {
	t := Tags{
		PatientID:               stringOf(ds, tag.PatientID),
		PatientName:             personName(stringOf(ds, tag.PatientName)),
		Species:                 stringOf(ds, tag.PatientSpeciesDescription),
		Breed:                   stringOf(ds, tag.PatientBreedDescription),
		Sex:                     strings.ToUpper(stringOf(ds, tag.PatientSex)),
		Neutered:                strings.ToUpper(stringOf(ds, tag.PatientSexNeutered)),
		BirthDate:               dateOf(ds, tag.PatientBirthDate),
		ResponsiblePerson:       personName(stringOf(ds, tag.ResponsiblePerson)),
		ResponsibleOrganization: stringOf(ds, tag.ResponsibleOrganization),
		StudyDate:               dateOf(ds, tag.StudyDate),
		StudyDescription:        stringOf(ds, tag.StudyDescription),
		Modality:                stringOf(ds, tag.Modality),
		BodyPart:                stringOf(ds, tag.BodyPartExamined),
		Institution:             stringOf(ds, tag.InstitutionName),
		StudyInstanceUID:        stringOf(ds, tag.StudyInstanceUID),
		AccessionNumber:         stringOf(ds, tag.AccessionNumber),
		PatientNameDICOM:        stringOf(ds, tag.PatientName),
	}
	t.AnimalName = t.PatientName
	if c := strings.Split(stringOf(ds, tag.PatientName), "^"); len(c) > 1 && strings.TrimSpace(c[1]) != "" {
		t.AnimalName = strings.TrimSpace(c[1])
	}
	if w, ok := numberOf(ds, tag.PatientWeight); ok && w > 0 {
		t.WeightKg = w
	}
	return t
}

// personName turns a PN value's first (alphabetic) group
// "Family^Given^Middle^Prefix^Suffix" into "Prefix Given Middle Family
// Suffix", empty components left out.
func personName(pn string) string {
	group, _, _ := strings.Cut(pn, "=")
	c := strings.Split(group, "^")
	for len(c) < 5 {
		c = append(c, "")
	}
	var parts []string
	for _, s := range []string{c[3], c[1], c[2], c[0], c[4]} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// spacingOf is Pixel Spacing, else Imager Pixel Spacing (row, column mm),
// and the tag it came from.
func spacingOf(ds *dcm.Dataset) ([2]float64, string) {
	for _, c := range []struct {
		t    tag.Tag
		name string
	}{{tag.PixelSpacing, "PixelSpacing"}, {tag.ImagerPixelSpacing, "ImagerPixelSpacing"}} {
		if v := numbersOf(ds, c.t); len(v) == 2 && v[0] > 0 && v[1] > 0 {
			return [2]float64{v[0], v[1]}, c.name
		}
	}
	return [2]float64{}, ""
}

// stringsOf is a string element's values, trimmed ("": none).
func stringsOf(ds *dcm.Dataset, t tag.Tag) []string {
	e, err := ds.FindElementByTag(t)
	if err != nil || e.Value.ValueType() != dcm.Strings {
		return nil
	}
	v, _ := e.Value.GetValue().([]string)
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = strings.TrimSpace(strings.Trim(s, "\x00"))
	}
	return out
}

// stringOf is a string element's first value ("" when absent).
func stringOf(ds *dcm.Dataset, t tag.Tag) string {
	if v := stringsOf(ds, t); len(v) > 0 {
		return v[0]
	}
	return ""
}

// numbersOf parses a DS or IS element's values; unparsable ones end the list.
func numbersOf(ds *dcm.Dataset, t tag.Tag) []float64 {
	var out []float64
	for _, s := range stringsOf(ds, t) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			break
		}
		out = append(out, f)
	}
	return out
}

// numberOf is a DS or IS element's first value.
func numberOf(ds *dcm.Dataset, t tag.Tag) (float64, bool) {
	if v := numbersOf(ds, t); len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

// intsOf is an integer element's values (US, SS, UL, SL).
func intsOf(ds *dcm.Dataset, t tag.Tag) []int {
	e, err := ds.FindElementByTag(t)
	if err != nil || e.Value.ValueType() != dcm.Ints {
		return nil
	}
	v, _ := e.Value.GetValue().([]int)
	return v
}

// intOf is an integer element's first value.
func intOf(ds *dcm.Dataset, t tag.Tag) (int, bool) {
	if v := intsOf(ds, t); len(v) > 0 {
		return v[0], true
	}
	return 0, false
}

// dateOf parses a DA element (YYYYMMDD, or the old YYYY.MM.DD).
func dateOf(ds *dcm.Dataset, t tag.Tag) time.Time {
	s := strings.ReplaceAll(stringOf(ds, t), ".", "")
	d, err := time.Parse("20060102", s)
	if err != nil {
		return time.Time{}
	}
	return d
}
