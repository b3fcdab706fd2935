package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"vetlens/app/dogheart"
	"vetlens/app/repo"
	"vetlens/engine/imageproc"
)

// DatasetSummary is what ExportDataset or ImportDataset did.
type DatasetSummary struct {
	// Written counts cases written (export) or added to the pool (import).
	Written int
	// Edited and Manual count written cases by kind (export; SyncPool:
	// the cases added to the pool).
	Edited, Manual int
	// Updated counts pool cases whose landmarks a later correction of
	// the same image replaced (SyncPool).
	Updated int
	// Duplicates counts imported images already in the pool.
	Duplicates int
	// Skipped counts corrections without a kept image or 7 landmarks
	// (export), or labels that are not MATLAB v5 files (import).
	Skipped int
	// SpanCounted counts imported cases whose Vertebra A-B span (the
	// label's E-F points) the image let count with its own vertebral
	// length (cardiac.CountSpan, guard 9's count); SpanNotSix names, by
	// pool case, those whose span is not six vertebrae: labels that may
	// not mark T4's cranial and T9's caudal endplates (import).
	SpanCounted int
	SpanNotSix  []string
	// InPool counts corrections whose image the pool already holds, not
	// written again (SyncPool); Uncorrected counts model measurements in
	// effect, which teach the models nothing (export).
	InPool, Uncorrected int
}

// PatientHash is the salted hash that stands for a patient id in an
// exported dataset: the same salt gives the same hash, and the hash
// does not reveal the id without the salt.
func PatientHash(salt []byte, patientID PatientID) string {
	m := hmac.New(sha256.New, salt)
	m.Write([]byte("patient\x00" + patientID.String()))
	return hex.EncodeToString(m.Sum(nil))[:24]
}

// ExportDataset writes every measurement whose landmarks a clinician
// corrected ("edited") or placed ("manual") into dir, in the DogHeart
// layout (dogheart package) with a provenance.json sidecar. Hidden
// entries and corrections that a later entry supersedes are left out;
// patient ids become PatientHash(salt, id). dir must be empty or absent.
func ExportDataset(ctx context.Context, repos repo.Repos, dir string, salt []byte) (DatasetSummary, error) {
	return exportDataset(ctx, learningRepos{History: repos.History, Patients: repos.Patients}, dir, salt, nil)
}

