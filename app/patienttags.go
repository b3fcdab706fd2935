package app

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"vetlens/app/repo"
	"vetlens/internal/ident"
)

// PatientTags are the patient tags of a DICOM file (or any other
// source), as their strings: the DICOM reader fills them and
// PrefillPatient merges them into the record. Empty fields are absent.
type PatientTags struct {
	// PatientID is (0010,0020) Patient ID.
	PatientID string
	// Name is (0010,0010) Patient's Name as read, a DICOM person name;
	// by the veterinary convention "ResponsibleFamilyName^AnimalName", so
	// the animal's name is the second component when there is one. A
	// name without "^" (already formatted) is taken as it is.
	Name string
	// Species is (0010,2201) Patient Species Description ("Canine",
	// "Feline", "Canis lupus familiaris").
	Species string
	// Breed is (0010,2292) Patient Breed Description.
	Breed string
	// Sex is (0010,0040) Patient's Sex: "M", "F" or "O".
	Sex string
	// Neutered is (0010,2203) Patient's Sex Neutered: "ALTERED" or
	// "UNALTERED".
	Neutered string
	// BirthDate is (0010,0030) Patient's Birth Date, YYYYMMDD (DICOM's DA;
	// YYYY-MM-DD is read too).
	BirthDate string
	// WeightKg is (0010,1030) Patient's Weight in kg; 0 absent.
	WeightKg float64
	// ResponsiblePerson is (0010,2297) Responsible Person, a person name
	// ("Family^Given"; a name without "^" is taken as it is).
	ResponsiblePerson string
}

// PatientFromTags converts DICOM patient tags into a record (not
// checked: its ID is the file's Patient ID as written, which
// NormalizePatient parses before the record is stored, and which
// StudyMismatch compares as the file gives it). Person names become "Given
// Family"; the sex and neutered tags become one sex; the birth date
// becomes YYYY-MM-DD; a species description becomes dog or cat where it
// names one.
func PatientFromTags(t PatientTags) repo.Patient {
	p := repo.Patient{ID: PatientID(strings.TrimSpace(t.PatientID)), Breed: strings.TrimSpace(t.Breed)}
	if comps := strings.Split(strings.TrimSpace(t.Name), "^"); len(comps) >= 2 && strings.TrimSpace(comps[1]) != "" {
		p.Name = strings.TrimSpace(comps[1])
	} else {
		p.Name = strings.TrimSpace(comps[0])
	}
	p.Owner = personName(t.ResponsiblePerson)
	if sp := ParseSpecies(t.Species); sp != SpeciesUnknown {
		p.Species = string(sp)
	}
	altered := strings.EqualFold(strings.TrimSpace(t.Neutered), "ALTERED")
	switch strings.ToUpper(strings.TrimSpace(t.Sex)) {
	case "M":
		p.Sex = SexMale
		if altered {
			p.Sex = SexMaleNeutered
		}
	case "F":
		p.Sex = SexFemale
		if altered {
			p.Sex = SexFemaleSpayed
		}
	}
	for _, layout := range []string{"20060102", birthDateLayout} {
		if d, err := time.Parse(layout, strings.TrimSpace(t.BirthDate)); err == nil {
			p.BirthDate = d.Format(birthDateLayout)
			break
		}
	}
	if t.WeightKg > 0 {
		w := t.WeightKg
		p.WeightKg = &w
	}
	return p
}

