// Package importq watches an import folder (an X-ray console's export
// share, or the folder a DICOM receiver such as dcmtk's storescp writes
// into) and measures every new DICOM, JPEG or PNG file once, in arrival
// order, keeping a list of the files and their state for a progress list.
//
// The folder is polled rather than watched with inotify: export shares
// are usually network mounts (CIFS, NFS), where inotify sees nothing that
// another machine writes. A file is taken once its size and modification
// time are the same on two polls in a row, so a file still being written
// is not read half-way. Files already in the folder when watching starts
// (when New is called) are not measured; names starting with a dot or ending in .part, .tmp or
// ~ (copies in progress) are ignored.
package importq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"vetlens/app"
)

// State is where a file is in the queue.
type State int

// The states, in order.
const (
	// Waiting: seen, waiting for its turn.
	Waiting State = iota
	// Measuring: being decoded and measured.
	Measuring
	// Done: measured (the result may still be a rejection or withheld values).
	Done
	// Failed: could not be read or measured; Item.Err says why.
	Failed
)

// String is the state as the progress list shows it.
func (s State) String() string {
	return [...]string{"waiting", "measuring", "measured", "failed"}[s]
}

// Item is one file in the queue.
type Item struct {
	// Seq numbers the items in arrival order, from 1.
	Seq int
	// Path is the file; Name its base name.
	Path, Name string
	// State is where it is; Err the reason when Failed.
	State State
	Err   string
	// Added and Finished are when it was taken and when it was done or failed.
	Added, Finished time.Time
	// Measurement is the result when Done (dropped for older items, see
	// Config.KeepMeasurements).
	Measurement *app.Measurement
}

// Measure measures one file's bytes (app.Service.Cardiac.MeasureDesktop with the
// DICOM file's own patient).
type Measure func(ctx context.Context, b []byte) (*app.Measurement, error)

// Config configures a Queue.
type Config struct {
	// Dir is the folder watched.
	Dir string
	// Interval is the time between polls (default 1 s).
	Interval time.Duration
	// MaxFileBytes bounds the files read (default 64 MiB); larger ones fail.
	MaxFileBytes int64
	// KeepItems bounds the list (default 200 items, oldest dropped).
	KeepItems int
	// KeepMeasurements bounds the measurements held (with their images):
	// the newest (default 20) keep theirs.
	KeepMeasurements int
}

// Queue is a watched import folder.
type Queue struct {
	cfg     Config
	measure Measure

	mu       sync.Mutex
	items    []*Item
	seq      int
	seen     map[string]stamp // files taken or present at start
	pending  map[string]stamp // files seen once, waiting to be stable
	lastErr  string
	onChange func()
}

// stamp is what tells a file has changed: its size and modification time.
type stamp struct {
	size int64
	mod  time.Time
}

// New returns a queue for cfg.Dir, noting the files in it now as old
// (they are not measured); Run starts it.
func New(cfg Config, measure Measure) *Queue {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = 64 << 20
	}
	if cfg.KeepItems <= 0 {
		cfg.KeepItems = 200
	}
	if cfg.KeepMeasurements <= 0 {
		cfg.KeepMeasurements = 20
	}
	q := &Queue{cfg: cfg, measure: measure, seen: map[string]stamp{}, pending: map[string]stamp{}}
	for name, st := range q.list() {
		q.seen[name] = st // present before watching: not new
	}
	return q
}

// Dir is the folder watched.
func (q *Queue) Dir() string { return q.cfg.Dir }

// OnChange sets f, called after every change of the list or of the
// folder's error, from the queue's goroutine.
func (q *Queue) OnChange(f func()) {
	q.mu.Lock()
	q.onChange = f
	q.mu.Unlock()
}

// Items returns a copy of the list, oldest first.
func (q *Queue) Items() []Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Item, len(q.items))
	for i, it := range q.items {
		out[i] = *it
	}
	return out
}

// Err is the folder's last error ("" when the last poll read it).
func (q *Queue) Err() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lastErr
}

// Run watches the folder until ctx ends: every poll takes the new files
// that are stable and measures them one by one. It returns ctx's error.
func (q *Queue) Run(ctx context.Context) error {
	t := time.NewTicker(q.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		q.poll()
		q.measureWaiting(ctx)
	}
}

