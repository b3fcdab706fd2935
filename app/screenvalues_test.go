package app

import (
	"image"
	"testing"
	"time"

	"vetlens/app/repo"
)

func TestClampPoint(t *testing.T) {
	b := image.Rect(10, 20, 110, 70) // 100 x 50: the span is [0,100] x [0,50]
	for _, c := range []struct{ in, want Point }{
		{Point{X: 30, Y: 40}, Point{X: 30, Y: 40}},
		{Point{X: -3, Y: 60}, Point{X: 0, Y: 50}},
		{Point{X: 100, Y: 0}, Point{X: 100, Y: 0}},
		{Point{X: 250, Y: -1}, Point{X: 100, Y: 0}},
	} {
		if got := ClampPoint(c.in, b); got != c.want {
			t.Errorf("ClampPoint(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestModels(t *testing.T) {
	s, _ := newTestService(t, time.Unix(0, 0))
	if got := s.Status.Models(); got != (ModelInfo{CardiacLoaded: true, CardiacVersion: "fake-1"}) {
		t.Fatalf("cardiac only: %+v", got)
	}
	rewire(t, s, func(d *Deps, _ *Config) { d.USG = fakeUSG{} })
	if got := s.Status.Models(); !got.USGLoaded || got.USGVersion != "" {
		t.Fatalf("with USG: %+v", got)
	}
	rewire(t, s, func(d *Deps, _ *Config) { d.Cardiac = nil })
	if got := s.Status.Models(); got.CardiacLoaded || got.CardiacVersion != "" {
		t.Fatalf("no cardiac: %+v", got)
	}
}

func TestCorrectionBase(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	first := Saved{Entry: repo.HistoryEntry{Seq: 4, Time: at, Kind: string(MeasurementModel)}}
	if b := first.CorrectionBase("Rex"); b != nil {
		t.Fatalf("a first save corrects nothing, got %+v", b)
	}
	corr := Saved{Entry: repo.HistoryEntry{Seq: 5, Supersedes: 4, Time: at, Kind: string(MeasurementEdited)}}
	want := EntryRef{PatientID: "Rex", Customer: DesktopCustomer, Seq: 5, Kind: MeasurementEdited, Time: at}
	if b := corr.CorrectionBase("Rex"); b == nil || *b != want {
		t.Fatalf("correction's base %+v, want %+v", b, want)
	}
}