// personName turns a DICOM person name "Family^Given^Middle^Prefix^Suffix"
// into "Prefix Given Middle Family Suffix", without empty parts.
func personName(pn string) string {
	c := strings.Split(strings.TrimSpace(pn), "^")
	for len(c) < 5 {
		c = append(c, "")
	}
	var parts []string
	for _, v := range []string{c[3], c[1], c[2], c[0], c[4]} {
		if v = strings.TrimSpace(v); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

// MergePatient fills the empty fields of a record from incoming (a record
// from DICOM tags, say) and lists the fields where both hold different
// values: there the record is kept, and the caller shows the difference.
func MergePatient(rec, incoming repo.Patient) (merged repo.Patient, conflicts []string) {
	merged = rec
	fill := func(name string, dst *string, v string) {
		switch {
		case v == "":
		case *dst == "":
			*dst = v
		case !strings.EqualFold(*dst, v):
			conflicts = append(conflicts, fmt.Sprintf("%s: record %q, image %q", name, *dst, v))
		}
	}
	fill("name", &merged.Name, incoming.Name)
	fill("species", &merged.Species, incoming.Species)
	fill("breed", &merged.Breed, incoming.Breed)
	fill("sex", &merged.Sex, incoming.Sex)
	fill("birth date", &merged.BirthDate, incoming.BirthDate)
	fill("owner", &merged.Owner, incoming.Owner)
	switch {
	case incoming.WeightKg == nil:
	case merged.WeightKg == nil:
		w := *incoming.WeightKg
		merged.WeightKg = &w
	case math.Abs(*merged.WeightKg-*incoming.WeightKg) > 0.05:
		conflicts = append(conflicts, fmt.Sprintf("weight: record %s, image %s", weightText(merged.WeightKg), weightText(incoming.WeightKg)))
	}
	return merged, conflicts
}

// Prefill is the outcome of PrefillPatient.
type Prefill struct {
	// Patient is the record after the merge, as stored.
	Patient repo.Patient
	// Created is set when the tags created the record.
	Created bool
	// Changed lists what the tags added to an existing record.
	Changed []string
	// Conflicts lists the fields where the record and the tags differ;
	// the record's values were kept.
	Conflicts []string
	// Ignored lists tags that were dropped as invalid, with why.
	Ignored []string
}

// PrefillPatient creates or completes the record of the tags' patient id
// from the tags (PatientFromTags, MergePatient) and saves it
// (SavePatient: audited, not rewritten when nothing changes). A tag value
// the record cannot hold (a species other than dog or cat, an unreadable
// birth date, a birth date in the future) is dropped and listed in
// Ignored rather than refusing the image. The tags must carry a patient
// id.
func (s *Patients) PrefillPatient(ctx context.Context, t PatientTags) (Prefill, error) {
	in := PatientFromTags(t)
	if in.ID == "" {
		return Prefill{}, errf(KindInvalid, "the image carries no patient ID")
	}
	var out Prefill
	if sp := strings.TrimSpace(t.Species); sp != "" && in.Species == "" {
		out.Ignored = append(out.Ignored, fmt.Sprintf("species %q (VetLens records dogs and cats)", sp))
	}
	if bd := strings.TrimSpace(t.BirthDate); bd != "" && in.BirthDate == "" {
		out.Ignored = append(out.Ignored, fmt.Sprintf("birth date %q (not YYYYMMDD)", bd))
	}
	// Drop whatever else the record could not hold.
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", &in.Name}, {"breed", &in.Breed}, {"owner", &in.Owner}} {
		if err := ident.Check(*f.v); err != nil {
			out.Ignored = append(out.Ignored, fmt.Sprintf("%s (%v)", f.name, err))
			*f.v = ""
		}
	}
	if d, err := time.Parse(birthDateLayout, in.BirthDate); err == nil && d.After(s.clock.Now()) {
		out.Ignored = append(out.Ignored, fmt.Sprintf("birth date %s (in the future)", in.BirthDate))
		in.BirthDate = ""
	}
	if w := in.WeightKg; w != nil && *w > maxPatientWeightK {
		out.Ignored = append(out.Ignored, fmt.Sprintf("weight %g kg (above %g kg)", *w, maxPatientWeightK))
		in.WeightKg = nil
	}
	// The tags are read here, so their id is parsed here.
	id, err := ParsePatientID(in.ID.String())
	if err != nil {
		return out, err
	}
	rec, found, err := s.patientDetails(ctx, id)
	if err != nil {
		return out, err
	}
	merged, conflicts := MergePatient(rec, in)
	saved, err := s.SavePatient(ctx, merged)
	if err != nil {
		return out, err
	}
	out.Patient, out.Conflicts, out.Created = saved.Patient, conflicts, !found
	if found {
		out.Changed = saved.Changed
	}
	return out, nil
}
