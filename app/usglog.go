package app

import (
	"encoding/json"
	"fmt"

	"vetlens/api/usgv1"
	"vetlens/app/repo"
	"vetlens/engine/usg"
)

// The USG log's stored form: what repo.USGLogEntry's Inputs and Outputs
// hold, as JSON (a storage encoding; the desktop's patient view and the
// repeat check read it back). Outputs are the result as answered: the
// spec's result object (usgv1.Result), as the log has always kept it.

// usgLogInputs is the logged form of a validated request.
type usgLogInputs struct {
	Features map[string]float64 `json:"features"`
	Warnings []string           `json:"warnings,omitempty"`
	// Entered are the values as entered at the desktop, with units.
	Entered []EnteredValue `json:"entered,omitempty"`
}

// EnteredValue is one value as the clinician entered it.
type EnteredValue struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// encodeUSGLog is the stored Inputs and Outputs of a request logged with
// the values entered at the desktop (nil: an API request) and its result.
func encodeUSGLog(req *usg.Request, entered []EnteredValue, res usg.Result) (inputs, outputs []byte, err error) {
	in := usgLogInputs{Features: map[string]float64{}, Warnings: req.Warnings, Entered: entered}
	for i, f := range usg.Features() {
		in.Features[f] = req.Values[i]
	}
	if inputs, err = json.Marshal(in); err != nil {
		return nil, nil, fmt.Errorf("usg log: %w", err)
	}
	if outputs, err = json.Marshal(usgv1.NewResult(res)); err != nil {
		return nil, nil, fmt.Errorf("usg log: %w", err)
	}
	return inputs, outputs, nil
}

// decodeUSGLogInputs reads a stored entry's Inputs.
func decodeUSGLogInputs(l repo.USGLogEntry) (usgLogInputs, error) {
	var in usgLogInputs
	if err := json.Unmarshal(l.Inputs, &in); err != nil {
		return in, fmt.Errorf("usg log %d: %w", l.Seq, err)
	}
	return in, nil
}

// decodeUSGLogResult reads a stored entry's Outputs.
func decodeUSGLogResult(l repo.USGLogEntry) (usg.Result, error) {
	var res usgv1.Result
	if err := json.Unmarshal(l.Outputs, &res); err != nil {
		return usg.Result{}, fmt.Errorf("usg log %d: %w", l.Seq, err)
	}
	return res.Value(), nil
}
