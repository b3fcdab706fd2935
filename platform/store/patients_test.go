package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestOlderDataDirectory: a database written before patient records,
// images and the audit trail (only the old buckets, history entries
// without seq) opens, lists its history with sequence numbers and finds
// its bare patient ids; the new buckets are added.
func TestOlderDataDirectory(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketKeys, bucketCustomers, bucketLedger, bucketUsage, bucketRecheck, bucketUSGLog} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		h, err := tx.CreateBucket(bucketHistory)
		if err != nil {
			return err
		}
		for seq, v := range map[uint64]string{
			1: `{"time":"2025-01-02T10:00:00Z","vhs":10.2,"vlas":2.1}`,
			2: `{"time":"2025-02-02T10:00:00Z","vhs":10.9,"vlas":null,"source":"desktop","edited":true,"model_vhs":10.4,"code":1,"confidence":"good","model_version":"v2","landmarks":[[1,2],[3,4],[5,6],[7,8],[9,10],[11,12],[13,14]]}`,
		} {
			if err := h.Put(append(join("desktop", "Old-Rex"), itob(seq)...), []byte(v)); err != nil {
				return err
			}
		}
		return h.SetSequence(2)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	got, err := s.History().ListPatient(ctx, "Old-Rex")
	if err != nil || len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 || *got[0].VHS != 10.2 || !got[1].Edited || got[1].HasImage {
		t.Fatalf("old history %+v %v", got, err)
	}
	if ids, err := s.Patients().PatientIDs(ctx, "rex", 0); err != nil || len(ids) != 1 || ids[0] != "Old-Rex" {
		t.Fatalf("ids %v %v", ids, err)
	}
	if _, err := s.Patients().Get(ctx, "Old-Rex"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("record of a bare id: %v", err)
	}
	if _, err := s.History().Image(ctx, "desktop", "Old-Rex", 2); !errors.Is(err, ErrNotFound) {
		t.Fatalf("image of an old entry: %v", err)
	}
	// New entries continue the old sequence.
	e, err := s.History().Add(ctx, "desktop", "Old-Rex", HistoryEntry{Time: time.Now()}, []byte("png"))
	if err != nil || e.Seq != 3 || !e.HasImage {
		t.Fatalf("add %+v %v", e, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestPatientRecordsAndAudit(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	w := 12.5
	for _, p := range []Patient{
		{ID: "Rex-1", Name: "Rex", Species: "dog", WeightKg: &w},
		{ID: "Tom-2", Name: "Tom", Species: "cat"},
		{ID: "B-3", Name: "Rexana"},
	} {
		if err := s.Patients().Put(ctx, p, AuditEvent{Time: time.Unix(1, 0), PatientID: p.ID, Action: "patient_created"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Patients().Put(ctx, Patient{}, AuditEvent{}); err == nil {
		t.Fatal("a record without an id was stored")
	}
	p, err := s.Patients().Get(ctx, "Rex-1")
	if err != nil || p.Name != "Rex" || *p.WeightKg != 12.5 {
		t.Fatalf("get %+v %v", p, err)
	}
	for _, tc := range []struct {
		q     string
		limit int
		want  string
	}{{"rex", 0, "B-3,Rex-1"}, {"TOM", 0, "Tom-2"}, {"", 2, "B-3,Rex-1"}, {"zzz", 0, ""}} {
		got, err := s.Patients().Search(ctx, tc.q, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids string
		for i, p := range got {
			if i > 0 {
				ids += ","
			}
			ids += p.ID
		}
		if ids != tc.want {
			t.Errorf("Search(%q) = %s, want %s", tc.q, ids, tc.want)
		}
	}
	// Hiding rewrites the entry and appends the audit event together.
	e, err := s.History().Add(ctx, "desktop", "Rex-1", HistoryEntry{Time: time.Unix(5, 0)}, []byte{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if img, err := s.History().Image(ctx, "desktop", "Rex-1", e.Seq); err != nil || len(img) != 3 {
		t.Fatalf("image %v %v", img, err)
	}
	h, err := s.History().Hide(ctx, "desktop", "Rex-1", e.Seq, Hidden{Time: time.Unix(6, 0), Reason: "duplicate"}, AuditEvent{PatientID: "Rex-1", Action: "hidden", Entry: e.Seq})
	if err != nil || h.Hidden == nil || h.Hidden.Reason != "duplicate" {
		t.Fatalf("hide %+v %v", h, err)
	}
	if _, err := s.History().Hide(ctx, "desktop", "Rex-1", 99, Hidden{}, AuditEvent{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("hide unknown: %v", err)
	}
	list, _ := s.History().List(ctx, "desktop", "Rex-1")
	if len(list) != 1 || list[0].Hidden == nil || list[0].Seq != e.Seq {
		t.Fatalf("after hide %+v", list)
	}
	trail, err := s.Audit().ListPatient(ctx, "Rex-1")
	if err != nil || len(trail) != 2 || trail[1].Action != "hidden" || trail[1].Seq <= trail[0].Seq {
		t.Fatalf("audit %+v %v", trail, err)
	}
	if other, _ := s.Audit().ListPatient(ctx, "Rex"); len(other) != 0 {
		t.Fatalf("audit of a prefix %+v", other)
	}
}

func TestUSGLogHide(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	e, err := s.USGLog().Append(ctx, USGLogEntry{Customer: "desktop", UUID: "Tom", Inputs: []byte(`{}`), Outputs: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.USGLog().Hide(ctx, e.Seq, Hidden{Time: time.Unix(9, 0), Reason: "wrong cat"}, AuditEvent{PatientID: "Tom", Action: "hidden"})
	if err != nil || h.Hidden == nil || h.Hidden.Reason != "wrong cat" {
		t.Fatalf("hide %+v %v", h, err)
	}
	if _, err := s.USGLog().Hide(ctx, 99, Hidden{}, AuditEvent{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("hide unknown: %v", err)
	}
	got, err := s.USGLog().ListPatient(ctx, "Tom")
	if err != nil || len(got) != 1 || got[0].Hidden == nil || string(got[0].Inputs) != `{}` {
		t.Fatalf("after hide %+v %v", got, err)
	}
	if trail, _ := s.Audit().ListPatient(ctx, "Tom"); len(trail) != 1 {
		t.Fatalf("audit %+v", trail)
	}
}
