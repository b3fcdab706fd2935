package app

import (
	"fmt"
	"strings"
)

// Species is a patient's species as VetLens records it.
type Species string

// The species VetLens knows; SpeciesUnknown is a record without one.
const (
	SpeciesUnknown Species = ""
	SpeciesDog     Species = "dog"
	SpeciesCat     Species = "cat"
)

// ParseSpecies reads a species as typed or as a DICOM Patient Species
// Description gives it ("Canine", "CANIS FAMILIARIS", "Feline", "dog",
// "cat"); anything else is SpeciesUnknown.
func ParseSpecies(s string) Species {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case s == "":
		return SpeciesUnknown
	case strings.Contains(s, "canine") || strings.Contains(s, "canis") || s == "dog" || strings.HasPrefix(s, "dog "):
		return SpeciesDog
	case strings.Contains(s, "feline") || strings.Contains(s, "felis") || s == "cat" || strings.HasPrefix(s, "cat "):
		return SpeciesCat
	}
	return SpeciesUnknown
}

// RefRange is one published reference range of a cardiac measurement
// (VHS or VLAS, in vertebrae) for a species, or for one breed of it.
type RefRange struct {
	// Species is the species the study measured.
	Species Species
	// Breed is the breed studied; empty for the species as a whole.
	Breed string
	// Mean and SD are the study's mean and standard deviation of healthy
	// animals (zero where the study gave a cut-off only).
	Mean, SD float64
	// Low and High bound the range used: mean ± 2 SD where the study gave
	// mean and SD; Low is 0 for a cut-off with no lower bound.
	Low, High float64
	// N is the number of healthy animals in the study (0: not recorded here).
	N int
	// Source is the study, as cited in docs/reference-ranges.md.
	Source string
	// Checked is false where the figures were transcribed from memory of
	// the published abstract and await a check against the paper.
	Checked bool
}

// Describe is the range as a clinician reads it: "8.7-10.7" or "below 2.5".
func (r RefRange) Describe() string {
	if r.Low <= 0 {
		return fmt.Sprintf("below %.1f", r.High)
	}
	return fmt.Sprintf("%.1f-%.1f", r.Low, r.High)
}

// Scope names whose range it is: "breed range (Boxer)", "dog range".
func (r RefRange) Scope() string {
	if r.Breed != "" {
		return "breed range"
	}
	if r.Species == SpeciesCat {
		return "cat range"
	}
	return "dog range"
}

// meanSD is a range from a study's mean and SD: mean ± 2 SD.
func meanSD(sp Species, breed string, mean, sd float64, n int, source string, checked bool) RefRange {
	return RefRange{Species: sp, Breed: breed, Mean: mean, SD: sd, Low: mean - 2*sd, High: mean + 2*sd, N: n, Source: source, Checked: checked}
}

// Sources of the reference ranges (docs/reference-ranges.md gives the
// full citations).
const (
	SourceBuchanan1995 = "Buchanan & Bücheler 1995, J Am Vet Med Assoc 206:194-199"
	SourceLitster2000  = "Litster & Buchanan 2000, J Am Vet Med Assoc 216:210-214"
	SourceLamb2001     = "Lamb et al. 2001, Vet Rec 148:707-711"
	SourceJepsen2013   = "Jepsen-Grant et al. 2013, Vet Radiol Ultrasound 54:3-8"
	SourceBavegems2005 = "Bavegems et al. 2005, Vet Radiol Ultrasound 46:400-403"
	SourceMalcolm2018  = "Malcolm et al. 2018, J Am Vet Med Assoc 253:1038-1045"
)

// vhsRanges is the VHS table: the species first, then the breeds.
var vhsRanges = []RefRange{
	meanSD(SpeciesDog, "", 9.7, 0.5, 100, SourceBuchanan1995, true),
	meanSD(SpeciesCat, "", 7.5, 0.3, 100, SourceLitster2000, true),
	meanSD(SpeciesDog, "Boxer", 11.6, 0.8, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "Labrador Retriever", 10.8, 0.6, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "Cavalier King Charles Spaniel", 10.6, 0.5, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "Dobermann", 10.0, 0.6, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "German Shepherd Dog", 9.7, 0.7, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "Yorkshire Terrier", 9.7, 0.5, 0, SourceLamb2001, false),
	meanSD(SpeciesDog, "Pug", 10.7, 0.9, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Pomeranian", 10.5, 0.9, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Bulldog", 12.7, 1.7, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Boston Terrier", 11.7, 1.4, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Shih Tzu", 9.5, 0.6, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Lhasa Apso", 9.6, 0.75, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Dachshund", 9.7, 0.5, 0, SourceJepsen2013, false),
	meanSD(SpeciesDog, "Whippet", 11.0, 0.5, 44, SourceBavegems2005, false),
}

