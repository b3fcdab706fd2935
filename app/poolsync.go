package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"vetlens/app/dogheart"
)

// SyncPool brings the saved corrections into the learning pool at pool
// (app/learn's Layout.Pool), so that they count without an export and
// import step: every measurement whose landmarks a clinician corrected
// or placed by hand, in effect (neither removed nor corrected since),
// with its image kept, and whose image the pool does not hold yet, is
// exported (ExportDataset's rules, patient ids hashed with the salt kept
// in saltFile, created on first use) and imported (ImportDataset). An
// image the pool holds from this clinic's corrections of the same
// patient takes a later correction's landmarks (the image corrected
// again); one it holds from elsewhere (an imported folder, another
// patient) keeps its own. The summary says what was added (Written,
// Edited, Manual) or updated (Updated) and why the rest does not count:
// already in the pool (InPool), no image kept (Skipped: API
// measurements, entries older than kept images), model measurements
// (Uncorrected).
func (s *Learning) SyncPool(ctx context.Context, pool, saltFile string) (DatasetSummary, error) {
	salt, err := dogheart.LoadOrCreateSalt(saltFile)
	if err != nil {
		return DatasetSummary{}, fmt.Errorf("sync the learning pool: %w", err)
	}
	tmp, err := os.MkdirTemp("", "vetlens-pool-sync-")
	if err != nil {
		return DatasetSummary{}, fmt.Errorf("sync the learning pool: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "export")
	side, err := dogheart.ReadSidecar(pool)
	if err != nil {
		return DatasetSummary{}, fmt.Errorf("sync the learning pool: %w", err)
	}
	held := map[string]dogheart.Provenance{} // by image SHA-256
	for _, p := range side.Cases {
		held[p.ImageSHA256] = p
	}
	stale := map[string]bool{}
	inPool := func(sha, patient string, saved time.Time) bool {
		if len(sha) < 20 {
			return false
		}
		if _, err := os.Stat(filepath.Join(pool, "Images", "img-"+sha[:20]+".png")); err != nil {
			return false
		}
		p, ok := held[sha]
		if ok && p.Patient == patient && MeasurementKind(p.Kind).Clinician() && p.Date.Before(saved) {
			stale[sha] = true // corrected again since it joined
			return false
		}
		return true
	}
	sum, err := exportDataset(ctx, s.repos, dir, salt, inPool)
	if err != nil {
		return sum, fmt.Errorf("sync the learning pool: %w", err)
	}
	if sum.Written == 0 {
		return sum, nil
	}
	imp, err := importDataset(ctx, dir, pool, func(sha string) bool { return stale[sha] })
	if err != nil {
		return sum, fmt.Errorf("sync the learning pool: %w", err)
	}
	sum.InPool += imp.Duplicates
	sum.Written, sum.Edited, sum.Manual, sum.Updated = imp.Written, imp.Edited, imp.Manual, imp.Updated
	sum.SpanCounted, sum.SpanNotSix = imp.SpanCounted, imp.SpanNotSix
	return sum, nil
}
