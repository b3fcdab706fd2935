package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"vetlens/app/repo"
	"vetlens/internal/ident"
)

// The sexes a record holds (repo.Patient.Sex); empty is not recorded.
const (
	SexMale         = "male"
	SexFemale       = "female"
	SexMaleNeutered = "male neutered"
	SexFemaleSpayed = "female spayed"
)

const (
	// birthDateLayout is how a record writes a birth date.
	birthDateLayout = "2006-01-02"
	// maxPatientWeightK is the heaviest weight a record accepts, in kg.
	maxPatientWeightK = 200.0
)

// Sexes lists the sexes a record can hold, for the form's choices.
func Sexes() []string { return []string{SexMale, SexFemale, SexMaleNeutered, SexFemaleSpayed} }

// NormalizePatient trims a record's text and checks every field: the id
// (the identifier rule, required), the text fields (the same rule),
// species dog, cat or empty, a known sex or empty, a birth date
// YYYY-MM-DD not in the future, a weight above 0 and at most 200 kg. A
// known breed is spelled as the reference table spells it. Errors are
// KindInvalid and name the field.
func NormalizePatient(p repo.Patient, now time.Time) (repo.Patient, error) {
	// A record assembled from a form or from DICOM tags carries its id as
	// given (PatientFromTags): it is parsed here, before it is stored.
	id, err := ParsePatientID(strings.TrimSpace(p.ID.String()))
	if err != nil {
		return p, err
	}
	if p.ID = id; p.ID == "" {
		return p, errf(KindInvalid, "a patient ID is required")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", &p.Name}, {"breed", &p.Breed}, {"owner", &p.Owner}} {
		*f.v = strings.Join(strings.Fields(*f.v), " ")
		if err := ident.Check(*f.v); err != nil {
			return p, &Error{Kind: KindInvalid, Msg: "patient " + f.name, Err: err}
		}
	}
	if sp := strings.TrimSpace(p.Species); sp != "" {
		s := ParseSpecies(sp)
		if s == SpeciesUnknown {
			return p, errf(KindInvalid, "species %q: VetLens records dogs and cats", sp)
		}
		p.Species = string(s)
	} else {
		p.Species = ""
	}
	if b := CanonicalBreed(p.Breed); b != "" {
		p.Breed = b
	}
	p.Sex = strings.ToLower(strings.Join(strings.Fields(p.Sex), " "))
	if p.Sex != "" && !contains(Sexes(), p.Sex) {
		return p, errf(KindInvalid, "sex %q: one of %s, or empty", p.Sex, strings.Join(Sexes(), ", "))
	}
	p.BirthDate = strings.TrimSpace(p.BirthDate)
	if p.BirthDate != "" {
		d, err := time.Parse(birthDateLayout, p.BirthDate)
		if err != nil {
			return p, errf(KindInvalid, "birth date %q: write it as YYYY-MM-DD", p.BirthDate)
		}
		if d.After(now) {
			return p, errf(KindInvalid, "birth date %s is in the future", p.BirthDate)
		}
	}
	if w := p.WeightKg; w != nil && (math.IsNaN(*w) || *w <= 0 || *w > maxPatientWeightK) {
		return p, errf(KindInvalid, "weight %g kg: above 0 and at most %g kg", *w, maxPatientWeightK)
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PatientDetails returns the record of a patient id; found is false (and
// the record holds only the id) for an id with history but no record,
// as older data directories have.
func (s *Patients) PatientDetails(ctx context.Context, id PatientID) (p repo.Patient, found bool, err error) {
	return s.patientDetails(ctx, id)
}

// patientDetails is PatientDetails, called within app.
func (s *Patients) patientDetails(ctx context.Context, id PatientID) (p repo.Patient, found bool, err error) {
	if id == "" {
		return p, false, errf(KindInvalid, "a patient ID is required")
	}
	p, err = s.repos.Patients.Get(ctx, id)
	switch {
	case errors.Is(err, repo.ErrNotFound):
		return repo.Patient{ID: id}, false, nil
	case err != nil:
		return p, false, fmt.Errorf("patient %s: %w", id, err)
	}
	return p, true, nil
}

// PatientSaved is the outcome of SavePatient.
type PatientSaved struct {
	Patient repo.Patient
	// Changed lists the fields that changed ("created" for a new
	// record); empty when the record was already as given and nothing
	// was written.
	Changed []string
}

// SavePatient creates or updates a patient record after
// NormalizePatient, recording the change in the audit trail. A record
// that is already as given is not written again (one save per change).
func (s *Patients) SavePatient(ctx context.Context, p repo.Patient) (PatientSaved, error) {
	now := s.clock.Now().UTC()
	p, err := NormalizePatient(p, now)
	if err != nil {
		return PatientSaved{Patient: p}, err
	}
	if err := s.disk.checkWritable(); err != nil {
		return PatientSaved{Patient: p}, err
	}
	old, found, err := s.patientDetails(ctx, p.ID)
	if err != nil {
		return PatientSaved{Patient: p}, err
	}
	ev := repo.AuditEvent{Time: now, PatientID: p.ID}
	var changed []string
	if found {
		changed = patientDiff(old, p)
		if len(changed) == 0 {
			return PatientSaved{Patient: old}, nil
		}
		p.Created = old.Created
		ev.Action, ev.Detail = "patient_updated", strings.Join(changed, ", ")
	} else {
		p.Created = now
		changed = []string{"created"}
		ev.Action, ev.Detail = "patient_created", patientSummary(p)
	}
	p.Updated = now
	if err := s.repos.Patients.Put(ctx, p, ev); err != nil {
		return PatientSaved{Patient: p}, fmt.Errorf("save patient %s: %w", p.ID, err)
	}
	return PatientSaved{Patient: p, Changed: changed}, nil
}

// patientDiff names the fields that differ, with old and new values.
func patientDiff(a, b repo.Patient) []string {
	var out []string
	add := func(name, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %q -> %q", name, x, y))
		}
	}
	add("name", a.Name, b.Name)
	add("species", a.Species, b.Species)
	add("breed", a.Breed, b.Breed)
	add("sex", a.Sex, b.Sex)
	add("birth date", a.BirthDate, b.BirthDate)
	add("weight", weightText(a.WeightKg), weightText(b.WeightKg))
	add("owner", a.Owner, b.Owner)
	return out
}

func weightText(w *float64) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("%g kg", *w)
}

// patientSummary is a record in one line for the audit trail.
func patientSummary(p repo.Patient) string {
	var parts []string
	for _, v := range []string{p.Name, p.Species, p.Breed, p.Sex, p.BirthDate, weightText(p.WeightKg), p.Owner} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, ", ")
}

