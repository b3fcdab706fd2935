package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"vetlens/app/patient"
	"vetlens/app/repo"
)

// history is repo.History on the history table (and history_images).
type history struct{ db *pgxpool.Pool }

// Add appends an entry for the pair and returns it with its Seq; img,
// when not empty, is kept beside it in the same transaction.
func (s history) Add(ctx context.Context, customer, uuid string, e repo.HistoryEntry, img []byte) (repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return e, err
	}
	if e.ID == "" {
		e.ID = repo.NewID()
	}
	e.HasImage = len(img) > 0
	e.Seq = 0 // the column is the number; the JSON never carries it
	doc, err := json.Marshal(e)
	if err != nil {
		return e, fmt.Errorf("postgres: encode history entry: %w", err)
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := tx.QueryRow(ctx, `INSERT INTO history (id, customer, uuid, time, entry) VALUES ($1, $2, $3, $4, $5) RETURNING seq`,
		e.ID, customer, uuid, e.Time, doc).Scan(&e.Seq); err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	if len(img) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO history_images (history_seq, image) VALUES ($1, $2)`, e.Seq, img); err != nil {
			return e, fmt.Errorf("postgres: history image: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return e, fmt.Errorf("postgres: add history: %w", err)
	}
	return e, nil
}

// decodeEntry reads an entry's JSON and gives it its number.
func decodeEntry(seq uint64, doc []byte) (repo.HistoryEntry, error) {
	var e repo.HistoryEntry
	if err := json.Unmarshal(doc, &e); err != nil {
		return e, fmt.Errorf("decode history entry: %w", err)
	}
	e.Seq = seq
	return e, nil
}

// List returns the pair's entries in the order they were added; an
// empty, non-nil slice when there are none.
func (s history) List(ctx context.Context, customer, uuid string) ([]repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT seq, entry FROM history WHERE customer = $1 AND uuid = $2 ORDER BY seq`, customer, uuid)
	if err != nil {
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.HistoryEntry, error) {
		var (
			seq uint64
			doc []byte
		)
		if err := r.Scan(&seq, &doc); err != nil {
			return repo.HistoryEntry{}, err
		}
		return decodeEntry(seq, doc)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: history: %w", err)
	}
	if out == nil {
		out = []repo.HistoryEntry{}
	}
	return out, nil
}

// ListPatient returns every customer's entries for uuid, oldest first
// (by time, then by the order they were added).
func (s history) ListPatient(ctx context.Context, uuid patient.ID) ([]repo.PatientEntry, error) {
	rows, err := s.db.Query(ctx, `SELECT customer, seq, entry FROM history WHERE uuid = $1 ORDER BY time, seq`, uuid.String())
	if err != nil {
		return nil, fmt.Errorf("postgres: patient history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (repo.PatientEntry, error) {
		var (
			p   repo.PatientEntry
			seq uint64
			doc []byte
		)
		if err := r.Scan(&p.Customer, &seq, &doc); err != nil {
			return p, err
		}
		e, err := decodeEntry(seq, doc)
		p.HistoryEntry = e
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: patient history: %w", err)
	}
	// Times equal to the microsecond keep their order of addition;
	// finer differences (kept in the entry) decide the rest.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if out == nil {
		out = []repo.PatientEntry{}
	}
	return out, nil
}

// Image returns the image kept with an entry, or repo.ErrNotFound.
func (s history) Image(ctx context.Context, customer, uuid string, seq uint64) ([]byte, error) {
	if err := checkParts(customer, uuid); err != nil {
		return nil, err
	}
	var img []byte
	err := s.db.QueryRow(ctx, `SELECT i.image FROM history_images i JOIN history h ON h.seq = i.history_seq
		WHERE h.seq = $1 AND h.customer = $2 AND h.uuid = $3`, seq, customer, uuid).Scan(&img)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("image of history entry %d", seq))
	}
	return img, nil
}

// Hide marks the entry hidden and appends the audit event in one
// transaction; repo.ErrNotFound when there is no such entry.
func (s history) Hide(ctx context.Context, customer, uuid string, seq uint64, h repo.Hidden, audit repo.AuditEvent) (repo.HistoryEntry, error) {
	if err := checkParts(customer, uuid); err != nil {
		return repo.HistoryEntry{}, err
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return repo.HistoryEntry{}, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	defer tx.Rollback(ctx)
	var doc []byte
	err = tx.QueryRow(ctx, `SELECT entry FROM history WHERE seq = $1 AND customer = $2 AND uuid = $3 FOR UPDATE`, seq, customer, uuid).Scan(&doc)
	if err != nil {
		return repo.HistoryEntry{}, notFound(err, fmt.Sprintf("history entry %d", seq))
	}
	e, err := decodeEntry(seq, doc)
	if err != nil {
		return e, fmt.Errorf("postgres: %w", err)
	}
	e.Hidden = &h
	stored := e
	stored.Seq = 0
	if doc, err = json.Marshal(stored); err != nil {
		return e, fmt.Errorf("postgres: encode history entry: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE history SET entry = $2 WHERE seq = $1`, seq, doc); err != nil {
		return e, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	if _, err := appendAudit(ctx, tx, audit); err != nil {
		return e, err
	}
	if err := tx.Commit(ctx); err != nil {
		return e, fmt.Errorf("postgres: hide history entry: %w", err)
	}
	return e, nil
}
