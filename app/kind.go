package app

import "vetlens/app/repo"

// MeasurementKind says how a cardiac measurement's values were obtained.
type MeasurementKind string

// The measurement kinds, as stored in the history and shown to the
// clinician.
const (
	// MeasurementModel: the model's landmarks and values as they came.
	MeasurementModel MeasurementKind = "model"
	// MeasurementEdited: the model's landmarks, moved by the clinician;
	// the values are recomputed from them.
	MeasurementEdited MeasurementKind = "edited"
	// MeasurementManual: all 7 landmarks placed by hand by the
	// clinician; the values are computed from them.
	MeasurementManual MeasurementKind = "manual"
)

// Valid reports whether k is one of the three kinds.
func (k MeasurementKind) Valid() bool {
	switch k {
	case MeasurementModel, MeasurementEdited, MeasurementManual:
		return true
	}
	return false
}

// Clinician reports whether the values in effect are the clinician's
// (edited or manual), so that the model's values are kept beside them.
func (k MeasurementKind) Clinician() bool {
	return k == MeasurementEdited || k == MeasurementManual
}

// Label is the kind in words, as the report and the screens state it.
func (k MeasurementKind) Label() string {
	switch k {
	case MeasurementModel:
		return "Model measurement"
	case MeasurementEdited:
		return "Model landmarks corrected by clinician"
	case MeasurementManual:
		return "Placed by hand by clinician"
	}
	return "Unknown kind of measurement (" + string(k) + ")"
}

// EntryKind is the kind of a stored history entry. Records written before
// kinds were stored read as edited when their Edited flag is set, else as
// model; so do records with a kind this version does not know.
func EntryKind(e repo.HistoryEntry) MeasurementKind {
	if k := MeasurementKind(e.Kind); k.Valid() {
		return k
	}
	if e.Edited {
		return MeasurementEdited
	}
	return MeasurementModel
}

// CardiacEntry is one cardiac measurement in a patient's record: the
// stored entry with the customer it was recorded for, and its kind.
type CardiacEntry struct {
	repo.PatientEntry
	// Kind is EntryKind of the stored entry.
	Kind MeasurementKind
	// SupersededBy is the Seq of the correction that replaced this entry
	// (0: none; a removed correction replaces nothing); the entry is kept
	// as the earlier version.
	SupersededBy uint64
}

// Current reports whether the entry is the version in effect: neither
// hidden nor superseded by a correction. Trends plot current entries.
func (e CardiacEntry) Current() bool { return e.Hidden == nil && e.SupersededBy == 0 }
