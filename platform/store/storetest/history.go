// The cardiac history's and the USG log's part of the contract.

package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"vetlens/app/repo"
)

func testHistoryIsolation(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: time.Unix(1, 0), VHS: fp(9)})
	addEntry(t, r, "a", "dog", repo.HistoryEntry{Time: time.Unix(2, 0), VHS: fp(10)})
	addEntry(t, r, "b", "dog", repo.HistoryEntry{Time: time.Unix(3, 0), VHS: fp(11)})
	addEntry(t, r, "a", "dogx", repo.HistoryEntry{Time: time.Unix(3, 0), VHS: fp(12)})
	for _, tc := range []struct {
		customer, uuid string
		want           []float64
	}{{"a", "dog", []float64{9, 10}}, {"b", "dog", []float64{11}}, {"a", "do", nil}, {"c", "dog", nil}} {
		got, err := r.History.List(ctx, tc.customer, tc.uuid)
		if err != nil || got == nil || len(got) != len(tc.want) {
			t.Fatalf("%s/%s: %+v %v", tc.customer, tc.uuid, got, err)
		}
		for i, e := range got {
			if *e.VHS != tc.want[i] {
				t.Errorf("%s/%s[%d] = %v want %v", tc.customer, tc.uuid, i, *e.VHS, tc.want[i])
			}
		}
	}
}

// testHistoryRoundTrip: every field of an entry comes back as stored,
// including nanoseconds of its time and nil against zero values.
func testHistoryRoundTrip(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	full := repo.HistoryEntry{
		Time: time.Date(2026, 5, 1, 8, 30, 0, 123456789, time.UTC), VHS: fp(10.25), VLAS: fp(2.1),
		Source: "desktop", Kind: "edited", Edited: true, ModelVHS: fp(10.4), ModelVLAS: nil,
		Code: 2, Confidence: "high", ModelVersion: "3.1.0", Landmarks: [][2]float64{{1.5, 2.25}, {3, 4}, {5, 6}, {7, 8}, {9, 10}, {11, 12}, {13, 14.125}},
	}
	bare := repo.HistoryEntry{Time: full.Time.Add(time.Second)}
	addEntry(t, r, "a", "Rex ポチ", full)
	addEntry(t, r, "a", "Rex ポチ", bare)
	got, err := r.History.List(ctx, "a", "Rex ポチ")
	must(t, err)
	if len(got) != 2 {
		t.Fatalf("got %d entries", len(got))
	}
	for i, want := range []repo.HistoryEntry{full, bare} {
		if _, err := uuid.Parse(got[i].ID); err != nil {
			t.Errorf("entry %d id %q: %v", i, got[i].ID, err)
		}
		g := got[i]
		if g.Seq == 0 || i > 0 && g.Seq <= got[i-1].Seq {
			t.Errorf("entry %d seq %d", i, g.Seq)
		}
		g.ID, g.Seq = "", 0
		if !g.Time.Equal(want.Time) {
			t.Errorf("entry %d time %v, want %v", i, g.Time, want.Time)
		}
		g.Time = want.Time
		if !reflect.DeepEqual(g, want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, want)
		}
	}
}

func testUSGLog(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	// Inputs and outputs come back as the same JSON text, key order and
	// number spelling kept (insignificant space may go).
	in := json.RawMessage(`{"z": 1, "a":[1.50,2]}`)
	compact := func(b []byte) string {
		var out bytes.Buffer
		if err := json.Compact(&out, b); err != nil {
			return "invalid JSON: " + err.Error()
		}
		return out.String()
	}
	var appended []repo.USGLogEntry
	for i, u := range []string{"cat", "", "cat"} {
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Time: t0.Add(time.Duration(i) * time.Second), Customer: "a", KeyPrefix: "k1", ClinicCode: "C1", UUID: u, Inputs: in, Outputs: json.RawMessage(`{}`), ModelVersion: "1.6"})
		must(t, err)
		if e.Seq == 0 || e.ID == "" || i > 0 && e.Seq <= appended[i-1].Seq {
			t.Fatalf("append %d: %+v", i, e)
		}
		appended = append(appended, e)
	}
	l, err := r.USGLog.List(ctx)
	must(t, err)
	if len(l) != 3 {
		t.Fatalf("list: %+v", l)
	}
	for i, e := range l {
		w := appended[i]
		if e.Seq != w.Seq || e.ID != w.ID || !e.Time.Equal(w.Time) || e.Customer != "a" || e.KeyPrefix != "k1" || e.ClinicCode != "C1" ||
			e.UUID != w.UUID || compact(e.Inputs) != `{"z":1,"a":[1.50,2]}` || compact(e.Outputs) != "{}" || e.ModelVersion != "1.6" {
			t.Errorf("entry %d = %+v, want %+v", i, e, w)
		}
	}
	p, err := r.USGLog.ListPatient(ctx, "cat")
	if err != nil || len(p) != 2 || p[0].Seq != appended[0].Seq || p[1].Seq != appended[2].Seq {
		t.Fatalf("ListPatient(cat) = %+v, %v", p, err)
	}
	if none, err := r.USGLog.ListPatient(ctx, "ca"); err != nil || none == nil || len(none) != 0 {
		t.Fatalf("ListPatient(ca) = %+v, %v; want empty", none, err)
	}
}

