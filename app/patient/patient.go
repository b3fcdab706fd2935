// Package patient holds the patient id type, a leaf beneath app and its
// storage port (app/repo), so that use cases, ports, stores and the UI
// pass one type rather than plain strings. The rule that makes a string
// a patient id is app's (app.ParsePatientID, which wraps internal/ident
// in app's KindInvalid error); this package imports nothing of the
// module.
package patient

// ID is a patient id: a string that app.ParsePatientID accepted at a
// boundary (a text field, a command-line flag, a DICOM Patient ID tag),
// or one read back from a store that wrote such an id. The empty ID means
// no patient; use cases that need one say so.
//
// Stores convert what they read with ID(s) without parsing it again:
// every id was checked when it was written, by the rule of its day. The
// rule was tightened once (commit 7b3702f: format and bidi characters,
// U+FFFD, private-use code points and API uuids of 129-256 bytes became
// refused), so a data directory written before it can hold ids the rule
// now refuses, and reading them back must still return their records.
// Code outside the stores converts a string only through
// app.ParsePatientID, with one exception: app.PatientFromTags carries a
// DICOM file's Patient ID as written, for comparing with the loaded
// patient, and app.NormalizePatient parses it before it is stored.
type ID string

// String returns the id as it was typed or stored.
func (id ID) String() string { return string(id) }
