// Package repo is the application's storage port: the records VetLens
// keeps (API keys, customers, the billing ledger, cardiac measurement
// history, the USG prediction log, patient records and their audit
// trail) and one repository interface per
// entity. Package app works on these interfaces only; a storage adapter
// implements them (platform/store on bbolt, platform/store/postgres on
// PostgreSQL; platform/store/storetest is the contract both pass). ui and the HTTP adapter see
// the records through app, never the adapter.
//
// The records' JSON form is how the bbolt adapter stores them.
package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"vetlens/app/patient"
)

// Errors the repositories return (match with errors.Is).
var (
	// ErrNotFound is returned when a record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists is returned when creating a record whose id is taken.
	ErrExists = errors.New("already exists")
)

// MaxPartLen is the longest customer name, patient uuid or key prefix a
// repository accepts as part of a record's key (an adapter refuses longer
// ones with an error; the front doors' own limits are far lower).
const MaxPartLen = 1024

// CheckParts returns an error for a key part longer than MaxPartLen.
func CheckParts(parts ...string) error {
	for _, p := range parts {
		if len(p) > MaxPartLen {
			return fmt.Errorf("key part of %d bytes exceeds %d", len(p), MaxPartLen)
		}
	}
	return nil
}

// NewID returns a new record id: a UUIDv7 (RFC 9562), whose leading 48
// bits are the Unix time in milliseconds, so ids sort by creation time.
// Ledger events, history entries and USG log entries carry one.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does.
		panic(fmt.Sprintf("repo: new UUIDv7: %v", err))
	}
	return id.String()
}

// NewIDAt returns a UUIDv7 whose time is t instead of now (random
// otherwise): an id for a record made at t that had none, so it sorts
// among the others by its own time.
func NewIDAt(t time.Time) string {
	id, err := uuid.NewRandom()
	if err != nil {
		panic(fmt.Sprintf("repo: new UUID: %v", err))
	}
	ms := uint64(t.UnixMilli())
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i))
	}
	id[6] = id[6]&0x0f | 0x70 // version 7; the variant bits are NewRandom's
	return id.String()
}

// Repos is every repository the application needs.
type Repos struct {
	Keys      Keys
	Customers Customers
	Ledger    Ledger
	History   History
	USGLog    USGLog
	Patients  Patients
	Audit     Audit
}

// Complete reports whether every repository is set.
func (r Repos) Complete() bool {
	return r.Keys != nil && r.Customers != nil && r.Ledger != nil && r.History != nil && r.USGLog != nil && r.Patients != nil && r.Audit != nil
}

// Keys stores API keys by prefix.
type Keys interface {
	// Create stores a new key; ErrExists when its prefix is taken.
	Create(ctx context.Context, k Key) error
	// Get returns the key with the prefix, or ErrNotFound.
	Get(ctx context.Context, prefix string) (Key, error)
	// List returns every key.
	List(ctx context.Context) ([]Key, error)
	// Revoke marks the key revoked at t and returns it; ErrNotFound.
	Revoke(ctx context.Context, prefix string, t time.Time) (Key, error)
}

// Customers stores customers by name.
type Customers interface {
	// Get returns the customer, or ErrNotFound.
	Get(ctx context.Context, name string) (Customer, error)
	// Put creates or replaces the customer.
	Put(ctx context.Context, c Customer) error
}

// Ledger is the append-only billing ledger.
type Ledger interface {
	// Bill reads the state for req, calls decide and, when it says so,
	// appends the event, atomically: concurrent calls for one customer
	// (in this process or another one sharing the database) see each
	// other's events. It returns once the event is durable. decide may
	// run more than once and must have no side effects. A request whose
	// IdempotencyKey is already in the ledger appends nothing and returns
	// the recorded event (billed) without calling decide.
	Bill(ctx context.Context, req BillRequest, decide Decide) (Event, BillState, bool, error)
	// MonthlyUsage is the customer's billable events in month (YYYY-MM).
	MonthlyUsage(ctx context.Context, customer, month string) (int, error)
	// MonthlyCharges is the customer's billable events in month and the
	// sum of their rates in US cents.
	MonthlyCharges(ctx context.Context, customer, month string) (int, int64, error)
	// Events returns the whole ledger in append order.
	Events(ctx context.Context) ([]Event, error)
	// RecheckCount is how many free rechecks (Event.Recheck) the key
	// with this prefix was given in month (YYYY-MM).
	RecheckCount(ctx context.Context, keyPrefix, month string) (int, error)
}