// list reads the folder: each candidate file's name and stamp. A read
// error is kept for Err.
func (q *Queue) list() map[string]stamp {
	entries, err := os.ReadDir(q.cfg.Dir)
	msg := ""
	if err != nil {
		msg = fmt.Sprintf("import folder %s: %v", q.cfg.Dir, err)
	}
	q.mu.Lock()
	changed := q.lastErr != msg
	q.lastErr = msg
	q.mu.Unlock()
	if changed {
		q.changed()
	}
	out := map[string]stamp{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || ignored(name) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		out[name] = stamp{info.Size(), info.ModTime()}
	}
	return out
}

// ignored reports names of hidden files and of copies in progress.
func ignored(name string) bool {
	l := strings.ToLower(name)
	return strings.HasPrefix(name, ".") || strings.HasSuffix(l, ".part") || strings.HasSuffix(l, ".tmp") || strings.HasSuffix(name, "~")
}

// poll takes the files whose stamp is the same as on the previous poll
// and that were not taken before (a file rewritten with a new stamp is
// taken again).
func (q *Queue) poll() {
	now := q.list()
	var taken []string
	for name, st := range now {
		if old, ok := q.seen[name]; ok && old == st {
			continue
		}
		if prev, ok := q.pending[name]; ok && prev == st && st.size > 0 {
			taken = append(taken, name)
			q.seen[name] = st
			delete(q.pending, name)
			continue
		}
		q.pending[name] = st
	}
	for name := range q.pending {
		if _, ok := now[name]; !ok {
			delete(q.pending, name)
		}
	}
	if len(taken) == 0 {
		return
	}
	sort.Slice(taken, func(i, j int) bool {
		a, b := now[taken[i]], now[taken[j]]
		if !a.mod.Equal(b.mod) {
			return a.mod.Before(b.mod)
		}
		return taken[i] < taken[j]
	})
	q.mu.Lock()
	for _, name := range taken {
		q.seq++
		q.items = append(q.items, &Item{Seq: q.seq, Path: filepath.Join(q.cfg.Dir, name), Name: name, State: Waiting, Added: time.Now()})
	}
	if over := len(q.items) - q.cfg.KeepItems; over > 0 {
		q.items = append([]*Item(nil), q.items[over:]...)
	}
	q.mu.Unlock()
	q.changed()
}

// measureWaiting measures the waiting items in order until none is left
// or ctx ends.
func (q *Queue) measureWaiting(ctx context.Context) {
	for ctx.Err() == nil {
		q.mu.Lock()
		var it *Item
		for _, x := range q.items {
			if x.State == Waiting {
				it = x
				break
			}
		}
		if it == nil {
			q.mu.Unlock()
			return
		}
		it.State = Measuring
		path := it.Path
		q.mu.Unlock()
		q.changed()

		m, err := q.measureFile(ctx, path)
		q.mu.Lock()
		it.Finished = time.Now()
		if err != nil {
			it.State, it.Err = Failed, err.Error()
		} else {
			it.State, it.Measurement = Done, m
		}
		q.dropOldMeasurementsLocked()
		q.mu.Unlock()
		q.changed()
	}
}

// errNotImage is the failure of a file that is not a radiograph.
var errNotImage = errors.New("not a DICOM, JPEG or PNG file")

// measureFile reads a file (at most MaxFileBytes), checks its content is
// an image and measures it.
func (q *Queue) measureFile(ctx context.Context, path string) (*app.Measurement, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, q.cfg.MaxFileBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if int64(len(b)) > q.cfg.MaxFileBytes {
		return nil, fmt.Errorf("file over %d MB", q.cfg.MaxFileBytes>>20)
	}
	if app.ImageKind(b) == "" {
		return nil, errNotImage
	}
	return q.measure(ctx, b)
}

// dropOldMeasurementsLocked keeps the measurements of the newest
// KeepMeasurements done items only.
func (q *Queue) dropOldMeasurementsLocked() {
	kept := 0
	for i := len(q.items) - 1; i >= 0; i-- {
		if q.items[i].Measurement == nil {
			continue
		}
		if kept++; kept > q.cfg.KeepMeasurements {
			q.items[i].Measurement = nil
		}
	}
}

// changed calls the OnChange function.
func (q *Queue) changed() {
	q.mu.Lock()
	f := q.onChange
	q.mu.Unlock()
	if f != nil {
		f()
	}
}
