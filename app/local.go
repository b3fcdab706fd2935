package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"vetlens/api"
	"vetlens/app/repo"
	"vetlens/engine/cardiac"
	"vetlens/engine/usg"
)

// ErrNoStorage is what a local Service's repositories answer: the
// one-shot command-line front doors store nothing.
var ErrNoStorage = errors.New("no storage: a local service keeps no records")

// NewLocal builds a Service for the one-shot command-line front doors
// (`vetlens predict`, `usg`, `corners`, `preprocess`, `capture`): the same
// use cases and rules as the API with no storage behind them. Its local
// use cases (PredictLocal, PredictUSGLocal, DetectCorners, Rectify,
// Preprocess, StartLocalSession) bill, log and record nothing; a use case that needs storage fails with
// ErrNoStorage.
func NewLocal(d Deps, cfg Config) (*Service, error) {
	d.Repos = noRepos()
	return New(d, cfg)
}

// PredictLocal measures one image exactly as PredictSingle does (a
// photograph of a screen is corrected first when the PoP pipeline is
// loaded) and returns the spec's body without the storage fields
// (historic_vhs, historic_vlas) and billing, with the engine's result
// (for Guard and Rendered). Nothing is billed or recorded.
func (s *Cardiac) PredictLocal(ctx context.Context, img []byte, o cardiac.PredictOptions) (*api.CardiacResponse, *cardiac.Result, error) {
	if s.cardiac == nil {
		return nil, nil, ErrCardiacUnavailable
	}
	res, err := s.measureSingle(ctx, img, o)
	if err != nil {
		return nil, nil, err
	}
	body := api.NewCardiacResponse(res, s.cardiac.ModelVersion())
	return &body, res, nil
}

// PredictUSGLocal runs a validated USG request with the rules of
// PredictUSG (identifier checks, the engine) without logging or billing
// it.
func (s *USG) PredictUSGLocal(ctx context.Context, req *usg.Request) (*usg.Response, error) {
	return s.predictUSG(ctx, req)
}

// localCaller owns a local service's capture sessions.
var localCaller = Caller{Customer: "local", KeyPrefix: "local"}

// LocalSession is a PoP capture session of a one-shot command (`vetlens
// capture`): the API's session use case (the same pipeline, states,
// errors and bodies) with nothing billed or recorded. Frame implements
// the live runner's frame sink.
type LocalSession struct {
	svc *Sessions
	// Start is the /v3/pop-session/start body of the session.
	Start *SessionStart
}

// StartLocalSession opens a capture session on the service's PoP
// pipeline, as StartSession does for an API key.
func (s *Sessions) StartLocalSession(ctx context.Context) (*LocalSession, error) {
	st, err := s.StartSession(ctx, localCaller)
	if err != nil {
		return nil, err
	}
	return &LocalSession{svc: s, Start: st}, nil
}

// Frame feeds one frame (JPEG or PNG) to the session: the outcome the
// API's SessionFrame gives, without billing.
func (l *LocalSession) Frame(ctx context.Context, jpeg []byte) (FrameOutcome, error) {
	_, out, err := l.svc.sessionFrame(ctx, localCaller, l.Start.SessionID, jpeg, "", sessionLocal)
	return out, err
}

// noRepos are repositories that store nothing. Each embeds its interface
// (nil), so a method added to a port later still compiles here; the
// methods the use cases call answer ErrNoStorage.
func noRepos() repo.Repos {
	return repo.Repos{Keys: noKeys{}, Customers: noCustomers{}, Ledger: noLedger{}, History: noHistory{},
		USGLog: noUSGLog{}, Patients: noPatients{}, Audit: noAudit{}}
}

type noKeys struct{ repo.Keys }

func (noKeys) Create(context.Context, repo.Key) error        { return ErrNoStorage }
func (noKeys) Get(context.Context, string) (repo.Key, error) { return repo.Key{}, ErrNoStorage }
func (noKeys) List(context.Context) ([]repo.Key, error)      { return nil, ErrNoStorage }
func (noKeys) Revoke(context.Context, string, time.Time) (repo.Key, error) {
	return repo.Key{}, ErrNoStorage
}

type noCustomers struct{ repo.Customers }

func (noCustomers) Get(context.Context, string) (repo.Customer, error) {
	return repo.Customer{}, ErrNoStorage
}
func (noCustomers) Put(context.Context, repo.Customer) error { return ErrNoStorage }

type noLedger struct{ repo.Ledger }

func (noLedger) Bill(context.Context, repo.BillRequest, repo.Decide) (repo.Event, repo.BillState, bool, error) {
	return repo.Event{}, repo.BillState{}, false, fmt.Errorf("bill: %w", ErrNoStorage)
}
func (noLedger) MonthlyUsage(context.Context, string, string) (int, error) { return 0, ErrNoStorage }
func (noLedger) MonthlyCharges(context.Context, string, string) (int, int64, error) {
	return 0, 0, ErrNoStorage
}
func (noLedger) Events(context.Context) ([]repo.Event, error) { return nil, ErrNoStorage }
func (noLedger) RecheckCount(context.Context, string, string) (int, error) {
	return 0, ErrNoStorage
}

type noHistory struct{ repo.History }

func (noHistory) Add(_ context.Context, _, _ string, e repo.HistoryEntry, _ []byte) (repo.HistoryEntry, error) {
	return e, ErrNoStorage
}
func (noHistory) List(context.Context, string, string) ([]repo.HistoryEntry, error) {
	return nil, ErrNoStorage
}
func (noHistory) ListPatient(context.Context, PatientID) ([]repo.PatientEntry, error) {
	return nil, ErrNoStorage
}
func (noHistory) Image(context.Context, string, string, uint64) ([]byte, error) {
	return nil, ErrNoStorage
}
func (noHistory) Hide(context.Context, string, string, uint64, repo.Hidden, repo.AuditEvent) (repo.HistoryEntry, error) {
	return repo.HistoryEntry{}, ErrNoStorage
}

type noUSGLog struct{ repo.USGLog }

func (noUSGLog) Append(context.Context, repo.USGLogEntry) (repo.USGLogEntry, error) {
	return repo.USGLogEntry{}, ErrNoStorage
}
func (noUSGLog) List(context.Context) ([]repo.USGLogEntry, error) { return nil, ErrNoStorage }
func (noUSGLog) ListPatient(context.Context, PatientID) ([]repo.USGLogEntry, error) {
	return nil, ErrNoStorage
}
func (noUSGLog) Hide(context.Context, uint64, repo.Hidden, repo.AuditEvent) (repo.USGLogEntry, error) {
	return repo.USGLogEntry{}, ErrNoStorage
}

type noAudit struct{ repo.Audit }

func (noAudit) Append(_ context.Context, e repo.AuditEvent) (repo.AuditEvent, error) {
	return e, ErrNoStorage
}
func (noAudit) ListPatient(context.Context, PatientID) ([]repo.AuditEvent, error) {
	return nil, ErrNoStorage
}

type noPatients struct{ repo.Patients }

func (noPatients) PatientIDs(context.Context, string, int) ([]PatientID, error) {
	return nil, ErrNoStorage
}
func (noPatients) Get(context.Context, PatientID) (repo.Patient, error) {
	return repo.Patient{}, ErrNoStorage
}
func (noPatients) Put(context.Context, repo.Patient, repo.AuditEvent) error { return ErrNoStorage }
func (noPatients) Search(context.Context, string, int) ([]repo.Patient, error) {
	return nil, ErrNoStorage
}
