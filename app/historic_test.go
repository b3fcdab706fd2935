package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"vetlens/api"
	"vetlens/app/repo"
)

// wireHistoric is historic_vhs (or _vlas) of ds as the API writes it
// (api.Dated; nil is null).
func wireHistoric(ds []Dated) string {
	var w []api.Dated
	if ds != nil {
		w = []api.Dated{}
	}
	for _, d := range ds {
		w = append(w, api.Dated(d))
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// TestHistoricIsBounded: a response's historic_vhs and historic_vlas hold
// at most MaxHistoric values each, the most recent ones, oldest first,
// however many measurements the uuid has (issue 46: 299 rechecks grew a
// response to 12.6 KB); under the bound every value is there.
func TestHistoricIsBounded(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 3, MaxHistoric, MaxHistoric + 1, 299} {
		s, clk := newTestService(t, t0)
		c := newCaller(t, s, "clinic", "")
		for i := range n {
			v, l := 8+float64(i)/1000, 2+float64(i)/1000
			if _, err := s.repos.History.Add(ctx, c.Customer, "rex", repo.HistoryEntry{Time: t0.Add(time.Duration(i) * time.Hour), VHS: &v, VLAS: &l}, nil); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(t0.Add(time.Duration(n+1) * time.Hour))
		body, err := s.Cardiac.PredictSingle(ctx, c, &CardiacRequest{Images: [][]byte{codeImage(t, 1)}, UUID: "rex", HasUUID: true})
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string][]Dated{"historic_vhs": body.Historic.VHS, "historic_vlas": body.Historic.VLAS} {
			want := min(n, MaxHistoric)
			if len(got) != want {
				t.Fatalf("%d measurements: %s has %d values, want %d", n, name, len(got), want)
			}
			base := 8.0
			if name == "historic_vlas" {
				base = 2
			}
			for k, e := range got { // the most recent, oldest first
				if i := n - want + k; e.Value != base+float64(i)/1000 {
					t.Fatalf("%d measurements: %s[%d] = %v, want measurement %d", n, name, k, e, i)
				}
			}
		}
	}
}