// History keeps cardiac measurements per (customer, uuid). Entries are
// never deleted: a correction is a new entry naming the one it
// supersedes, a removal hides the entry with a reason.
type History interface {
	// Add appends an entry for the pair and returns it with its Seq;
	// img, when not empty, is the measured image (PNG), kept beside it.
	Add(ctx context.Context, customer, uuid string, e HistoryEntry, img []byte) (HistoryEntry, error)
	// List returns the pair's entries, oldest first.
	List(ctx context.Context, customer, uuid string) ([]HistoryEntry, error)
	// ListPatient returns every customer's entries for uuid, oldest
	// first.
	ListPatient(ctx context.Context, uuid patient.ID) ([]PatientEntry, error)
	// Image returns the image kept with an entry; ErrNotFound when none
	// was kept (API entries, entries older than images).
	Image(ctx context.Context, customer, uuid string, seq uint64) ([]byte, error)
	// Hide marks the entry hidden and appends the audit event, in one
	// transaction; ErrNotFound when there is no such entry.
	Hide(ctx context.Context, customer, uuid string, seq uint64, h Hidden, audit AuditEvent) (HistoryEntry, error)
}

// USGLog is the append-only USG prediction log.
type USGLog interface {
	// Append stores the entry and returns it with its sequence number.
	Append(ctx context.Context, e USGLogEntry) (USGLogEntry, error)
	// List returns the log in append order.
	List(ctx context.Context) ([]USGLogEntry, error)
	// ListPatient returns the uuid's entries in append order.
	ListPatient(ctx context.Context, uuid patient.ID) ([]USGLogEntry, error)
	// Hide marks the entry hidden and appends the audit event, in one
	// transaction; ErrNotFound when there is no such entry.
	Hide(ctx context.Context, seq uint64, h Hidden, audit AuditEvent) (USGLogEntry, error)
}

// Patients keeps patient records and finds patients across the records,
// the cardiac history and the USG log (older data directories hold bare
// patient ids with history and no record). The ids an adapter returns
// are the stored ones, not parsed again (see patient.ID): a record
// written under an older, looser rule still reads back.
type Patients interface {
	// PatientIDs returns up to limit distinct patient ids that contain
	// query (case-insensitive), sorted.
	PatientIDs(ctx context.Context, query string, limit int) ([]patient.ID, error)
	// Get returns the record of a patient id, or ErrNotFound.
	Get(ctx context.Context, id patient.ID) (Patient, error)
	// Put creates or replaces a record and appends the audit event, in
	// one transaction.
	Put(ctx context.Context, p Patient, audit AuditEvent) error
	// Search returns up to limit records whose id or name contains
	// query (case-insensitive), sorted by id.
	Search(ctx context.Context, query string, limit int) ([]Patient, error)
}

// Audit is the append-only trail of changes to patient records and
// their history (edits, corrections, hidden entries).
type Audit interface {
	// Append stores the event and returns it with its Seq.
	Append(ctx context.Context, e AuditEvent) (AuditEvent, error)
	// ListPatient returns the patient's events in append order.
	ListPatient(ctx context.Context, patientID patient.ID) ([]AuditEvent, error)
}

