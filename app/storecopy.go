package app

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"vetlens/app/repo"
)

// CopyCounts is what CopyStore copied.
type CopyCounts struct {
	Keys, Customers, Events, History, USGLog, Patients, Audit int
}

// AuditCopied is the audit action CopyStore records for each patient
// record it copies.
const AuditCopied = "copied"

// ErrStoreNotEmpty is returned by CopyStore when the destination already
// holds records.
var ErrStoreNotEmpty = errors.New("the destination store is not empty")

// CopyStore copies every record from src into dst through the
// repository ports, so a clinic's embedded database can join a group's
// PostgreSQL database (or the other way round). dst must be empty (no
// keys, ledger events, history or USG log entries): the ledger's monthly
// ranks are recounted as the events are appended in their order, which
// is only the source's when nothing else is there.
//
// Keys, customers (those named by a key or a ledger event), ledger events
// (in order, with their times, tiers, rates and ids; an event from
// before ids existed gets a UUIDv7 of its own time), history entries
// (with their images, corrections and hidden marks), the audit trail,
// patient records and USG log entries are copied; sequence numbers are
// the destination's (references between history entries and from the
// audit trail follow them).
func CopyStore(ctx context.Context, src, dst repo.Repos) (CopyCounts, error) {
	var n CopyCounts
	if err := checkEmpty(ctx, dst); err != nil {
		return n, err
	}
	keys, err := src.Keys.List(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: read keys: %w", err)
	}
	events, err := src.Ledger.Events(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: read ledger: %w", err)
	}
	names := map[string]bool{}
	for _, k := range keys {
		names[k.Customer] = true
	}
	for _, e := range events {
		names[e.Customer] = true
	}
	sorted := make([]string, 0, len(names))
	for c := range names {
		sorted = append(sorted, c)
	}
	sort.Strings(sorted)
	for _, name := range sorted {
		c, err := src.Customers.Get(ctx, name)
		if errors.Is(err, repo.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("copy: read customer %q: %w", name, err)
		}
		if err := dst.Customers.Put(ctx, c); err != nil {
			return n, fmt.Errorf("copy: customer %q: %w", name, err)
		}
		n.Customers++
	}
	for _, k := range keys {
		if err := dst.Keys.Create(ctx, k); err != nil {
			return n, fmt.Errorf("copy: key %s: %w", k.Prefix, err)
		}
		n.Keys++
	}
	for _, e := range events {
		if err := copyEvent(ctx, dst.Ledger, e); err != nil {
			return n, fmt.Errorf("copy: ledger event %d: %w", e.Seq, err)
		}
		n.Events++
	}
	ids, err := src.Patients.PatientIDs(ctx, "", 0)
	if err != nil {
		return n, fmt.Errorf("copy: read patients: %w", err)
	}
	// History entries in the order they were added (their Seq), so that
	// a correction follows the entry it supersedes; the destination
	// numbers them anew and seqs maps the numbers.
	seqs := map[uint64]uint64{}
	for _, id := range ids {
		entries, err := src.History.ListPatient(ctx, id)
		if err != nil {
			return n, fmt.Errorf("copy: read history of %q: %w", id, err)
		}
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].Seq < entries[j].Seq })
		for _, e := range entries {
			var img []byte
			if e.HasImage {
				if img, err = src.History.Image(ctx, e.Customer, id.String(), e.Seq); err != nil {
					return n, fmt.Errorf("copy: image of history entry %d: %w", e.Seq, err)
				}
			}
			old := e.Seq
			h := e.HistoryEntry
			h.Seq = 0
			if h.Supersedes != 0 {
				h.Supersedes = seqs[h.Supersedes]
			}
			added, err := dst.History.Add(ctx, e.Customer, id.String(), h, img)
			if err != nil {
				return n, fmt.Errorf("copy: history of %q: %w", id, err)
			}
			seqs[old] = added.Seq
			n.History++
		}
	}
	// The audit trail, then the records: storing a record appends one
	// more event, saying it was copied.
	for _, id := range ids {
		trail, err := src.Audit.ListPatient(ctx, id)
		if err != nil {
			return n, fmt.Errorf("copy: read audit of %q: %w", id, err)
		}
		for _, a := range trail {
			a.Seq = 0
			if a.Entry != 0 {
				a.Entry = seqs[a.Entry]
			}
			if _, err := dst.Audit.Append(ctx, a); err != nil {
				return n, fmt.Errorf("copy: audit of %q: %w", id, err)
			}
			n.Audit++
		}
	}
	records, err := src.Patients.Search(ctx, "", 0)
	if err != nil {
		return n, fmt.Errorf("copy: read patient records: %w", err)
	}
	for _, p := range records {
		if err := dst.Patients.Put(ctx, p, repo.AuditEvent{Time: p.Updated, PatientID: p.ID, Action: AuditCopied,
			Detail: "copied with vetlens store copy"}); err != nil {
			return n, fmt.Errorf("copy: patient %q: %w", p.ID, err)
		}
		n.Patients++
	}
	logs, err := src.USGLog.List(ctx)
	if err != nil {
		return n, fmt.Errorf("copy: read usg log: %w", err)
	}
	for _, e := range logs {
		seq := e.Seq
		if e.ID == "" {
			e.ID = repo.NewIDAt(e.Time)
		}
		e.Seq = 0
		if _, err := dst.USGLog.Append(ctx, e); err != nil {
			return n, fmt.Errorf("copy: usg log %d: %w", seq, err)
		}
		n.USGLog++
	}
	return n, nil
}

// copyEvent appends e to the ledger as it was billed: the same month
// (of its time), recheck key (cardiac calls with a uuid) and id.
func copyEvent(ctx context.Context, l repo.Ledger, e repo.Event) error {
	id := e.ID
	if id == "" {
		id = repo.NewIDAt(e.Time)
	}
	recheck := ""
	if e.Service != "usg" {
		recheck = e.UUID
	}
	want := e
	_, _, billed, err := l.Bill(ctx, repo.BillRequest{Customer: e.Customer, Month: Month(e.Time), RecheckUUID: recheck, IdempotencyKey: id},
		func(repo.BillState) (repo.Event, bool, error) {
			ev := want
			ev.Seq, ev.MonthlyUsage, ev.ID = 0, 0, ""
			return ev, true, nil
		})
	if err == nil && !billed {
		err = fmt.Errorf("not appended")
	}
	return err
}

// checkEmpty refuses a destination that holds records.
func checkEmpty(ctx context.Context, r repo.Repos) error {
	keys, err := r.Keys.List(ctx)
	if err != nil {
		return fmt.Errorf("copy: read destination: %w", err)
	}
	events, err := r.Ledger.Events(ctx)
	if err != nil {
		return fmt.Errorf("copy: read destination: %w", err)
	}
	logs, err := r.USGLog.List(ctx)
	if err != nil {
		return fmt.Errorf("copy: read destination: %w", err)
	}
	ids, err := r.Patients.PatientIDs(ctx, "", 1) // records, history and the USG log
	if err != nil {
		return fmt.Errorf("copy: read destination: %w", err)
	}
	if len(keys)+len(events)+len(logs)+len(ids) > 0 {
		return fmt.Errorf("copy: %w (%d keys, %d ledger events, %d USG log entries, patients: %v)", ErrStoreNotEmpty, len(keys), len(events), len(logs), len(ids) > 0)
	}
	return nil
}
