package app

import (
	"sort"
	"time"

	"vetlens/app/repo"
)

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

// TrendEntry is one study on a patient's trend: the version in effect,
// plotted at the time the study was first measured (a correction is not
// a new study), with its earlier versions.
type TrendEntry struct {
	// Entry is the version in effect (CardiacEntry.Current).
	Entry CardiacEntry
	// StudyTime is when the study was first measured: the time of the
	// first version of Entry's chain of corrections (Entry.Time when it
	// corrects nothing).
	StudyTime time.Time
	// Earlier are the versions Entry corrected, oldest first.
	Earlier []CardiacEntry
}

// Trend lists the versions in effect, one per study, in study order: each
// at its study's time with the versions it corrected (following
// Supersedes back within its customer's entries), so that a correction
// takes the place of the value it corrects instead of appearing as a
// later measurement.
func (r *PatientRecord) Trend() []TrendEntry {
	type key struct {
		customer string
		seq      uint64
	}
	byKey := make(map[key]CardiacEntry, len(r.Cardiac))
	for _, e := range r.Cardiac {
		byKey[key{e.Customer, e.Seq}] = e
	}
	var out []TrendEntry
	for _, e := range r.Cardiac {
		if !e.Current() {
			continue
		}
		t := TrendEntry{Entry: e, StudyTime: e.Time}
		seen := map[uint64]bool{e.Seq: true}
		for cur := e; cur.Supersedes != 0; {
			prev, ok := byKey[key{cur.Customer, cur.Supersedes}]
			if !ok || seen[prev.Seq] {
				break
			}
			seen[prev.Seq] = true
			t.Earlier = append([]CardiacEntry{prev}, t.Earlier...)
			t.StudyTime = prev.Time
			cur = prev
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StudyTime.Before(out[j].StudyTime) })
	return out
}
