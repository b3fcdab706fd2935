// Package store persists VetLens's API state in one bbolt file: API keys,
// customers, the append-only billing ledger, cardiac measurement history
// (with the measured images), the USG prediction log, patient records and
// the audit trail. It follows the data-service style of
// portainer's bbolt layer: one small service per entity, each owning its
// buckets, all sharing one *bolt.DB. Business rules live in package app;
// the store only keeps records and runs app's decisions atomically.
package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"vetlens/app/repo"
)

// FileName is the database file inside a data directory.
const FileName = "vetlens.db"

// Bucket names.
var (
	bucketKeys      = []byte("api_keys")       // prefix -> Key
	bucketCustomers = []byte("customers")      // name -> Customer
	bucketLedger    = []byte("ledger")         // seq (8 bytes BE) -> Event
	bucketUsage     = []byte("ledger_usage")   // join(customer, YYYY-MM) + seq -> empty (index over ledger)
	bucketRecheck   = []byte("ledger_recheck") // join(customer, uuid) -> last billed time (RFC3339Nano)
	bucketLedgerIDs = []byte("ledger_ids")     // event id (idempotency key) -> seq (index over ledger)
	// join(customer, uuid) -> free rechecks since the pair was last billed (8 bytes BE)
	bucketRecheckPairs = []byte("recheck_pairs")
	// join(key prefix, YYYY-MM) -> free rechecks given to the key in the month (8 bytes BE)
	bucketRecheckUsage = []byte("recheck_usage")
	bucketHistory      = []byte("history") // join(customer, uuid) + seq -> HistoryEntry
	bucketUSGLog       = []byte("usg_log") // seq -> USGLogEntry
	// history_images: the history key -> the measured image (PNG).
	bucketHistoryImages = []byte("history_images")
	bucketPatients      = []byte("patients") // patient id -> Patient
	bucketAudit         = []byte("audit")    // seq -> AuditEvent
)

// ErrLocked means another process holds the database file.
var ErrLocked = errors.New("database is held by another process")

// The records and their errors are the application's (app/repo); the
// names here are aliases, so store.Event is repo.Event.
type (
	Key          = repo.Key
	Customer     = repo.Customer
	Event        = repo.Event
	BillState    = repo.BillState
	BillRequest  = repo.BillRequest
	Decide       = repo.Decide
	HistoryEntry = repo.HistoryEntry
	PatientEntry = repo.PatientEntry
	USGLogEntry  = repo.USGLogEntry
	Patient      = repo.Patient
	AuditEvent   = repo.AuditEvent
	Hidden       = repo.Hidden
)

// Errors the repositories return.
var (
	ErrNotFound = repo.ErrNotFound
	ErrExists   = repo.ErrExists
)

// Each service implements its repository port.
var (
	_ repo.Keys      = (*KeyService)(nil)
	_ repo.Customers = (*CustomerService)(nil)
	_ repo.Ledger    = (*LedgerService)(nil)
	_ repo.History   = (*HistoryService)(nil)
	_ repo.USGLog    = (*USGLogService)(nil)
	_ repo.Patients  = (*PatientService)(nil)
	_ repo.Audit     = (*AuditService)(nil)
)

// Repos is the store as the application's repositories (app.Deps).
func (s *Store) Repos() repo.Repos {
	return repo.Repos{Keys: s.keys, Customers: s.customers, Ledger: s.ledger, History: s.history, USGLog: s.usgLog, Patients: s.patients, Audit: s.audit}
}

// Store is the open database and its entity services.
type Store struct {
	db        *bolt.DB
	keys      *KeyService
	customers *CustomerService
	ledger    *LedgerService
	history   *HistoryService
	usgLog    *USGLogService
	patients  *PatientService
	audit     *AuditService
}

// Open opens (creating when needed) DIR/vetlens.db with mode 0600. It fails
// with ErrLocked after lockTimeout when another process holds the file.
func Open(dir string, lockTimeout time.Duration) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("store: open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketKeys, bucketCustomers, bucketLedger, bucketUsage, bucketRecheck, bucketLedgerIDs, bucketRecheckPairs, bucketRecheckUsage, bucketHistory, bucketUSGLog, bucketHistoryImages, bucketPatients, bucketAudit} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: init %s: %w", path, err)
	}
	// Group commit: concurrent ledger writes share one fsync. The delay
	// only bounds how long a lone call waits for company.
	db.MaxBatchDelay = 500 * time.Microsecond
	db.MaxBatchSize = 64
	s := &Store{db: db}
	s.keys = &KeyService{db: db}
	s.customers = &CustomerService{db: db}
	s.ledger = &LedgerService{db: db}
	s.history = &HistoryService{db: db}
	s.usgLog = &USGLogService{db: db}
	s.patients = &PatientService{db: db, store: s}
	s.audit = &AuditService{db: db}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Path is the database file path.
func (s *Store) Path() string { return s.db.Path() }

// Keys is the API key service.
func (s *Store) Keys() *KeyService { return s.keys }

// Customers is the customer service.
func (s *Store) Customers() *CustomerService { return s.customers }

// Ledger is the billing ledger service.
func (s *Store) Ledger() *LedgerService { return s.ledger }

// History is the cardiac history service.
func (s *Store) History() *HistoryService { return s.history }

// USGLog is the USG prediction log service.
func (s *Store) USGLog() *USGLogService { return s.usgLog }

// Patients is the patient record service.
func (s *Store) Patients() *PatientService { return s.patients }

// Audit is the audit trail service.
func (s *Store) Audit() *AuditService { return s.audit }

// Check runs bbolt's consistency check and returns the first problem found.
func (s *Store) Check() error {
	return s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("store: check: %w", err)
		}
		return nil
	})
}

func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// join builds a composite key: each part is preceded by its length (2
// bytes), so parts may hold any byte and a prefix of whole parts selects
// exactly the keys beginning with those parts. Parts longer than 65535
// bytes are an error the callers prevent by validating lengths.
func join(parts ...string) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.BigEndian.AppendUint16(out, uint16(len(p)))
		out = append(out, p...)
	}
	return out
}

// MaxPartLen is the longest customer name, uuid or key prefix the store
// accepts in a composite key (repo.MaxPartLen).
const MaxPartLen = repo.MaxPartLen

func checkParts(parts ...string) error {
	if err := repo.CheckParts(parts...); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

func put(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", k, err)
	}
	return b.Put(k, data)
}

// ctxErr returns the context's error so long transactions are not started
// for requests that are already gone.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}
