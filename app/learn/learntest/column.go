package learntest

import (
	"context"
	"image"

	"vetlens/app/learn"
	"vetlens/engine/cardiac"
	"vetlens/engine/manifest"
)

// ColumnModels are Models on the column route, whose images show a
// column of known period: on each image the truth's vertebral unit
// (|A-B| / 6) is Ratio times the column's period, and a version measures
// VHS as the column route does, its heart over its manifest's column
// factor (cardiac.FamilyColumnFactor, as cardiac.Load reads it) times
// the period.
type ColumnModels struct {
	Models
	// Ratio is the true vertebral unit over the column's period; Jitter
	// spreads it by up to this share either way, case by case.
	Ratio, Jitter float64
	// Score is every column's score (0: 0.9, a plain column).
	Score float64
}

// Open reads dir's version and column factor.
func (f ColumnModels) Open(dir string) (learn.Measurer, error) {
	m, err := f.Models.Open(dir)
	if err != nil {
		return nil, err
	}
	man, err := manifest.Load(dir)
	if err != nil {
		return nil, err
	}
	fam, err := man.Family(cardiac.Family)
	if err != nil {
		return nil, err
	}
	factor, err := cardiac.FamilyColumnFactor(fam)
	if err != nil {
		return nil, err
	}
	return columnMeasurer{Measurer: m, f: f, factor: factor}, nil
}

type columnMeasurer struct {
	learn.Measurer
	f      ColumnModels
	factor float64
}

// Measure is Models' reading with the column's period and score and the
// route's VHS over factor x period.
func (m columnMeasurer) Measure(ctx context.Context, img image.Image) (learn.Reading, error) {
	rd, err := m.Measurer.Measure(ctx, img)
	if err != nil {
		return rd, err
	}
	w := img.Bounds().Dx()
	t := m.f.Truth[w]
	ratio := m.f.Ratio * (1 + m.f.Jitter*float64(w%5-2)/2)
	rd.ColumnPeriod = t[cardiac.VertebraA].Dist(t[cardiac.VertebraB]) / 6 / ratio
	rd.ColumnScore = m.f.Score
	if rd.ColumnScore == 0 {
		rd.ColumnScore = 0.9
	}
	g := cardiac.Measure(rd.Raw)
	rd.RouteVHS = (g.LongAxis + g.ShortAxis) / (m.factor * rd.ColumnPeriod)
	return rd, nil
}