// exportDataset is ExportDataset leaving out (and counting in InPool)
// the corrections inPool reports held already, given the image's
// SHA-256 (hex), the patient hash and when the correction was saved;
// nil leaves out none.
func exportDataset(ctx context.Context, repos learningRepos, dir string, salt []byte, inPool func(sha, patient string, saved time.Time) bool) (DatasetSummary, error) {
	var sum DatasetSummary
	if len(salt) == 0 {
		return sum, errors.New("export dataset: no salt")
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return sum, fmt.Errorf("export dataset: %s is not empty", dir)
	}
	ids, err := repos.Patients.PatientIDs(ctx, "", 0)
	if err != nil {
		return sum, fmt.Errorf("export dataset: list patients: %w", err)
	}
	side := dogheart.Sidecar{Cases: []dogheart.Provenance{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		entries, err := repos.History.ListPatient(ctx, id)
		if err != nil {
			return sum, fmt.Errorf("export dataset: history: %w", err)
		}
		superseded := map[uint64]bool{}
		for _, e := range entries {
			if e.Supersedes != 0 {
				superseded[e.Supersedes] = true
			}
		}
		ph := PatientHash(salt, id)
		for _, e := range entries {
			kind := EntryKind(e.HistoryEntry)
			if e.Hidden != nil || superseded[e.Seq] {
				continue
			}
			if !kind.Clinician() {
				sum.Uncorrected++
				continue
			}
			if !e.HasImage || len(e.Landmarks) != 7 {
				sum.Skipped++
				continue
			}
			if inPool != nil && e.ImageSHA256 != "" && inPool(e.ImageSHA256, ph, e.Time) {
				sum.InPool++
				continue
			}
			img, err := repos.History.Image(ctx, e.Customer, id.String(), e.Seq)
			if errors.Is(err, repo.ErrNotFound) {
				sum.Skipped++
				continue
			}
			if err != nil {
				return sum, fmt.Errorf("export dataset: image: %w", err)
			}
			var six [6][2]float64
			for i, k := range dogheart.SpecOrder {
				six[i] = e.Landmarks[k]
			}
			stem := fmt.Sprintf("vl-%s-%d", ph[:12], e.Seq)
			if err := dogheart.WriteCase(dir, stem, img, six); err != nil {
				return sum, fmt.Errorf("export dataset: %w", err)
			}
			vp := e.Landmarks[dogheart.VLASIndex]
			h := sha256.Sum256(img)
			side.Cases = append(side.Cases, dogheart.Provenance{
				Case: stem, Patient: ph, Kind: string(kind), ModelVersion: e.ModelVersion, Date: e.Time.UTC(),
				VLASPoint: &vp, VHS: e.VHS, VLAS: e.VLAS, ImageSHA256: hex.EncodeToString(h[:]),
			})
			sum.Written++
			if kind == MeasurementManual {
				sum.Manual++
			} else {
				sum.Edited++
			}
		}
	}
	if err := dogheart.WriteSidecar(dir, side); err != nil {
		return sum, fmt.Errorf("export dataset: %w", err)
	}
	return sum, nil
}

// ImportDataset copies the labelled images of src, an exported dataset
// or a plain DogHeart/CCK folder, into the pool folder (same layout),
// skipping images whose SHA-256 the pool already holds. A case keeps its
// provenance when src has one, else it is recorded as kind "dogheart".
func ImportDataset(ctx context.Context, src, pool string) (DatasetSummary, error) {
	return importDataset(ctx, src, pool, nil)
}

// importDataset is ImportDataset where an image the pool holds takes
// src's label and provenance when replace says so (by its SHA-256, hex;
// counted in Updated, not in Duplicates). Edited and Manual count the
// cases added by their provenance's kind.
func importDataset(ctx context.Context, src, pool string, replace func(sha string) bool) (DatasetSummary, error) {
	var sum DatasetSummary
	stems, err := dogheart.Stems(src)
	if err != nil {
		return sum, fmt.Errorf("import dataset: %w", err)
	}
	if len(stems) == 0 {
		return sum, fmt.Errorf("import dataset: no labelled images in %s (want Images/*.png with Labels/*.mat)", src)
	}
	srcSide, err := dogheart.ReadSidecar(src)
	if err != nil {
		return sum, fmt.Errorf("import dataset: %w", err)
	}
	prov := map[string]dogheart.Provenance{}
	for _, p := range srcSide.Cases {
		prov[p.Case] = p
	}
	side, err := dogheart.ReadSidecar(pool)
	if err != nil {
		return sum, fmt.Errorf("import dataset: pool: %w", err)
	}
	for _, sub := range []string{"Images", "Labels"} {
		if err := os.MkdirAll(filepath.Join(pool, sub), 0o755); err != nil {
			return sum, fmt.Errorf("import dataset: %w", err)
		}
	}
	for _, stem := range stems {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		img, err := os.ReadFile(filepath.Join(src, "Images", stem+".png"))
		if err != nil {
			return sum, fmt.Errorf("import dataset: %w", err)
		}
		label, err := os.ReadFile(filepath.Join(src, "Labels", stem+".mat"))
		if err != nil {
			return sum, fmt.Errorf("import dataset: %w", err)
		}
		if !dogheart.IsMat(label) {
			sum.Skipped++
			continue
		}
		h := sha256.Sum256(img)
		hexh := hex.EncodeToString(h[:])
		name := "img-" + hexh[:20]
		p, ok := prov[stem]
		if !ok {
			p = dogheart.Provenance{Kind: "dogheart"}
		}
		p.Case, p.ImageSHA256 = name, hexh
		if _, err := os.Stat(filepath.Join(pool, "Images", name+".png")); err == nil {
			if replace == nil || !replace(hexh) {
				sum.Duplicates++
				continue
			}
			if err := os.WriteFile(filepath.Join(pool, "Labels", name+".mat"), label, 0o644); err != nil {
				return sum, fmt.Errorf("import dataset: %w", err)
			}
			for i := range side.Cases {
				if side.Cases[i].Case == name {
					side.Cases[i] = p
				}
			}
			sum.Updated++
			countLabelSpan(&sum, name, img, label)
			continue
		}
		if err := os.WriteFile(filepath.Join(pool, "Labels", name+".mat"), label, 0o644); err != nil {
			return sum, fmt.Errorf("import dataset: %w", err)
		}
		if err := os.WriteFile(filepath.Join(pool, "Images", name+".png"), img, 0o644); err != nil {
			return sum, fmt.Errorf("import dataset: %w", err)
		}
		side.Cases = append(side.Cases, p)
		sum.Written++
		switch MeasurementKind(p.Kind) {
		case MeasurementEdited:
			sum.Edited++
		case MeasurementManual:
			sum.Manual++
		}
		countLabelSpan(&sum, name, img, label)
	}
	if err := dogheart.WriteSidecar(pool, side); err != nil {
		return sum, fmt.Errorf("import dataset: pool: %w", err)
	}
	return sum, nil
}

// countLabelSpan counts the vertebrae between imported case name's
// Vertebra A and B (its image and label file's bytes) with the image's
// own vertebral length and records the result in sum. An image that does
// not decode or a label that does not read is not counted: the import
// itself only copies them.
func countLabelSpan(sum *DatasetSummary, name string, png, label []byte) {
	img, _, err := imageproc.Decode(png)
	if err != nil {
		return
	}
	six, err := dogheart.ParseLabel(label)
	if err != nil {
		return
	}
	c := CheckVertebralSpan(img, dogheart.Landmarks(six))
	if !c.Measured {
		return
	}
	sum.SpanCounted++
	if c.OffSix() {
		sum.SpanNotSix = append(sum.SpanNotSix, name)
	}
}
