package app

import (
	"context"
	"fmt"

	"vetlens/app/repo"
	"vetlens/engine/usg"
	"vetlens/internal/ident"
)

// ErrUSGUnavailable means the USG model is not loaded (503).
var ErrUSGUnavailable = &Error{Kind: KindUnavailable, Msg: "USG model not loaded"}

// PredictUSG runs a validated USG request, logs it (clinic_code, uuid,
// inputs after correction, the response, model_version) and bills it at
// the flat USG rate, counted toward the customer's monthly tier. The log
// entry and the ledger event are committed together, in one transaction,
// before it returns. USG
// responses carry no billing object; a ledger failure is therefore an
// internal error (500, safe to retry) rather than a free result.
func (s *USG) PredictUSG(ctx context.Context, c Caller, req *usg.Request) (*usg.Response, error) {
	return s.predictLogged(ctx, c, req, nil)
}

// predictLogged is PredictUSG, logging entered (the desktop form's values
// as entered, with their units) beside the inputs.
func (s *USG) predictLogged(ctx context.Context, c Caller, req *usg.Request, entered []EnteredValue) (*usg.Response, error) {
	resp, err := s.predictUSG(ctx, req)
	if err != nil {
		return nil, err
	}
	inJSON, outJSON, err := encodeUSGLog(req, entered, resp.Result)
	if err != nil {
		return nil, err
	}
	entry := &repo.USGLogEntry{
		Time: s.clock.Now().UTC(), Customer: c.Customer, KeyPrefix: c.KeyPrefix,
		ClinicCode: req.ClinicCode, UUID: req.UUID, Inputs: inJSON, Outputs: outJSON,
		ModelVersion: resp.Result.ModelVersion,
	}
	if b := s.accounts.meter(ctx, c, Charge{Service: "usg", CallType: CallUSG, Valid: true, UUID: req.UUID}, entry); b.Reason == ReasonError {
		return nil, fmt.Errorf("usg: log and ledger could not be written")
	}
	return resp, nil
}

// predictUSG checks a request's identifiers and runs the engine: what
// every USG front door shares before logging and billing.
func (s *USG) predictUSG(ctx context.Context, req *usg.Request) (*usg.Response, error) {
	if s.usg == nil {
		return nil, ErrUSGUnavailable
	}
	if err := s.disk.checkWritable(); err != nil {
		return nil, err
	}
	// usg.ParseRequest applies the identifier rule already; requests built
	// in process (the desktop) are checked here, before anything is stored.
	for _, f := range []struct{ name, v string }{{usg.FieldClinicCode, req.ClinicCode}, {usg.FieldUUID, req.UUID}} {
		if err := ident.Check(f.v); err != nil {
			return nil, &Error{Kind: KindInvalid, Msg: f.name, Err: err}
		}
	}
	resp, err := s.usg.Predict(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("usg predict: %w", err)
	}
	return resp, nil
}
