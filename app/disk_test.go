package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"vetlens/internal/config"
	"vetlens/internal/diskfree"
	"vetlens/platform/store"
)

// countingDisk is a settable free-space probe that counts its readings.
type countingDisk struct {
	mu    sync.Mutex
	u     diskfree.Usage
	err   error
	calls int
}

func (d *countingDisk) Usage() (diskfree.Usage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	return d.u, d.err
}

func (d *countingDisk) set(free uint64, err error) {
	d.mu.Lock()
	d.u, d.err = diskfree.Usage{Free: free, Total: 100 << 30}, err
	d.mu.Unlock()
}

// TestDiskGuardCache: one statfs per config.DiskCheckInterval whatever
// the call rate; a new reading after it; a probe error never refuses; a
// full disk refuses desktop saves with KindNoSpace (507) and nothing is
// stored.
func TestDiskGuardCache(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	disk := &countingDisk{}
	disk.set(50<<30, nil)
	s, err := New(Deps{Repos: st.Repos(), Clock: clk, Disk: disk}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		free      uint64
		probeErr  error
		advance   time.Duration
		wantLevel string
		wantCalls int
	}{
		{"first reading", 50 << 30, nil, 0, DiskOK, 1},
		{"cached: the drop is not seen yet", config.DiskRefuseBytes - 1, nil, config.DiskCheckInterval / 2, DiskOK, 1},
		{"stale: read again", config.DiskRefuseBytes - 1, nil, config.DiskCheckInterval / 2, DiskFull, 2},
		{"low", config.DiskWarnBytes - 1, nil, config.DiskCheckInterval, DiskLow, 3},
		{"unreadable counts as ok", 0, errors.New("statfs: boom"), config.DiskCheckInterval, DiskOK, 4},
		{"full again", 1 << 20, nil, config.DiskCheckInterval, DiskFull, 5},
	}
	for _, step := range steps {
		disk.set(step.free, step.probeErr)
		clk.Add(step.advance)
		for i := 0; i < 3; i++ {
			if got := s.Status.Disk().Level; got != step.wantLevel {
				t.Fatalf("%s: level %q, want %q", step.name, got, step.wantLevel)
			}
		}
		if disk.calls != step.wantCalls {
			t.Fatalf("%s: %d probe calls, want %d", step.name, disk.calls, step.wantCalls)
		}
	}
	_, err = s.Patients.SavePatient(ctx, repoPatient("Rex-1", "dog"))
	if KindOf(err) != KindNoSpace {
		t.Fatalf("SavePatient on a full disk: %v (kind %v), want KindNoSpace (507: api/errstatus's TestStatusTable)", err, KindOf(err))
	}
	if _, found, err := s.Patients.PatientDetails(ctx, "Rex-1"); err != nil || found {
		t.Fatalf("patient stored on a full disk: found %v, err %v", found, err)
	}
	if h := s.Status.CardiacHealth(); h.Status != "degraded" || len(h.Reasons) == 0 {
		t.Fatalf("health on a full disk: %+v, want degraded with reasons", h)
	}
}
