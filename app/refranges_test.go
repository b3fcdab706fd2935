package app

import (
	"math"
	"strings"
	"testing"
)

func TestReferenceFor(t *testing.T) {
	for _, tc := range []struct {
		sp           Species
		breed        string
		vhs, vlas    string
		source, note string
		hasVLAS      bool
		scope        string
	}{
		{SpeciesDog, "", "8.7-10.7", "below 2.5", "Buchanan", "", true, "dog range"},
		{SpeciesCat, "", "6.9-8.1", "", "Litster", "", false, "cat range"},
		{SpeciesDog, "boxer", "10.0-13.2", "below 2.5", "Lamb", "", true, "breed range"},
		{SpeciesDog, "CKCS", "9.6-11.6", "below 2.5", "Lamb", "", true, "breed range"},
		{SpeciesDog, "English Bulldog", "9.3-16.1", "below 2.5", "Jepsen-Grant", "", true, "breed range"},
		{SpeciesDog, "Whippet", "10.0-12.0", "below 2.5", "Bavegems", "", true, "breed range"},
		{SpeciesDog, "Beagle", "8.7-10.7", "below 2.5", "Buchanan", "no published range for Beagle", true, "dog range"},
		{SpeciesUnknown, "Boxer", "10.0-13.2", "below 2.5", "Lamb", "species not recorded", true, "breed range"},
		{SpeciesCat, "Boxer", "6.9-8.1", "", "Litster", "no published range for Boxer", false, "cat range"},
	} {
		ref := ReferenceFor(tc.sp, tc.breed)
		if ref.VHS.Describe() != tc.vhs || !strings.Contains(ref.VHS.Source, tc.source) || ref.HasVLAS != tc.hasVLAS || ref.VHS.Scope() != tc.scope ||
			tc.hasVLAS && ref.VLAS.Describe() != tc.vlas || !strings.Contains(ref.Note, tc.note) || (tc.note == "") != (ref.Note == "") {
			t.Errorf("ReferenceFor(%q, %q) = %+v", tc.sp, tc.breed, ref)
		}
	}
}

// TestRangeTable: every row is mean ± 2 SD of its study, names a source
// documented in docs/reference-ranges.md, and every breed is reachable.
func TestRangeTable(t *testing.T) {
	vhs, vlas := ReferenceRanges()
	for _, r := range append(vhs, vlas...) {
		if r.Source == "" || r.High <= r.Low {
			t.Errorf("row %+v", r)
		}
		if r.SD > 0 && (math.Abs(r.Low-(r.Mean-2*r.SD)) > 1e-9 || math.Abs(r.High-(r.Mean+2*r.SD)) > 1e-9) {
			t.Errorf("row %+v is not mean ± 2 SD", r)
		}
	}
	if len(StudiedBreeds(SpeciesDog)) == 0 || len(StudiedBreeds(SpeciesUnknown)) != len(StudiedBreeds(SpeciesDog))+len(StudiedBreeds(SpeciesCat)) {
		t.Errorf("breeds: dog %v, cat %v, any %v", StudiedBreeds(SpeciesDog), StudiedBreeds(SpeciesCat), StudiedBreeds(SpeciesUnknown))
	}
	for _, sp := range []Species{SpeciesDog, SpeciesCat} {
		for _, b := range StudiedBreeds(sp) {
			if CanonicalBreed(strings.ToUpper(b)) != b || ReferenceFor(sp, b).VHS.Breed != b || ReferenceFor(sp, b).VHS.Species != sp {
				t.Errorf("%s breed %q not found by name for its species", sp, b)
			}
		}
	}
	for _, s := range []struct {
		in   string
		want Species
	}{{"Canine", SpeciesDog}, {"DOG", SpeciesDog}, {"canis familiaris", SpeciesDog}, {"Feline", SpeciesCat}, {"felis catus", SpeciesCat}, {"cat", SpeciesCat}, {"caterpillar", SpeciesUnknown}, {"", SpeciesUnknown}} {
		if got := ParseSpecies(s.in); got != s.want {
			t.Errorf("ParseSpecies(%q) = %q, want %q", s.in, got, s.want)
		}
	}
}

func TestFindings(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	boxer, cat := ReferenceFor(SpeciesDog, "Boxer"), ReferenceFor(SpeciesCat, "")
	for _, tc := range []struct {
		got, want string
	}{
		{HeartSize(f(11.24), ReferenceFor(SpeciesDog, "")).Line, "Heart size: enlarged (VHS 11.2; dog range 8.7-10.7)"},
		{HeartSize(f(11.24), boxer).Line, "Heart size: normal (VHS 11.2; breed range 10.0-13.2)"},
		{HeartSize(f(6.5), cat).Line, "Heart size: small (VHS 6.5; cat range 6.9-8.1)"},
		{HeartSize(nil, cat).Line, "Heart size: not measured (cat range 6.9-8.1)"},
		{LeftAtrium(f(2.6), boxer).Line, "Left atrium: enlarged (VLAS 2.6; reference below 2.5)"},
		{LeftAtrium(f(1.9), boxer).Line, "Left atrium: normal (VLAS 1.9; reference below 2.5)"},
		{LeftAtrium(f(1.9), cat).Line, "Left atrium: VLAS 1.9 (no published range for this species)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}
