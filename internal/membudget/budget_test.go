package membudget

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReserve(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity int64
		held     []int64 // reserved first, kept
		n        int64
		wantErr  error
		wantUse  int64 // InUse after the reservation
	}{
		{"fits", 100, []int64{40}, 60, nil, 100},
		{"does not fit", 100, []int64{40, 30}, 31, ErrExhausted, 70},
		{"larger than the budget runs alone", 100, nil, 500, nil, 100},
		{"larger than the budget waits for the rest", 100, []int64{1}, 500, ErrExhausted, 1},
		{"zero is free", 100, []int64{100}, 0, nil, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(Config{Capacity: tc.capacity, Wait: 20 * time.Millisecond, TrimDelay: -1})
			for _, h := range tc.held {
				if _, err := b.Reserve(context.Background(), h); err != nil {
					t.Fatal(err)
				}
			}
			release, err := b.Reserve(context.Background(), tc.n)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if st := b.Stats(); st.InUse != tc.wantUse || st.Peak > tc.capacity {
				t.Fatalf("stats %+v, want in use %d", st, tc.wantUse)
			}
			if err == nil {
				release()
				release() // a second call gives nothing back
				if st := b.Stats(); st.InUse != tc.wantUse-min(tc.n, tc.capacity) {
					t.Fatalf("after release: %+v", st)
				}
			}
		})
	}
}

// TestReserveWaits: a reservation without room waits for a release
// within the wait, gives up with the context, and never lets the bytes
// in use exceed the capacity under concurrency.
func TestReserveWaits(t *testing.T) {
	b := New(Config{Capacity: 100, Wait: 5 * time.Second, TrimDelay: -1})
	release, _ := b.Reserve(context.Background(), 80)
	go func() { time.Sleep(30 * time.Millisecond); release() }()
	r2, err := b.Reserve(context.Background(), 50)
	if err != nil {
		t.Fatalf("no room after the release: %v", err)
	}
	if st := b.Stats(); st.Waited != 1 {
		t.Fatalf("%+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Reserve(ctx, 60); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("context: %v", err)
	}
	r2()

	var wg sync.WaitGroup
	var inUse, over atomic.Int64
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(10 + i%4*10)
			rel, err := b.Reserve(context.Background(), n)
			if err != nil {
				t.Error(err)
				return
			}
			if inUse.Add(n) > 100 {
				over.Add(1)
			}
			time.Sleep(time.Millisecond)
			inUse.Add(-n)
			rel()
		}()
	}
	wg.Wait()
	if st := b.Stats(); over.Load() > 0 || st.Peak > 100 || st.InUse != 0 {
		t.Fatalf("over capacity %d times; %+v", over.Load(), st)
	}
}

// TestTrimAfterBurst: memory is returned to the OS once the budget has
// stayed drained for TrimDelay after a burst of at least a quarter of
// it, not after a small reservation, and not while reservations go on.
func TestTrimAfterBurst(t *testing.T) {
	var trims atomic.Int64
	b := New(Config{Capacity: 100, TrimDelay: 20 * time.Millisecond, Trim: func() { trims.Add(1) }})
	ctx := context.Background()
	small, _ := b.Reserve(ctx, 10)
	small()
	time.Sleep(60 * time.Millisecond)
	if trims.Load() != 0 {
		t.Fatal("trimmed after a small reservation")
	}
	big, _ := b.Reserve(ctx, 30)
	big()
	again, _ := b.Reserve(ctx, 5) // a new reservation within the delay
	time.Sleep(60 * time.Millisecond)
	if trims.Load() != 0 {
		t.Fatal("trimmed while a reservation was held")
	}
	again()
	deadline := time.Now().Add(2 * time.Second)
	for trims.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if trims.Load() != 1 || b.Stats().Trims != 1 {
		t.Fatalf("trims %d, stats %+v", trims.Load(), b.Stats())
	}
}

func TestDefaultCapacity(t *testing.T) {
	c := DefaultCapacity()
	if c < DefaultMin || c > DefaultMax {
		t.Fatalf("%d outside [%d, %d]", c, DefaultMin, DefaultMax)
	}
	if total := TotalMemory(); total > 0 && total/DefaultFraction >= DefaultMin && total/DefaultFraction <= DefaultMax && c != total/DefaultFraction {
		t.Fatalf("capacity %d, total %d", c, total)
	}
	t.Logf("total memory %d MB: default pixel budget %d MB", TotalMemory()>>20, c>>20)
}
