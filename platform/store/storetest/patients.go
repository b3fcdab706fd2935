// The patients' part of the contract: records, queries, ids and audit.

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

func testPatientQueries(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	addEntry(t, r, "desktop", "Rex-1", repo.HistoryEntry{Time: time.Unix(30, 0), VHS: fp(10), Edited: true, ModelVHS: fp(10.4), Source: "desktop"})
	addEntry(t, r, "lan", "Rex-1", repo.HistoryEntry{Time: time.Unix(10, 0), VHS: fp(9)})
	addEntry(t, r, "lan", "Rex-10", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(11)})
	addEntry(t, r, "lan", "Bella", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(8)})
	addEntry(t, r, "lan", "bob", repo.HistoryEntry{Time: time.Unix(20, 0), VHS: fp(8)})
	for _, u := range []string{"Rex-1", "", "Tom"} {
		_, err := r.USGLog.Append(ctx, repo.USGLogEntry{Customer: "desktop", UUID: u, Inputs: json.RawMessage(`{}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
	}
	got, err := r.History.ListPatient(ctx, "Rex-1")
	must(t, err)
	if len(got) != 2 || got[0].Customer != "lan" || *got[0].VHS != 9 || got[1].Customer != "desktop" || !got[1].Edited || *got[1].ModelVHS != 10.4 {
		t.Fatalf("ListPatient Rex-1 = %+v", got)
	}
	if none, err := r.History.ListPatient(ctx, "Rex"); err != nil || len(none) != 0 || none == nil {
		t.Fatalf("prefix must not match: %+v %v", none, err)
	}
	for _, tc := range []struct {
		query string
		limit int
		want  string
	}{
		{"rex", 0, "Rex-1,Rex-10"},
		{"REX-1", 1, "Rex-1"},
		// Byte order: upper case before lower case.
		{"", 0, "Bella,Rex-1,Rex-10,Tom,bob"},
		{"", 2, "Bella,Rex-1"},
		{"zzz", 0, ""},
	} {
		ids, err := r.Patients.PatientIDs(ctx, tc.query, tc.limit)
		must(t, err)
		if joinIDs(ids) != tc.want {
			t.Errorf("PatientIDs(%q, %d) = %v, want %s", tc.query, tc.limit, ids, tc.want)
		}
	}
}

// testRecordIDs: ledger events, history entries and USG log entries
// carry distinct UUIDv7 ids, which sort in the order they were made.
func testRecordIDs(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	var ids []string
	for i := 0; i < 3; i++ {
		ev, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03"}, billAll(repo.Event{Time: t0}))
		must(t, err)
		ids = append(ids, ev.ID)
		addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: t0})
		h, err := r.History.List(ctx, "a", "dog")
		must(t, err)
		ids = append(ids, h[len(h)-1].ID)
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Customer: "a", Inputs: json.RawMessage(`{}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
		ids = append(ids, e.ID)
		time.Sleep(2 * time.Millisecond) // UUIDv7 orders by millisecond
	}
	seen := map[string]bool{}
	for i, s := range ids {
		id, err := uuid.Parse(s)
		if err != nil || id.Version() != 7 || seen[s] {
			t.Fatalf("id %d %q: version %d, %v, duplicate %v", i, s, id.Version(), err, seen[s])
		}
		seen[s] = true
	}
	// The 2 ms pauses separate the rounds; within a round the order is
	// the order of creation too (the generator is monotonic).
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("ids not in creation order: %v", ids)
	}
}

func testPartLimit(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	long := strings.Repeat("x", repo.MaxPartLen+1)
	ok := strings.Repeat("x", repo.MaxPartLen)
	for _, tc := range []struct {
		name string
		f    func(string) error
	}{
		{"customer", func(s string) error { return r.Customers.Put(ctx, repo.Customer{Name: s, Tier: "paygo", Created: t0}) }},
		{"history uuid", func(s string) error {
			_, err := r.History.Add(ctx, "a", s, repo.HistoryEntry{Time: t0}, nil)
			return err
		}},
		{"bill customer", func(s string) error {
			_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: s, Month: "2026-03"}, billAll(repo.Event{Time: t0}))
			return err
		}},
		{"recheck uuid", func(s string) error {
			_, _, _, err := r.Ledger.Bill(ctx, repo.BillRequest{Customer: "a", Month: "2026-03", RecheckUUID: s}, billAll(repo.Event{Time: t0}))
			return err
		}},
	} {
		if err := tc.f(ok); err != nil {
			t.Errorf("%s of %d bytes: %v", tc.name, len(ok), err)
		}
		if err := tc.f(long); err == nil || !strings.Contains(err.Error(), fmt.Sprint(repo.MaxPartLen)) {
			t.Errorf("%s of %d bytes: %v, want the limit error", tc.name, len(long), err)
		}
	}
}

