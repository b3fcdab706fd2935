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
