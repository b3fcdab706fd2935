package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"vetlens/app/repo"
	"vetlens/platform/store/storetest"
)

// TestContract runs the storage contract (platform/store/storetest) on
// bbolt, each test on a new database file.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) repo.Repos {
		s := openTest(t)
		t.Cleanup(func() {
			if err := s.Check(); err != nil {
				t.Error(err)
			}
		})
		return s.Repos()
	})
}

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSecondOpenIsLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// bbolt's flock is per open file description, so a second Open in the
	// same process sees the lock too.
	if _, err := Open(dir, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

// TestLegacyDollarAmounts: records written when amounts were float64
// dollars read back as whole cents; new records carry only cents.
func TestLegacyDollarAmounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int64
	}{
		{"legacy rate", `{"seq":1,"customer":"a","tier":"starter","rate":2.5,"monthly_usage":101}`, 250},
		{"legacy rate off by float error", `{"seq":1,"rate":0.29}`, 29},
		{"legacy usg rate", `{"seq":1,"rate":0.5}`, 50},
		{"cents", `{"seq":1,"rate_cents":400}`, 400},
		{"cents win over a stray rate", `{"seq":1,"rate_cents":300,"rate":9.99}`, 300},
		{"free", `{"seq":1,"rate_cents":0}`, 0},
	} {
		var e Event
		if err := json.Unmarshal([]byte(tc.in), &e); err != nil || e.RateCents != tc.want || e.Seq != 1 {
			t.Errorf("%s: %+v %v, want %d cents", tc.name, e, err, tc.want)
		}
	}
	j, _ := json.Marshal(Event{Seq: 2, RateCents: 350})
	if !strings.Contains(string(j), `"rate_cents":350`) || strings.Contains(string(j), `"rate":`) {
		t.Errorf("new event written as %s", j)
	}

	for _, tc := range []struct {
		name                 string
		in                   string
		wantSingle, wantSess int64
	}{
		{"legacy", `{"name":"big","tier":"enterprise","enterprise_single":1.1,"enterprise_session":1.9}`, 110, 190},
		{"cents", `{"name":"big","tier":"enterprise","enterprise_single_cents":120,"enterprise_session_cents":200}`, 120, 200},
		{"defaults", `{"name":"big","tier":"paygo"}`, 0, 0},
	} {
		var c Customer
		if err := json.Unmarshal([]byte(tc.in), &c); err != nil || c.Name != "big" || c.EnterpriseSingleCents != tc.wantSingle || c.EnterpriseSessionCents != tc.wantSess {
			t.Errorf("%s: %+v %v", tc.name, c, err)
		}
	}
}

func BenchmarkBill(b *testing.B) {
	s, err := Open(b.TempDir(), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchmarkBill(b, s.Repos())
}
