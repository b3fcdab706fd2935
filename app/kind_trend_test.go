package app

import (
	"testing"
	"time"

	"vetlens/app/repo"
)

// TestTrend: a correction takes its study's place on the trend (the
// first version's time) with the versions it corrected; a removed
// correction puts the version it corrected back, at its own time; other
// customers' sequence numbers do not join chains.
func TestTrend(t *testing.T) {
	t0 := time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)
	v := func(x float64) *float64 { return &x }
	entry := func(customer string, seq, supersedes uint64, day int, vhs float64, hidden bool) CardiacEntry {
		e := CardiacEntry{PatientEntry: repo.PatientEntry{Customer: customer, HistoryEntry: repo.HistoryEntry{
			Seq: seq, Supersedes: supersedes, Time: t0.AddDate(0, 0, day), VHS: v(vhs)}}}
		if hidden {
			e.Hidden = &repo.Hidden{Reason: "test"}
		}
		return e
	}
	for _, tc := range []struct {
		name    string
		entries []CardiacEntry
		want    []float64   // current values, in study order
		days    []int       // their study days
		earlier [][]float64 // their earlier values
	}{
		{"no corrections", []CardiacEntry{entry("desktop", 1, 0, 0, 10, false), entry("desktop", 2, 0, 30, 11, false)},
			[]float64{10, 11}, []int{0, 30}, [][]float64{nil, nil}},
		{"a chain of two corrections, saved after a later study",
			[]CardiacEntry{entry("desktop", 1, 0, 0, 9, false), entry("desktop", 2, 0, 30, 11, false), entry("desktop", 3, 1, 40, 9.5, false), entry("desktop", 4, 3, 41, 9.8, false)},
			[]float64{9.8, 11}, []int{0, 30}, [][]float64{{9, 9.5}, nil}},
		{"a removed correction", []CardiacEntry{entry("desktop", 1, 0, 0, 9, false), entry("desktop", 2, 1, 5, 9.5, true)},
			[]float64{9}, []int{0}, [][]float64{nil}},
		{"another customer's seq", []CardiacEntry{entry("clinic-b", 1, 0, 0, 12, false), entry("desktop", 5, 1, 3, 9, false)},
			[]float64{12, 9}, []int{0, 3}, [][]float64{nil, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &PatientRecord{Cardiac: tc.entries}
			sup := map[[2]any]uint64{}
			for _, e := range tc.entries {
				if e.Supersedes != 0 && e.Hidden == nil {
					sup[[2]any{e.Customer, e.Supersedes}] = e.Seq
				}
			}
			for i := range rec.Cardiac {
				rec.Cardiac[i].SupersededBy = sup[[2]any{rec.Cardiac[i].Customer, rec.Cardiac[i].Seq}]
			}
			got := rec.Trend()
			if len(got) != len(tc.want) {
				t.Fatalf("%d points, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, g := range got {
				if *g.Entry.VHS != tc.want[i] || !g.StudyTime.Equal(t0.AddDate(0, 0, tc.days[i])) || len(g.Earlier) != len(tc.earlier[i]) {
					t.Fatalf("point %d: VHS %v at %v with %d earlier, want %v on day %d with %v", i, *g.Entry.VHS, g.StudyTime, len(g.Earlier), tc.want[i], tc.days[i], tc.earlier[i])
				}
				for j, e := range g.Earlier {
					if *e.VHS != tc.earlier[i][j] {
						t.Errorf("point %d earlier %d: %v, want %v", i, j, *e.VHS, tc.earlier[i][j])
					}
				}
			}
		})
	}
}