// PatientMatch is one patient found by FindPatients: the record when
// there is one, else the bare id (older data directories).
type PatientMatch struct {
	Patient repo.Patient
	// HasRecord is false for an id known only from its history.
	HasRecord bool
}

// Label is the match as a list shows it: "Rex-1  Rex (dog, Boxer)".
func (m PatientMatch) Label() string {
	p := m.Patient
	if p.Name == "" {
		return p.ID.String()
	}
	var about []string
	for _, v := range []string{p.Species, p.Breed} {
		if v != "" {
			about = append(about, v)
		}
	}
	if len(about) == 0 {
		return p.ID.String() + "  " + p.Name
	}
	return fmt.Sprintf("%s  %s (%s)", p.ID, p.Name, strings.Join(about, ", "))
}

// FindPatients finds up to limit patients whose id, name or owner
// contains query (case-insensitive): records, and ids known only from the
// cardiac history or the USG log; sorted by id.
func (s *Patients) FindPatients(ctx context.Context, query string, limit int) ([]PatientMatch, error) {
	query = strings.TrimSpace(query)
	recs, err := s.repos.Patients.Search(ctx, query, 0)
	if err != nil {
		return nil, fmt.Errorf("find patients: %w", err)
	}
	if query != "" {
		// The store searches ids and names; the owner is matched here.
		all, err := s.repos.Patients.Search(ctx, "", 0)
		if err != nil {
			return nil, fmt.Errorf("find patients by owner: %w", err)
		}
		q := strings.ToLower(query)
		for _, p := range all {
			if strings.Contains(strings.ToLower(p.Owner), q) {
				recs = append(recs, p)
			}
		}
	}
	ids, err := s.repos.Patients.PatientIDs(ctx, query, 0)
	if err != nil {
		return nil, fmt.Errorf("find patients: %w", err)
	}
	byID := map[PatientID]PatientMatch{}
	for _, p := range recs {
		byID[p.ID] = PatientMatch{Patient: p, HasRecord: true}
	}
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			p, found, err := s.patientDetails(ctx, id) // a stored id: not parsed again
			if err != nil {
				return nil, err
			}
			byID[id] = PatientMatch{Patient: p, HasRecord: found}
		}
	}
	out := make([]PatientMatch, 0, len(byID))
	for _, m := range byID {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Patient.ID < out[j].Patient.ID })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Age is the age on date of a patient born on birthDate (YYYY-MM-DD), in
// whole months; ok false without a readable birth date.
func Age(birthDate string, on time.Time) (months int, ok bool) {
	d, err := time.Parse(birthDateLayout, birthDate)
	if err != nil || d.After(on) {
		return 0, false
	}
	months = (on.Year()-d.Year())*12 + int(on.Month()) - int(d.Month())
	if on.Day() < d.Day() {
		months--
	}
	return max(months, 0), true
}

// AgeText is an age in months as a clinician writes it: "7 months",
// "3 years 2 months".
func AgeText(months int) string {
	y, m := months/12, months%12
	plural := func(n int, w string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", w)
		}
		return fmt.Sprintf("%d %ss", n, w)
	}
	switch {
	case y == 0:
		return plural(m, "month")
	case m == 0:
		return plural(y, "year")
	}
	return plural(y, "year") + " " + plural(m, "month")
}

// ReferenceForPatient is ReferenceFor the record's species and breed.
func ReferenceForPatient(p repo.Patient) Reference {
	return ReferenceFor(Species(p.Species), p.Breed)
}

// AuditTrail returns the patient's audit events, oldest first.
func (s *Patients) AuditTrail(ctx context.Context, patientID PatientID) ([]repo.AuditEvent, error) {
	ev, err := s.repos.Audit.ListPatient(ctx, patientID)
	if err != nil {
		return nil, fmt.Errorf("audit trail: %w", err)
	}
	return ev, nil
}
