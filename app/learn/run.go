package learn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted" // the process died mid-run
)

// Options tune one run.
type Options struct {
	// Steps or Minutes bound the training (0: the trainer's default).
	Steps   int     `json:"steps,omitempty"`
	Minutes float64 `json:"minutes,omitempty"`
	// NoPromote evaluates without promoting (Promote can follow).
	NoPromote bool `json:"no_promote,omitempty"`
	// ShuffleLabels trains on labels permuted between cases (the
	// refusal test; never for real use).
	ShuffleLabels bool `json:"shuffle_labels,omitempty"`
	// Seed fixes the split, the trainer and the bootstrap (0: 1).
	Seed uint64 `json:"seed"`
	// SyntheticN is the synthetic mix's size when it is created (0: the
	// trainer's default).
	SyntheticN int `json:"synthetic_n,omitempty"`
	// Threads is the trainer's thread count (0: its default).
	Threads int `json:"threads,omitempty"`
}

// Rule is one condition of the promotion rule and how it came out.
type Rule struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Run is one learning run's report (DATA/learn/runs/ID.json).
type Run struct {
	ID       string    `json:"id"`
	Status   string    `json:"status"`
	Error    string    `json:"error,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Base is the version fine-tuned from (the one in use at the start);
	// Candidate the version the run trained.
	Base      string      `json:"base"`
	Candidate string      `json:"candidate"`
	Options   Options     `json:"options"`
	Pool      PoolSummary `json:"pool"`
	// Train and HeldOut count the cases on each side of the split.
	Train   int `json:"train"`
	HeldOut int `json:"held_out"`
	// Before and After are the held-out clinic cases measured with the
	// models in use and with the candidate; PhantomBefore and
	// PhantomAfter the phantom regression set.
	Before        *Eval `json:"before,omitempty"`
	After         *Eval `json:"after,omitempty"`
	PhantomBefore *Eval `json:"phantom_before,omitempty"`
	PhantomAfter  *Eval `json:"phantom_after,omitempty"`
	// Bootstrap is the interval of the mean per-case |VHS error|
	// difference after - before on the held-out clinic cases.
	Bootstrap *Interval `json:"bootstrap,omitempty"`
	// Column is how the candidate's column factor was fitted on the
	// training cases (column.go); it is written into its manifest.
	Column *ColumnFit `json:"column,omitempty"`
	// Bound is the candidate's spread bound derived on the held-out
	// clinic cases and the no-dangerous-number rule's figures
	// (bounds.go); the bound is written into the candidate's manifest.
	Bound *HeldOutCheck `json:"bound,omitempty"`
	// ReferenceDiff is the largest |ORT - PyTorch| over the candidate's
	// reference outputs.
	ReferenceDiff float64 `json:"reference_diff"`
	// Curve is the trainer's held-out learning curve (nil when it wrote
	// none).
	Curve        *Curve  `json:"curve,omitempty"`
	Rules        []Rule  `json:"rules,omitempty"`
	Promotable   bool    `json:"promotable"`
	Promoted     bool    `json:"promoted"`
	TrainSeconds float64 `json:"train_seconds"`
}

// Refusal says which rules failed ("" when none did).
func (r Run) Refusal() string {
	var fails []string
	for _, x := range r.Rules {
		if !x.OK {
			fails = append(fails, x.Name+": "+x.Detail)
		}
	}
	return strings.Join(fails, "; ")
}

// Progress fractions of a run's stages.
const (
	fracTrainStart = 0.03
	fracTrainEnd   = 0.80
)

// Learn fine-tunes the landmark models in use on the pool's training
// split, evaluates the candidate and the models in use on the held-out
// cases and the phantom set with the engine, and promotes the candidate
// when the promotion rule holds (unless o.NoPromote). Cancelling ctx
// stops the trainer; a cancelled, failed or crashed run leaves the
// models in use untouched. The report is returned (and kept) whether or
// not the run succeeded; err says why it did not.
func (s *Service) Learn(ctx context.Context, o Options, progress func(Progress)) (Run, error) {
	if progress == nil {
		progress = func(Progress) {}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if s.cfg.Trainer == nil {
		return Run{}, errors.New("learn: no trainer configured")
	}
	if !s.run.TryLock() {
		return Run{}, ErrBusy
	}
	defer s.run.Unlock()
	lock, err := tryLock(s.cfg.Layout.lockFile())
	if err != nil {
		return Run{}, err
	}
	defer lock.Unlock()
	if err := s.cleanup(); err != nil {
		return Run{}, err
	}
	cases, err := LoadPool(s.cfg.Layout.Pool())
	if err != nil {
		return Run{}, err
	}
	train, held, err := Split(cases, HoldOut, o.Seed)
	if err != nil {
		return Run{}, err
	}
	progress(Progress{Stage: "prepare", Message: "checking the trainer"})
	if _, err := s.cfg.Trainer.Check(ctx); err != nil {
		return Run{}, err
	}
	baseDir, err := s.ActiveDir(ctx)
	if err != nil {
		return Run{}, err
	}
	base, err := FamilyVersion(baseDir)
	if err != nil {
		return Run{}, describe("models in use", err)
	}
	version, err := s.nextVersion(ctx)
	if err != nil {
		return Run{}, err
	}
	now := s.cfg.Now().UTC()
	r := Run{ID: now.Format("20060102T150405.000Z"), Status: StatusRunning, Started: now, Base: base, Candidate: version,
		Options: o, Pool: Summarize(cases), Train: len(train), HeldOut: len(held)}
	r.ID = strings.ReplaceAll(r.ID, ".", "")
	if err := s.saveRun(&r); err != nil {
		return r, err
	}
	err = s.learn(ctx, &r, baseDir, train, held, progress)
	r.Finished = s.cfg.Now().UTC()
	switch {
	case err == nil:
		r.Status = StatusDone
	case ctx.Err() != nil:
		r.Status, r.Error = StatusCancelled, "cancelled"
		err = fmt.Errorf("learning cancelled (the models in use are unchanged): %w", ctx.Err())
	default:
		r.Status, r.Error = StatusFailed, err.Error()
	}
	// Nothing of a run that did not finish survives in staging.
	os.RemoveAll(filepath.Join(s.cfg.Layout.Staging(), version))
	os.RemoveAll(filepath.Join(s.cfg.Layout.Staging(), version+".partial"))
	if serr := s.saveRun(&r); serr != nil && err == nil {
		err = serr
	}
	return r, err
}

// cleanup removes what a cancelled or crashed run left in staging and
// the unpromoted candidates of earlier runs, and marks the reports of
// runs that never finished as interrupted.
func (s *Service) cleanup() error {
	for _, d := range []string{s.cfg.Layout.Staging(), s.cfg.Layout.Candidates()} {
		if err := os.RemoveAll(d); err != nil {
			return describe("clean up", err)
		}
	}
	runs, err := s.Runs(context.Background())
	if err != nil {
		return err
	}
	for _, r := range runs {
		// The lock is ours: a report still "running" is of a dead process.
		if r.Status == StatusRunning {
			r.Status = StatusInterrupted
			if err := s.saveRun(&r); err != nil {
				return err
			}
		}
	}
	return os.MkdirAll(s.cfg.Layout.Staging(), 0o755)
}

func (s *Service) learn(ctx context.Context, r *Run, baseDir string, train, held []Case, progress func(Progress)) error {
	if err := s.ensurePhantoms(ctx, progress); err != nil {
		return err
	}
	casesFile, err := s.writeStems(r.ID+"-cases.json", train)
	if err != nil {
		return describe("write training cases", err)
	}
	// The held-out stems, for the trainer's learning curve only.
	evalFile, err := s.writeStems(r.ID+"-heldout.json", held)
	if err != nil {
		return describe("write held-out cases", err)
	}
	out := filepath.Join(s.cfg.Layout.Staging(), r.Candidate)
	spec := TrainSpec{Pool: s.cfg.Layout.Pool(), CasesFile: casesFile, EvalCasesFile: evalFile, Base: baseDir, Out: out, Version: r.Candidate,
		Steps: r.Options.Steps, Minutes: r.Options.Minutes, Synthetic: s.cfg.Layout.Synthetic(), SyntheticN: r.Options.SyntheticN,
		Seed: int64(r.Options.Seed), Threads: r.Options.Threads, ShuffleLabels: r.Options.ShuffleLabels}
	progress(Progress{Stage: "train", Fraction: fracTrainStart, Message: fmt.Sprintf("fine-tuning %s on %d cases (%d held out)", r.Candidate, len(train), len(held))})
	t0 := time.Now()
	err = s.cfg.Trainer.Train(ctx, spec, func(p Progress) {
		p.Fraction = fracTrainStart + (fracTrainEnd-fracTrainStart)*math.Min(1, math.Max(0, p.Fraction))
		progress(p)
	})
	r.TrainSeconds = time.Since(t0).Seconds()
	if err != nil {
		return describe("train", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.Curve, err = readCurve(out); err != nil {
		return describe("read the trainer's held-out curve", err)
	}
	// The candidate must be what the contract promises before it is
	// measured: a complete models directory of the right version whose
	// landmark models ONNX Runtime reproduces.
	refDiff, refErr := s.cfg.Models.VerifyReference(ctx, out)
	r.ReferenceDiff = refDiff
	cand, err := s.cfg.Models.Open(out)
	if err != nil {
		return fmt.Errorf("the trained models do not load: %w", err)
	}
	closeCand := func() {
		if cand != nil {
			cand.Close()
			cand = nil
		}
	}
	defer closeCand()
	if v := cand.ModelVersion(); v != r.Candidate {
		return fmt.Errorf("the trainer wrote model_version %q, want %q", v, r.Candidate)
	}
	// The column's factor, fitted on the training cases and written into
	// the candidate's manifest before it is judged; the candidate is
	// opened again from its manifest, so it is judged with it (column.go).
	if r.Column, err = s.fitColumnFactor(ctx, cand, out, train, progress); err != nil {
		return err
	}
	if r.Column.Param != "" {
		closeCand()
		if cand, err = s.cfg.Models.Open(out); err != nil {
			return fmt.Errorf("the candidate does not load with its column factor: %w", err)
		}
	}
	cur, err := s.cfg.Models.Open(baseDir)
	if err != nil {
		return describe("load the models in use", err)
	}
	defer cur.Close()
	phantoms, err := phantomEvalCases(s.cfg.Layout.Phantoms())
	if err != nil {
		return err
	}
	clinic := poolEvalCases(s.cfg.Layout.Pool(), held)
	total, done := 2*(len(clinic)+len(phantoms)), 0
	step := func() {
		done++
		progress(Progress{Stage: "evaluate", Step: done, Steps: total,
			Fraction: fracTrainEnd + (0.99-fracTrainEnd)*float64(done)/float64(total),
			Message:  fmt.Sprintf("evaluating %d/%d", done, total)})
	}
	var evs [4]Eval
	for i, job := range []struct {
		m     Measurer
		cases []evalCase
	}{{cur, clinic}, {cand, clinic}, {cur, phantoms}, {cand, phantoms}} {
		if evs[i], err = evaluate(ctx, job.m, job.cases, step); err != nil {
			return err
		}
	}
	r.Before, r.After, r.PhantomBefore, r.PhantomAfter = &evs[0], &evs[1], &evs[2], &evs[3]
	iv := PairedBootstrap(r.Before.VHSAbsErr, r.After.VHSAbsErr, Resamples, r.Options.Seed)
	r.Bootstrap = &iv
	// The candidate's own spread bound, derived on the held-out cases
	// (not inherited from the models it started from), written into its
	// manifest so the engine that serves it uses it.
	hc := CheckHeldOut(r.After.outcomes)
	r.Bound = &hc
	closeCand() // its files change, then move
	if hc.OK {
		r.After.applyBound(hc.Bound)
		r.PhantomAfter.applyBound(hc.Bound)
		if hc.Param, err = writeSpreadBound(out, hc.Bound); err != nil {
			return describe("write the candidate's spread bound", err)
		}
	}
	r.Rules = decide(r, refErr)
	r.Promotable = r.Refusal() == ""
	progress(Progress{Stage: "decide", Fraction: 0.99, Message: decision(r)})
	if err := os.MkdirAll(s.cfg.Layout.Candidates(), 0o755); err != nil {
		return describe("keep candidate", err)
	}
	if err := os.Rename(out, filepath.Join(s.cfg.Layout.Candidates(), r.Candidate)); err != nil {
		return describe("keep candidate", err)
	}
	if r.Promotable && !r.Options.NoPromote {
		if _, err := s.promote(ctx, r); err != nil {
			return err
		}
	}
	progress(Progress{Stage: "decide", Fraction: 1, Message: decision(r)})
	return nil
}

// writeStems writes the cases' stems as a JSON list into staging.
func (s *Service) writeStems(name string, cases []Case) (string, error) {
	stems := make([]string, len(cases))
	for i, c := range cases {
		stems[i] = c.Stem
	}
	b, err := json.Marshal(stems)
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.cfg.Layout.Staging(), name)
	return path, os.WriteFile(path, b, 0o644)
}

// decide applies the promotion rule (docs/learning.md).
func decide(r *Run, refErr error) []Rule {
	iv := r.Bootstrap
	clinic := Rule{Name: "clinic held-out cases",
		OK: iv.Hi < 0,
		Detail: fmt.Sprintf("VHS MAE %.3f -> %.3f v; paired bootstrap 95%% interval of the per-case |VHS error| difference [%+.3f, %+.3f] v (%d resamples), must lie entirely below 0",
			r.Before.VHSMAE, r.After.VHSMAE, iv.Lo, iv.Hi, iv.Resamples)}
	ph := Rule{Name: "phantom regression set",
		OK: r.PhantomAfter.VHSMAE <= r.PhantomBefore.VHSMAE+PhantomTolerance,
		Detail: fmt.Sprintf("VHS MAE %.3f -> %.3f v on %d phantoms, tolerance +%.2f v",
			r.PhantomBefore.VHSMAE, r.PhantomAfter.VHSMAE, r.PhantomAfter.Cases, PhantomTolerance)}
	acc := Rule{Name: "clinic accuracy",
		OK: r.After.Cases > 0 && r.After.VHSMAE <= MaxPromotedVHSMAE,
		Detail: fmt.Sprintf("VHS MAE %.3f v on %d held-out clinic cases, must be at most %.2f v",
			r.After.VHSMAE, r.After.Cases, MaxPromotedVHSMAE)}
	ref := Rule{Name: "reference outputs", OK: refErr == nil,
		Detail: fmt.Sprintf("ONNX Runtime reproduces the trainer's outputs within %.2g", r.ReferenceDiff)}
	if refErr != nil {
		ref.Detail = refErr.Error()
	}
	return []Rule{clinic, acc, dangerRule(*r.Bound, r.After.Cases), ph, ref}
}

// decision is the run's outcome in words.
func decision(r *Run) string {
	switch {
	case r.Promoted:
		return "promoted " + r.Candidate
	case r.Promotable:
		return r.Candidate + " meets the promotion rule (not promoted: --no-promote)"
	default:
		return "refused promotion of " + r.Candidate + ": " + r.Refusal()
	}
}

// Decision is a run's outcome in words.
func (r Run) Decision() string { return decision(&r) }

// ensurePhantoms creates the phantom regression set once.
func (s *Service) ensurePhantoms(ctx context.Context, progress func(Progress)) error {
	dir := s.cfg.Layout.Phantoms()
	if _, err := os.Stat(filepath.Join(dir, "truth.json")); err == nil {
		return nil
	}
	progress(Progress{Stage: "prepare", Fraction: 0.01, Message: fmt.Sprintf("creating the held-out phantom set (%d radiographs, once)", s.cfg.Phantoms)})
	tmp := filepath.Join(s.cfg.Layout.Staging(), "phantoms")
	if err := s.cfg.Trainer.MakePhantoms(ctx, tmp, s.cfg.Phantoms); err != nil {
		return describe("create the phantom set", err)
	}
	os.RemoveAll(dir)
	return describe("create the phantom set", os.Rename(tmp, dir))
}

// promote appends the model card, moves the candidate into versions/
// (immutable from then on), publishes it and makes it active.
func (s *Service) promote(ctx context.Context, r *Run) (Version, error) {
	src := filepath.Join(s.cfg.Layout.Candidates(), r.Candidate)
	if _, err := os.Stat(src); err != nil {
		return Version{}, fmt.Errorf("the candidate %s is no longer kept (a later run removed it): run learn again", r.Candidate)
	}
	if err := appendCard(src, r, s.cfg.Now().UTC()); err != nil {
		return Version{}, describe("model card", err)
	}
	if err := os.MkdirAll(s.cfg.Layout.Versions(), 0o755); err != nil {
		return Version{}, describe("promote", err)
	}
	dst := filepath.Join(s.cfg.Layout.Versions(), r.Candidate)
	if err := os.Rename(src, dst); err != nil {
		return Version{}, describe("promote", err)
	}
	if err := s.cfg.Registry.Publish(ctx, r.Candidate, dst); err != nil {
		return Version{}, describe("publish "+r.Candidate, err)
	}
	if err := s.cfg.Registry.SetActive(ctx, r.Candidate); err != nil {
		return Version{}, describe("record active version", err)
	}
	r.Promoted = true
	if err := s.Sync(ctx); err != nil {
		return Version{}, err
	}
	return Version{Name: r.Candidate, Dir: dst, Active: true, Created: s.cfg.Now().UTC()}, nil
}

// cardFile is the model card in a models directory.
const cardFile = "CARDIAC_MODEL_CARD.md"

// appendCard appends the run's figures to the candidate's model card.
func appendCard(dir string, r *Run, now time.Time) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n## Clinic version %s (%s)\n\n", r.Candidate, now.Format("2006-01-02"))
	fmt.Fprintf(&b, "Fine-tuned on site from %s on %d of the clinic's %d corrected cases (%d patients; kinds %v), mixed with the synthetic set; %.0f s of training.\n\n",
		r.Base, r.Train, r.Pool.Cases, r.Pool.Patients, r.Pool.ByKind, r.TrainSeconds)
	fmt.Fprintf(&b, "| held out | cases | VHS MAE before | after | within 0.5 v before | after |\n|---|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		a, z *Eval
	}{{"clinic cases (grouped by patient)", r.Before, r.After}, {"phantom regression set", r.PhantomBefore, r.PhantomAfter}} {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %.0f %% | %.0f %% |\n", row.name, row.z.Cases, row.a.VHSMAE, row.z.VHSMAE, 100*row.a.Within05, 100*row.z.Within05)
	}
	if r.Column != nil {
		fmt.Fprintf(&b, "\nColumn factor (v over the column's period): %s.\n", r.Column.Summary())
	}
	fmt.Fprintf(&b, "\nPer-landmark mean error on the held-out clinic cases (px, before -> after): ")
	for i, l := range r.After.Landmarks {
		if l.N > 0 {
			fmt.Fprintf(&b, "%s %.1f -> %.1f; ", l.Name, r.Before.Landmarks[i].Px, l.Px)
		}
	}
	fmt.Fprintf(&b, "\n\nPromotion rule: %s.\n", strings.Join(ruleLines(r.Rules), "; "))
	f, err := os.OpenFile(filepath.Join(dir, cardFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(b.String())
	return errors.Join(werr, f.Close())
}

func ruleLines(rs []Rule) []string {
	out := make([]string, len(rs))
	for i, x := range rs {
		ok := "held"
		if !x.OK {
			ok = "FAILED"
		}
		out[i] = fmt.Sprintf("%s %s (%s)", x.Name, ok, x.Detail)
	}
	return out
}
