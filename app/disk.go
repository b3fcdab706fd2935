package app

import (
	"fmt"
	"sync"
	"time"

	"vetlens/internal/config"
	"vetlens/internal/diskfree"
)

// DiskSpace is the port that reads the free space of the filesystem
// holding the store (diskfree.Dir for a data directory); tests inject a
// fake.
type DiskSpace interface {
	Usage() (diskfree.Usage, error)
}

// Disk levels, from the thresholds in internal/config.
const (
	DiskOK   = "ok"   // enough free space, or no probe / an unreadable one
	DiskLow  = "low"  // below config.DiskWarnBytes or DiskWarnPercent: health degraded
	DiskFull = "full" // below config.DiskRefuseBytes: writes refused with 507
)

// DiskState is the last free-space reading and its level.
type DiskState struct {
	Level string
	Usage diskfree.Usage
	// Reason says why the level is not DiskOK, in words ("" when it is).
	Reason string
}

// diskGuard caches one reading for config.DiskCheckInterval so the check
// costs one statfs per interval whatever the request rate.
type diskGuard struct {
	probe DiskSpace
	clock Clock

	mu    sync.Mutex
	at    time.Time
	state DiskState
}

// read returns the cached state, reading the probe when it is stale. A
// probe error counts as DiskOK: the guard never refuses on a reading it
// could not take (the write itself then reports its own error).
func (g *diskGuard) read() DiskState {
	if g == nil || g.probe == nil {
		return DiskState{Level: DiskOK}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	if d := now.Sub(g.at); !g.at.IsZero() && d >= 0 && d < config.DiskCheckInterval {
		return g.state
	}
	g.at = now
	u, err := g.probe.Usage()
	if err != nil {
		g.state = DiskState{Level: DiskOK}
		return g.state
	}
	g.state = levelOf(u)
	return g.state
}

// levelOf classifies a reading against the thresholds.
func levelOf(u diskfree.Usage) DiskState {
	st := DiskState{Level: DiskOK, Usage: u}
	switch {
	case u.Free < config.DiskRefuseBytes:
		st.Level = DiskFull
		st.Reason = fmt.Sprintf("disk full: %s free on the data directory's filesystem, writes need %s", mib(u.Free), mib(config.DiskRefuseBytes))
	case u.Free < config.DiskWarnBytes || (u.Total > 0 && u.Free*100 < u.Total*config.DiskWarnPercent):
		st.Level = DiskLow
		st.Reason = fmt.Sprintf("disk low: %s free (%.1f%%) on the data directory's filesystem; writes stop below %s", mib(u.Free), pct(u), mib(config.DiskRefuseBytes))
	}
	return st
}

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

func pct(u diskfree.Usage) float64 {
	if u.Total == 0 {
		return 0
	}
	return float64(u.Free) * 100 / float64(u.Total)
}

// diskRetryAfter is the Retry-After of a KindNoSpace error: space is
// freed by a person, so the client should not hammer.
const diskRetryAfter = 60 * time.Second

// Disk reports the data directory's free space and its level (cached for
// config.DiskCheckInterval).
func (s *Status) Disk() DiskState { return s.disk.read() }

// CheckWritable refuses a request that would write when the disk is below
// config.DiskRefuseBytes: KindNoSpace (507), before any work or billing.
// The use cases that write call it themselves; a transport calls it only
// to refuse before it commits to a response (the SSE stream).
func (s *Status) CheckWritable() error { return s.disk.checkWritable() }

// checkWritable is CheckWritable on the guard the features share.
func (g *diskGuard) checkWritable() error {
	if st := g.read(); st.Level == DiskFull {
		return &Error{Kind: KindNoSpace, Msg: st.Reason + "; nothing was done or billed", RetryAfter: diskRetryAfter}
	}
	return nil
}