// Patient is a patient's record. Fields are free text as entered (or
// read from DICOM) except Species ("dog", "cat" or empty), Sex (see
// app.Sex) and BirthDate ("YYYY-MM-DD" or empty).
type Patient struct {
	ID        patient.ID `json:"id"`
	Name      string     `json:"name,omitempty"`
	Species   string     `json:"species,omitempty"`
	Breed     string     `json:"breed,omitempty"`
	Sex       string     `json:"sex,omitempty"`
	BirthDate string     `json:"birth_date,omitempty"`
	WeightKg  *float64   `json:"weight_kg,omitempty"`
	Owner     string     `json:"owner,omitempty"`
	// Created and Updated are when the record was first and last saved.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// AuditEvent is one change in the audit trail.
type AuditEvent struct {
	Seq       uint64     `json:"seq"`
	Time      time.Time  `json:"time"`
	PatientID patient.ID `json:"patient_id"`
	// Action is "patient_created", "patient_updated", "corrected",
	// "hidden" or "patient_mismatch_kept" (a study filed under a patient
	// its DICOM tags contradict, acknowledged by the clinician).
	Action string `json:"action"`
	// Customer and Entry name the history entry concerned (0: none).
	Customer string `json:"customer,omitempty"`
	Entry    uint64 `json:"entry,omitempty"`
	// Reason is the clinician's reason (required for hidden).
	Reason string `json:"reason,omitempty"`
	// Detail says what changed, in words.
	Detail string `json:"detail,omitempty"`
}

// Hidden records that a history entry was removed from view.
type Hidden struct {
	Time   time.Time `json:"time"`
	Reason string    `json:"reason"`
}

// Key is a stored API key. The secret itself is never stored: only the
// SHA-256 hash of the whole key string. Prefix is the key's public id.
type Key struct {
	Prefix   string    `json:"prefix"`
	Hash     []byte    `json:"hash"` // SHA-256 of the full key
	Customer string    `json:"customer"`
	Created  time.Time `json:"created"`
	// Revoked is when the key was revoked; nil while active.
	Revoked *time.Time `json:"revoked,omitempty"`
}

// Active reports whether the key has not been revoked.
func (k Key) Active() bool { return k.Revoked == nil }

// Customer is a billed customer. Tier is the contracted minimum tier
// (paygo unless agreed otherwise); the enterprise rates apply once the
// customer reaches the enterprise tier (by volume or by contract).
type Customer struct {
	Name string `json:"name"`
	Tier string `json:"tier"`
	// EnterpriseSingleCents and EnterpriseSessionCents are the
	// customer's custom enterprise rates in US cents; zero means the
	// service default.
	EnterpriseSingleCents  int64     `json:"enterprise_single_cents,omitempty"`
	EnterpriseSessionCents int64     `json:"enterprise_session_cents,omitempty"`
	Created                time.Time `json:"created"`
}

// UnmarshalJSON reads a customer, also as written before amounts were
// whole cents: "enterprise_single" and "enterprise_session" in dollars
// (float64) become the nearest whole number of cents where the cents
// fields are absent.
func (c *Customer) UnmarshalJSON(b []byte) error {
	type plain Customer
	var v struct {
		plain
		LegacySingle  *float64 `json:"enterprise_single"`
		LegacySession *float64 `json:"enterprise_session"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Customer(v.plain)
	if v.LegacySingle != nil && c.EnterpriseSingleCents == 0 {
		c.EnterpriseSingleCents = dollarsToCents(*v.LegacySingle)
	}
	if v.LegacySession != nil && c.EnterpriseSessionCents == 0 {
		c.EnterpriseSessionCents = dollarsToCents(*v.LegacySession)
	}
	return nil
}

// Event is one billable event in the append-only ledger.
type Event struct {
	Seq uint64 `json:"seq"`
	// ID is the billable response's idempotency key (a UUIDv7, NewID),
	// unique in the ledger; empty in events written before it existed.
	ID        string    `json:"id,omitempty"`
	Time      time.Time `json:"time"`
	Customer  string    `json:"customer"`
	KeyPrefix string    `json:"key_prefix"`
	// Service is "cardiac" or "usg".
	Service string `json:"service"`
	// CallType is "single" or "session" for cardiac, "usg" for USG.
	CallType string `json:"call_type"`
	UUID     string `json:"uuid,omitempty"`
	Tier     string `json:"tier"`
	// RateCents is the amount charged, in US cents.
	RateCents int64 `json:"rate_cents"`
	// MonthlyUsage is the customer's billable count in the month including
	// this event.
	MonthlyUsage int `json:"monthly_usage"`
	// Recheck, set by a Decide that does not bill, records the outcome as
	// a free recheck of BillRequest.RecheckUUID for KeyPrefix: the store
	// counts it for the (customer, uuid) pair until the pair is billed
	// again (BillState.Rechecks) and for the key in the month
	// (Ledger.RecheckCount). It is never part of the ledger.
	Recheck bool `json:"-"`
}

// UnmarshalJSON reads an event, also as written before amounts were
// whole cents: a "rate" in dollars (a float64) without "rate_cents"
// becomes the nearest whole number of cents.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	var v struct {
		plain
		RateCents  *int64   `json:"rate_cents"` // shadows plain's
		LegacyRate *float64 `json:"rate"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Event(v.plain)
	switch {
	case v.RateCents != nil:
		e.RateCents = *v.RateCents
	case v.LegacyRate != nil:
		e.RateCents = dollarsToCents(*v.LegacyRate)
	}
	return nil
}

// dollarsToCents rounds a legacy float64 dollar amount to cents.
func dollarsToCents(d float64) int64 { return int64(math.Round(d * 100)) }

// BillState is what a billing decision needs, read inside the same
// transaction that appends the event.
type BillState struct {
	// MonthlyUsage is the customer's billable events in Month so far
	// (excluding the one being decided).
	MonthlyUsage int
	// LastBilled is when the (customer, RecheckUUID) pair was last billed;
	// zero when never or when no uuid was given.
	LastBilled time.Time
	// Rechecks is how many free rechecks (Event.Recheck) the pair was
	// given since it was last billed.
	Rechecks int
}

// BillRequest identifies whose state a decision reads.
type BillRequest struct {
	Customer string
	// IdempotencyKey identifies the billable response (NewID); the event
	// appended gets it as its ID, and a retried request with the same key
	// bills at most once. Empty: the store makes one.
	IdempotencyKey string
	// Month is the billing period, "YYYY-MM" (UTC).
	Month string
	// RecheckUUID, when set, selects BillState.LastBilled, and an appended
	// event records the time for the pair.
	RecheckUUID string
	// USGLog, when set, is appended to the USG prediction log in the same
	// transaction (its Seq is filled in), so a USG call costs one commit.
	USGLog *USGLogEntry
}

// Decide decides from the state whether to append ev; Seq and
// MonthlyUsage are filled in by the store.
type Decide func(BillState) (ev Event, bill bool, err error)

// Study is the DICOM study a desktop measurement was made on, kept so
// that its report can go back to the PACS later: the Study Instance UID,
// the Patient ID and name as the file wrote them, the Accession Number
// and the study date (YYYYMMDD).
type Study struct {
	InstanceUID string `json:"instance_uid"`
	PatientID   string `json:"patient_id,omitempty"`
	PatientName string `json:"patient_name,omitempty"`
	Accession   string `json:"accession,omitempty"`
	Date        string `json:"date,omitempty"`
}

// HistoryEntry is one measurement kept for a (customer, uuid) pair.
type HistoryEntry struct {
	// Seq is the entry's number, unique in the store (filled in on
	// Add and on reading; 0 in records built before storing).
	Seq uint64 `json:"seq,omitempty"`
	// ID is the record's id (a UUIDv7, NewID), set by the store when
	// empty; empty in entries written before it existed.
	ID   string    `json:"id,omitempty"`
	Time time.Time `json:"time"`
	// VHS and VLAS are the values in effect: the clinician's when the
	// landmarks were edited, else the model's.
	VHS  *float64 `json:"vhs"`
	VLAS *float64 `json:"vlas"`

	// The fields below are kept for measurements saved from the desktop
	// (older records and API records leave them empty).

	// Source is "api" or "desktop"; empty means api.
	Source string `json:"source,omitempty"`
	// Kind is how the values were obtained: "model", "edited" (the
	// model's landmarks corrected by the clinician) or "manual" (placed
	// by hand). Empty in records written before it existed: those read
	// as "edited" when Edited is set, else "model" (app.EntryKind).
	Kind string `json:"kind,omitempty"`
	// Edited is set when the values are the clinician's (kinds edited
	// and manual, so that older versions still mark them); ModelVHS and
	// ModelVLAS then hold the model's own values (nil where it had none).
	Edited    bool     `json:"edited,omitempty"`
	ModelVHS  *float64 `json:"model_vhs,omitempty"`
	ModelVLAS *float64 `json:"model_vlas,omitempty"`
	// Code and Confidence are the model's result code and confidence.
	Code       int    `json:"code,omitempty"`
	Confidence string `json:"confidence,omitempty"`
	// ModelVersion is the cardiac model version that measured it.
	ModelVersion string `json:"model_version,omitempty"`
	// Landmarks are the 7 landmarks in effect, [x, y] in pixels of the
	// measured image, in the spec's class order.
	Landmarks [][2]float64 `json:"landmarks,omitempty"`
	// HasImage is set when the measured image is kept beside the entry
	// (History.Image), so that it can be reopened and corrected.
	HasImage bool `json:"has_image,omitempty"`
	// Study is the DICOM study measured (desktop saves of a DICOM file
	// with a Study Instance UID); nil otherwise.
	Study *Study `json:"study,omitempty"`
	// ImageSHA256 is the hex SHA-256 of the measured image's pixels as
	// kept (desktop saves): a save of the same image with the same
	// landmarks and kind is a repeat, not a new measurement.
	ImageSHA256 string `json:"image_sha256,omitempty"`
	// Supersedes is the Seq of the entry this one corrects (same
	// customer and patient); 0 for a first measurement.
	Supersedes uint64 `json:"supersedes,omitempty"`
	// Hidden is set once the entry was removed from view, with why.
	Hidden *Hidden `json:"hidden,omitempty"`
}

// PatientEntry is a history entry with the customer it was recorded for.
type PatientEntry struct {
	Customer string `json:"customer"`
	HistoryEntry
}

// USGLogEntry is one logged USG prediction.
type USGLogEntry struct {
	Seq uint64 `json:"seq"`
	// ID is the record's id (a UUIDv7, NewID), set by the store when
	// empty; empty in entries written before it existed.
	ID           string          `json:"id,omitempty"`
	Time         time.Time       `json:"time"`
	Customer     string          `json:"customer"`
	KeyPrefix    string          `json:"key_prefix"`
	ClinicCode   string          `json:"clinic_code,omitempty"`
	UUID         string          `json:"uuid,omitempty"`
	Inputs       json.RawMessage `json:"inputs"`
	Outputs      json.RawMessage `json:"outputs"`
	ModelVersion string          `json:"model_version"`
	// Hidden is set once the screening was removed from the patient's
	// view, with why (the entry and its billing stay).
	Hidden *Hidden `json:"hidden,omitempty"`
}