func testHistoryImagesAndHide(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	img := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	e, err := r.History.Add(ctx, "desktop", "Rex-1", repo.HistoryEntry{Time: t0, VHS: fp(10)}, img)
	if err != nil || e.Seq == 0 || !e.HasImage {
		t.Fatalf("add with image: %+v, %v", e, err)
	}
	plain := addEntry(t, r, "desktop", "Rex-1", repo.HistoryEntry{Time: t0.Add(time.Minute)})
	other := addEntry(t, r, "lan", "Rex-1", repo.HistoryEntry{Time: t0})
	if plain.HasImage || plain.Seq == e.Seq || other.Seq == plain.Seq {
		t.Fatalf("entries %+v %+v %+v: want distinct seqs, no image", e, plain, other)
	}
	if got, err := r.History.Image(ctx, "desktop", "Rex-1", e.Seq); err != nil || !bytes.Equal(got, img) {
		t.Fatalf("image = %v, %v", got, err)
	}
	for _, tc := range []struct {
		customer, uuid string
		seq            uint64
	}{{"desktop", "Rex-1", plain.Seq}, {"lan", "Rex-1", e.Seq}, {"desktop", "Rex", e.Seq}, {"desktop", "Rex-1", 9999}} {
		if _, err := r.History.Image(ctx, tc.customer, tc.uuid, tc.seq); !errors.Is(err, repo.ErrNotFound) {
			t.Errorf("Image(%s, %s, %d): %v, want ErrNotFound", tc.customer, tc.uuid, tc.seq, err)
		}
	}
	h := repo.Hidden{Time: t0.Add(time.Hour), Reason: "duplicate"}
	got, err := r.History.Hide(ctx, "desktop", "Rex-1", e.Seq, h, repo.AuditEvent{Time: h.Time, PatientID: "Rex-1", Action: "hidden", Customer: "desktop", Entry: e.Seq, Reason: "duplicate"})
	if err != nil || got.Hidden == nil || got.Hidden.Reason != "duplicate" || got.Seq != e.Seq || *got.VHS != 10 {
		t.Fatalf("hide = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		customer, uuid string
		seq            uint64
	}{{"desktop", "Rex-1", 9999}, {"lan", "Rex-1", e.Seq}} {
		if _, err := r.History.Hide(ctx, tc.customer, tc.uuid, tc.seq, h, repo.AuditEvent{PatientID: "Rex-1", Action: "hidden"}); !errors.Is(err, repo.ErrNotFound) {
			t.Errorf("Hide(%s, %s, %d): %v, want ErrNotFound", tc.customer, tc.uuid, tc.seq, err)
		}
	}
	list, err := r.History.List(ctx, "desktop", "Rex-1")
	if err != nil || len(list) != 2 || list[0].Seq != e.Seq || list[0].Hidden == nil || !list[0].Hidden.Time.Equal(h.Time) ||
		list[1].Hidden != nil || !list[0].HasImage || list[0].ID != e.ID {
		t.Fatalf("after hide: %+v, %v", list, err)
	}
	// The image stays; the audit trail has the one hide (the refused
	// ones appended nothing).
	if _, err := r.History.Image(ctx, "desktop", "Rex-1", e.Seq); err != nil {
		t.Fatalf("image after hide: %v", err)
	}
	trail, err := r.Audit.ListPatient(ctx, "Rex-1")
	if err != nil || len(trail) != 1 || trail[0].Action != "hidden" || trail[0].Entry != e.Seq {
		t.Fatalf("audit = %+v, %v", trail, err)
	}
}

// testUSGLogHide: a hidden screening keeps its place and values in the
// log, carries the mark, and the audit trail records it.
func testUSGLogHide(t *testing.T, r repo.Repos) {
	ctx := context.Background()
	var seqs []uint64
	for i := 0; i < 2; i++ {
		e, err := r.USGLog.Append(ctx, repo.USGLogEntry{Time: t0, Customer: "desktop", UUID: "cat", Inputs: json.RawMessage(`{"BUN":27}`), Outputs: json.RawMessage(`{}`)})
		must(t, err)
		seqs = append(seqs, e.Seq)
	}
	h := repo.Hidden{Time: t0.Add(time.Hour), Reason: "wrong patient"}
	got, err := r.USGLog.Hide(ctx, seqs[0], h, repo.AuditEvent{Time: h.Time, PatientID: "cat", Action: "hidden", Reason: h.Reason})
	if err != nil || got.Seq != seqs[0] || got.Hidden == nil || got.Hidden.Reason != h.Reason || got.UUID != "cat" {
		t.Fatalf("hide = %+v, %v", got, err)
	}
	if _, err := r.USGLog.Hide(ctx, seqs[1]+100, h, repo.AuditEvent{PatientID: "cat", Action: "hidden"}); !errors.Is(err, repo.ErrNotFound) {
		t.Fatalf("hide of a missing entry: %v, want ErrNotFound", err)
	}
	list, err := r.USGLog.ListPatient(ctx, "cat")
	if err != nil || len(list) != 2 || list[0].Hidden == nil || !list[0].Hidden.Time.Equal(h.Time) || list[1].Hidden != nil || string(list[0].Inputs) != `{"BUN":27}` {
		t.Fatalf("after hide: %+v, %v", list, err)
	}
	trail, err := r.Audit.ListPatient(ctx, "cat")
	if err != nil || len(trail) != 1 || trail[0].Reason != h.Reason {
		t.Fatalf("audit = %+v, %v", trail, err)
	}
}
