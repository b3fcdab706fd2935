package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"vetlens/internal/dogheart"
)

// SyncPool brings the saved corrections into the learning pool at pool
// (app/learn's Layout.Pool), so that they count without an export and
// import step: every measurement whose landmarks a clinician corrected
// or placed by hand, in effect (neither removed nor corrected since),
// with its image kept, and whose image the pool does not hold yet, is
// exported (ExportDataset's rules, patient ids hashed with the salt kept
// in saltFile, created on first use) and imported (ImportDataset). The
// summary says what was added (Written, Edited, Manual) and why the
// rest does not count: already in the pool (InPool; the pool keeps the
// landmarks it has for an image), no image kept (Skipped: API
// measurements, entries older than kept images), model measurements
// (Uncorrected).
func (s *Service) SyncPool(ctx context.Context, pool, saltFile string) (DatasetSummary, error) {
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
	inPool := func(sha string) bool {
		if len(sha) < 20 {
			return false
		}
		_, err := os.Stat(filepath.Join(pool, "Images", "img-"+sha[:20]+".png"))
		return err == nil
	}
	sum, err := exportDataset(ctx, s.repos, dir, salt, inPool)
	if err != nil {
		return sum, fmt.Errorf("sync the learning pool: %w", err)
	}
	if sum.Written == 0 {
		return sum, nil
	}
	imp, err := ImportDataset(ctx, dir, pool)
	if err != nil {
		return sum, fmt.Errorf("sync the learning pool: %w", err)
	}
	sum.InPool += imp.Duplicates
	sum.Written, sum.SpanCounted, sum.SpanNotSix = imp.Written, imp.SpanCounted, imp.SpanNotSix
	return sum, nil
}