func testPatientRecordsAndAudit(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	w := 12.5
	for _, p := range []repo.Patient{
		{ID: "Rex-1", Name: "Rex", Species: "dog", WeightKg: &w, Created: t0, Updated: t0},
		{ID: "Tom-2", Name: "Tom", Species: "cat", Created: t0, Updated: t0},
		{ID: "B-3", Name: "Rexana", Created: t0, Updated: t0},
	} {
		must(t, r.Patients.Put(ctx, p, repo.AuditEvent{Time: t0, PatientID: p.ID, Action: "patient_created"}))
	}
	if err := r.Patients.Put(ctx, repo.Patient{}, repo.AuditEvent{}); err == nil {
		t.Fatal("a record without an id was stored")
	}
	if _, err := r.Patients.Get(ctx, "Rex"); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("missing record: %v, want ErrNotFound", err)
	}
	upd := repo.Patient{ID: "Rex-1", Name: "Rex II", Species: "dog", Breed: "Cavalier King Charles Spaniel", Sex: "male_neutered",
		BirthDate: "2019-05-01", WeightKg: &w, Owner: "Müller", Created: t0, Updated: t0.Add(time.Hour)}
	must(t, r.Patients.Put(ctx, upd, repo.AuditEvent{Time: t0.Add(time.Hour), PatientID: "Rex-1", Action: "patient_updated", Detail: "name"}))
	p, err := r.Patients.Get(ctx, "Rex-1")
	p.Created, p.Updated = p.Created.UTC(), p.Updated.UTC()
	if err != nil || !reflect.DeepEqual(p, upd) {
		t.Fatalf("get = %+v, %v; want %+v", p, err, upd)
	}
	for _, tc := range []struct {
		q     string
		limit int
		want  string
	}{{"rex", 0, "B-3,Rex-1"}, {"TOM", 0, "Tom-2"}, {" rex ii ", 0, "Rex-1"}, {"", 2, "B-3,Rex-1"}, {"zzz", 0, ""}} {
		got, err := r.Patients.Search(ctx, tc.q, tc.limit)
		must(t, err)
		ids := make([]patient.ID, len(got))
		for i, p := range got {
			ids[i] = p.ID
		}
		if joinIDs(ids) != tc.want {
			t.Errorf("Search(%q, %d) = %v, want %s", tc.q, tc.limit, ids, tc.want)
		}
	}
	// A record alone makes its id findable.
	if ids, err := r.Patients.PatientIDs(ctx, "tom", 0); err != nil || joinIDs(ids) != "Tom-2" {
		t.Fatalf("PatientIDs(tom) = %v, %v", ids, err)
	}
	e, err := r.Audit.Append(ctx, repo.AuditEvent{Time: t0, PatientID: "Tom-2", Action: "corrected", Customer: "desktop", Entry: 7, Reason: "landmark"})
	if err != nil || e.Seq == 0 {
		t.Fatalf("append %+v, %v", e, err)
	}
	trail, err := r.Audit.ListPatient(ctx, "Rex-1")
	if err != nil || len(trail) != 2 || trail[0].Action != "patient_created" || trail[1].Action != "patient_updated" || trail[1].Detail != "name" || trail[1].Seq <= trail[0].Seq {
		t.Fatalf("audit of Rex-1 = %+v, %v", trail, err)
	}
	tom, err := r.Audit.ListPatient(ctx, "Tom-2")
	if err != nil || len(tom) != 2 || tom[1].Seq != e.Seq || tom[1].Entry != 7 || tom[1].Reason != "landmark" || !tom[1].Time.Equal(t0) {
		t.Fatalf("audit of Tom-2 = %+v, %v", tom, err)
	}
	if other, err := r.Audit.ListPatient(ctx, "Rex"); err != nil || other == nil || len(other) != 0 {
		t.Fatalf("audit of a prefix = %+v, %v; want empty", other, err)
	}
}

// joinIDs is the ids joined with commas.
func joinIDs(ids []patient.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}

// testOlderPatientIDs: reads do not apply the patient id rule again
// (patient.ID). Versions before the identifier rule was tightened stored
// ids it now refuses (a bidi override; an API uuid over 128 bytes): their
// records, history and audit trail still read back under those ids.
func testOlderPatientIDs(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	for _, id := range []patient.ID{"old\u202eid", patient.ID("old-" + strings.Repeat("u", 200))} {
		must(t, r.Patients.Put(ctx, repo.Patient{ID: id, Name: "Old", Created: t0, Updated: t0},
			repo.AuditEvent{Time: t0, PatientID: id, Action: "patient_created"}))
		if _, err := r.History.Add(ctx, "desktop", id.String(), repo.HistoryEntry{Time: t0}, nil); err != nil {
			t.Fatalf("history for %q: %v", id, err)
		}
		if p, err := r.Patients.Get(ctx, id); err != nil || p.ID != id {
			t.Fatalf("Get(%q) = %+v, %v", id, p, err)
		}
		if h, err := r.History.ListPatient(ctx, id); err != nil || len(h) != 1 {
			t.Fatalf("History.ListPatient(%q) = %+v, %v", id, h, err)
		}
		if a, err := r.Audit.ListPatient(ctx, id); err != nil || len(a) != 1 || a[0].PatientID != id {
			t.Fatalf("Audit.ListPatient(%q) = %+v, %v", id, a, err)
		}
	}
	ids, err := r.Patients.PatientIDs(ctx, "old", 0)
	if want := "old-" + strings.Repeat("u", 200) + ",old\u202eid"; err != nil || joinIDs(ids) != want {
		t.Fatalf("PatientIDs(old) = %q, %v; want %q", ids, err, want)
	}
	if ps, err := r.Patients.Search(ctx, "old", 0); err != nil || len(ps) != 2 {
		t.Fatalf("Search(old) = %+v, %v", ps, err)
	}
}