// vlasRanges is the VLAS table: the canine cut-off for left atrial
// enlargement of the cardiac v3 spec (below 2.5; 2.5 or more suggests
// enlargement), from the study that introduced VLAS, Malcolm et al. 2018
// (no breed figures). No feline VLAS range is listed: none is
// established that we could cite with confidence.
var vlasRanges = []RefRange{
	{Species: SpeciesDog, High: 2.5, Source: SourceMalcolm2018, Checked: false},
}

// breedAliases maps other spellings to the table's breed names.
var breedAliases = map[string]string{
	"labrador":              "Labrador Retriever",
	"lab":                   "Labrador Retriever",
	"cavalier":              "Cavalier King Charles Spaniel",
	"cavalier king charles": "Cavalier King Charles Spaniel",
	"ckcs":                  "Cavalier King Charles Spaniel",
	"king charles spaniel":  "Cavalier King Charles Spaniel",
	"doberman":              "Dobermann",
	"doberman pinscher":     "Dobermann",
	"german shepherd":       "German Shepherd Dog",
	"alsatian":              "German Shepherd Dog",
	"english bulldog":       "Bulldog",
	"british bulldog":       "Bulldog",
	"yorkie":                "Yorkshire Terrier",
	"shih-tzu":              "Shih Tzu",
	"lhasa":                 "Lhasa Apso",
	"dachshund (standard)":  "Dachshund",
	"miniature dachshund":   "Dachshund",
	"boston":                "Boston Terrier",
	"pomeranian (toy)":      "Pomeranian",
	"whippet (show)":        "Whippet",
}

// normBreed is a breed name for matching: lower case, single spaces.
func normBreed(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// CanonicalBreed is the table's name for a breed as typed or as DICOM's
// Patient Breed Description gives it, or "" when the table has no study
// of it.
func CanonicalBreed(breed string) string {
	b := normBreed(breed)
	if b == "" {
		return ""
	}
	if a, ok := breedAliases[b]; ok {
		return a
	}
	for _, r := range vhsRanges {
		if r.Breed != "" && normBreed(r.Breed) == b {
			return r.Breed
		}
	}
	return ""
}

// StudiedBreeds are the breeds of species sp with a published VHS range
// in the table, in table order (for the breed field's suggestions): a
// cat is not offered dog breeds. SpeciesUnknown gives every breed.
func StudiedBreeds(sp Species) []string {
	var out []string
	for _, r := range vhsRanges {
		if r.Breed != "" && (sp == SpeciesUnknown || r.Species == sp) {
			out = append(out, r.Breed)
		}
	}
	return out
}

// ReferenceRanges returns the whole table: VHS rows, then VLAS rows.
func ReferenceRanges() (vhs, vlas []RefRange) {
	return append([]RefRange(nil), vhsRanges...), append([]RefRange(nil), vlasRanges...)
}

// Reference is the ranges that apply to one patient.
type Reference struct {
	// VHS is the breed's range where a study exists, else the species'.
	VHS RefRange
	// VLAS is the species' cut-off; ok false where none is published
	// (cats).
	VLAS    RefRange
	HasVLAS bool
	// Note explains a fallback: the species not recorded, or a breed
	// without a study.
	Note string
}

// ReferenceFor chooses the ranges for a species and breed: the breed's
// VHS range where the table has one, else the species'. A patient whose
// species is not recorded gets the canine ranges (the cardiac model
// measures canine radiographs), with a note saying so.
func ReferenceFor(sp Species, breed string) Reference {
	var ref Reference
	if sp == SpeciesUnknown {
		sp = SpeciesDog
		ref.Note = "species not recorded: dog ranges used"
	}
	for _, r := range vhsRanges {
		if r.Species == sp && r.Breed == "" {
			ref.VHS = r
		}
	}
	if b := CanonicalBreed(breed); b != "" && sp == SpeciesDog {
		for _, r := range vhsRanges {
			if r.Breed == b {
				ref.VHS = r
			}
		}
	} else if strings.TrimSpace(breed) != "" && ref.Note == "" {
		ref.Note = fmt.Sprintf("no published range for %s: %s used", strings.TrimSpace(breed), ref.VHS.Scope())
	}
	for _, r := range vlasRanges {
		if r.Species == sp {
			ref.VLAS, ref.HasVLAS = r, true
		}
	}
	return ref
}

// VHSLabel is the VHS range as the screens and the report state it:
// "breed range 10.0-13.2 (Boxer; Lamb et al. 2001, ...)".
func (ref Reference) VHSLabel() string {
	who := ref.VHS.Breed
	if who == "" {
		who = string(ref.VHS.Species)
	}
	return fmt.Sprintf("%s %s (%s; %s)", ref.VHS.Scope(), ref.VHS.Describe(), who, ref.VHS.Source)
}

// VLASLabel is the VLAS range as stated, or that none is published.
func (ref Reference) VLASLabel() string {
	if !ref.HasVLAS {
		return "no published VLAS range for this species"
	}
	return fmt.Sprintf("reference %s (%s)", ref.VLAS.Describe(), ref.VLAS.Source)
}
