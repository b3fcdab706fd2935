package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"vetlens/app/repo"
)

func TestNormalizePatient(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	w := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name    string
		in      repo.Patient
		want    repo.Patient
		wantErr string
	}{
		{name: "tidied", in: repo.Patient{ID: " Rex-1 ", Name: "  Rex   the dog ", Species: "Canine", Breed: "labrador", Sex: "Male Neutered", BirthDate: "2020-02-29", WeightKg: w(31.5), Owner: " Jane  Smith"},
			want: repo.Patient{ID: "Rex-1", Name: "Rex the dog", Species: "dog", Breed: "Labrador Retriever", Sex: "male neutered", BirthDate: "2020-02-29", WeightKg: w(31.5), Owner: "Jane Smith"}},
		{name: "unknown breed kept as typed", in: repo.Patient{ID: "Tom", Species: "cat", Breed: "Maine Coon"}, want: repo.Patient{ID: "Tom", Species: "cat", Breed: "Maine Coon"}},
		{name: "no id", in: repo.Patient{Name: "Rex"}, wantErr: "patient ID is required"},
		{name: "horse", in: repo.Patient{ID: "H", Species: "horse"}, wantErr: `species "horse"`},
		{name: "sex", in: repo.Patient{ID: "H", Sex: "x"}, wantErr: `sex "x"`},
		{name: "date form", in: repo.Patient{ID: "H", BirthDate: "01/02/2020"}, wantErr: "YYYY-MM-DD"},
		{name: "future birth", in: repo.Patient{ID: "H", BirthDate: "2027-01-01"}, wantErr: "in the future"},
		{name: "weight", in: repo.Patient{ID: "H", WeightKg: w(0)}, wantErr: "weight 0 kg"},
		{name: "control char", in: repo.Patient{ID: "H", Owner: "a\x00b"}, wantErr: "patient owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizePatient(tc.in, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || KindOf(err) != KindInvalid {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if patientSummary(got) != patientSummary(tc.want) || got.ID != tc.want.ID {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSavePatientOncePerChangeAndAudit(t *testing.T) {
	ctx := context.Background()
	s, clk := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	p := repo.Patient{ID: "Rex-1", Name: "Rex", Species: "dog", Breed: "Boxer"}
	first, err := s.Patients.SavePatient(ctx, p)
	if err != nil || len(first.Changed) != 1 || first.Changed[0] != "created" {
		t.Fatalf("create: %+v %v", first, err)
	}
	clk.Add(time.Hour)
	again, err := s.Patients.SavePatient(ctx, p)
	if err != nil || len(again.Changed) != 0 || !again.Patient.Updated.Equal(first.Patient.Updated) {
		t.Fatalf("unchanged save wrote: %+v %v", again, err)
	}
	p.Owner = "Jane Smith"
	upd, err := s.Patients.SavePatient(ctx, p)
	if err != nil || len(upd.Changed) != 1 || !strings.Contains(upd.Changed[0], `owner "" -> "Jane Smith"`) || !upd.Patient.Created.Equal(first.Patient.Created) {
		t.Fatalf("update: %+v %v", upd, err)
	}
	trail, err := s.Patients.AuditTrail(ctx, "Rex-1")
	if err != nil || len(trail) != 2 || trail[0].Action != "patient_created" || trail[1].Action != "patient_updated" {
		t.Fatalf("audit %+v %v", trail, err)
	}
	// Found by name and by id, with ids known only from history.
	if _, err := s.repos.History.Add(ctx, DesktopCustomer, "Old-7", repo.HistoryEntry{Time: clk.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{{"rex", "Rex-1"}, {"REX-", "Rex-1"}, {"smith", "Rex-1"}, {"Jane S", "Rex-1"}, {"old", "Old-7"}, {"", "Old-7,Rex-1"}, {"zzz", ""}} {
		ms, err := s.Patients.FindPatients(ctx, tc.q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.Patient.ID.String())
		}
		if strings.Join(ids, ",") != tc.want {
			t.Errorf("FindPatients(%q) = %v, want %s", tc.q, ids, tc.want)
		}
	}
	if ms, _ := s.Patients.FindPatients(ctx, "Old", 10); ms[0].HasRecord || ms[0].Label() != "Old-7" {
		t.Fatalf("bare id %+v", ms[0])
	}
	if ms, _ := s.Patients.FindPatients(ctx, "Rex", 10); ms[0].Label() != "Rex-1  Rex (dog, Boxer)" {
		t.Fatalf("label %q", ms[0].Label())
	}
}

func TestPatientFromTags(t *testing.T) {
	got := PatientFromTags(PatientTags{PatientID: " 4821 ", Name: "Smith^Rex", Species: "Canine", Breed: "Boxer", Sex: "M", Neutered: "ALTERED",
		BirthDate: "20210115", WeightKg: 31.5, ResponsiblePerson: "Smith^Jane^^Dr."})
	if got.ID != "4821" || got.Name != "Rex" || got.Species != "dog" || got.Breed != "Boxer" || got.Sex != SexMaleNeutered ||
		got.BirthDate != "2021-01-15" || *got.WeightKg != 31.5 || got.Owner != "Dr. Jane Smith" {
		t.Fatalf("%+v", got)
	}
	for _, tc := range []struct {
		tags PatientTags
		want string
	}{
		{PatientTags{Name: "Tom", Species: "Feline", Sex: "F", Neutered: "ALTERED"}, "Tom, cat, female spayed"},
		{PatientTags{Name: "Bella^", Species: "Canis lupus familiaris", Sex: "O", BirthDate: "2021"}, "Bella, dog"},
		{PatientTags{Species: "Equine"}, ""},
		{PatientTags{Name: "Rex Smith", Species: "dog", BirthDate: "2021-01-15", ResponsiblePerson: "Jane Smith"}, "Rex Smith, dog, 2021-01-15, Jane Smith"},
	} {
		if s := patientSummary(PatientFromTags(tc.tags)); s != tc.want {
			t.Errorf("%+v: %q, want %q", tc.tags, s, tc.want)
		}
	}
}

func TestPrefillPatient(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestService(t, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	tags := PatientTags{PatientID: "4821", Name: "Smith^Rex", Species: "Canine", Breed: "Boxer", Sex: "M", BirthDate: "20210115", ResponsiblePerson: "Smith^Jane"}
	res, err := s.Patients.PrefillPatient(ctx, tags)
	if err != nil || !res.Created || res.Patient.Name != "Rex" || res.Patient.Breed != "Boxer" || res.Patient.Owner != "Jane Smith" || len(res.Conflicts) != 0 {
		t.Fatalf("first prefill %+v %v", res, err)
	}
	// The clinic corrects the record; the next image does not overwrite
	// it, fills what is missing and says where it differs.
	p := res.Patient
	p.Name = "Rexie"
	if _, err := s.Patients.SavePatient(ctx, p); err != nil {
		t.Fatal(err)
	}
	tags.WeightKg = 30
	tags.Species = "Equine"
	tags.BirthDate = "20990101"
	res, err = s.Patients.PrefillPatient(ctx, tags)
	if err != nil || res.Created || res.Patient.Name != "Rexie" || res.Patient.WeightKg == nil || *res.Patient.WeightKg != 30 || res.Patient.Species != "dog" {
		t.Fatalf("second prefill %+v %v", res, err)
	}
	if len(res.Conflicts) != 1 || !strings.Contains(res.Conflicts[0], `name: record "Rexie", image "Rex"`) {
		t.Fatalf("conflicts %q", res.Conflicts)
	}
	if strings.Join(res.Ignored, ";") != `species "Equine" (VetLens records dogs and cats);birth date 2099-01-01 (in the future)` {
		t.Fatalf("ignored %q", res.Ignored)
	}
	if len(res.Changed) != 1 || !strings.HasPrefix(res.Changed[0], "weight") {
		t.Fatalf("changed %q", res.Changed)
	}
	if _, err := s.Patients.PrefillPatient(ctx, PatientTags{Name: "Rex"}); KindOf(err) != KindInvalid {
		t.Fatalf("no id: %v", err)
	}
}

func TestAge(t *testing.T) {
	on := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		born string
		want string
		ok   bool
	}{
		{"2026-02-01", "1 month", true}, {"2025-03-01", "1 year", true}, {"2021-01-15", "5 years 1 month", true},
		{"2026-02-15", "0 months", true}, {"", "", false}, {"2027-01-01", "", false},
	} {
		m, ok := Age(tc.born, on)
		if ok != tc.ok || ok && AgeText(m) != tc.want {
			t.Errorf("Age(%q) = %d %v (%q), want %q", tc.born, m, ok, AgeText(m), tc.want)
		}
	}
}

func repoPatient(id PatientID, species string) repo.Patient {
	return repo.Patient{ID: id, Species: species}
}
