package cardiac

import (
	"image"
	"math"
)

// The column finder (docs/cardiac.md, "The column route"). The thoracic
// spine repeats once per vertebra: bright vertebral bodies and endplates,
// dark disc spaces, a rib head at every junction. FindColumn looks for the
// band dorsal to the heart whose grey profile repeats most plainly and
// measures that repeat: the column's own period, which gives the
// vertebral unit v without trusting any model's vertebral landmarks. The
// models' heart points and their Vertebra A-B serve only as a prior: the
// heart's size bounds the period sought, the carina sets where the band
// may lie, and the A-B line gives the direction the bands start from.
const (
	// ColumnVertebraFactor turns the column's period (a vertebral body
	// with its disc) into the vertebral unit v. The spec counts VHS in
	// vertebrae along the spine from T4, and in a count one vertebra runs
	// from its cranial edge to the next one's: one period, so 1.0. The
	// generators' label conventions lie either side (the simulator's
	// exact T4-T9 span is 0.972 x 6 periods, sim/phantom.py's 1.017 x 6;
	// docs/cardiac.md, "v, Vertebra A and Vertebra B").
	ColumnVertebraFactor = 1.0
	// ColumnCarinaPeriods is how many periods T4's cranial endplate lies
	// cranial of the carina's foot on the column: the median on the
	// simulator's validation radiographs at their exact landmarks
	// (bench/columncal). Vertebra A is placed there, B six units caudal.
	ColumnCarinaPeriods = 1.2
	// MinColumnScore (guard column_weak): a column whose repeat scores
	// below this withholds the VHS (code 5). Chosen on validation sets
	// only (docs/cardiac.md, "The column route").
	MinColumnScore = 0.55
)

// The search (all lengths in the prior vertebra v0 = (long + short) / 10
// of the models' heart, the unit of a heart of VHS 10).
const (
	colCellsPerV   = 12.0 // grid cells per v0 along and across the column
	colMinCellPx   = 0.5  // the grid's finest cell, pixels of the image
	colBeforeV     = 3.5  // the band runs from 3.5 v0 cranial of the carina's foot
	colAfterV      = 7.0  // to 7 v0 caudal of it (about T2 to T11)
	colDorsalMinV  = 0.75 // bands lie at least 0.75 v0 dorsal of the carina
	colDorsalMaxV  = 4.5  // and at most 4.5 v0 dorsal of it
	colHalfWidthV  = 0.25 // each band averages +/- 0.25 v0 across
	colOffsetStepV = 1.0 / 6
	colMaxTiltDeg  = 8.0 // bands turned up to 8 degrees from the prior's A-B
	colTiltStepDeg = 2.0
	colMinVHS      = 5.5  // the period is sought where (long + short) / period
	colMaxVHS      = 16.0 // is 5.5 to 16: beyond the VHS guard's 6-15 on both sides
	colTrendV      = 2.5  // moving-average detrend window
	colPriorWeight = 0.05 // score handicap per v0 of a band's distance from the prior's A-B line
	colSubharmonic = 0.6  // a peak at 1/2 or 1/3 of the highest lag with 0.6 of its height is the period
	colNearScore   = 0.1  // bands within 0.1 of the best score may be the column if their repeat is stronger
	colMinAmpShare = 0.3  // a band varying less than 0.3 of the most varied band's profile is not bone
	colMinValid    = 0.7  // a band with fewer of its cells inside the image is skipped
	colMaxSamples  = 3    // points averaged per grid cell and axis (anti-aliasing)
)

// Column is the thoracic spine as FindColumn measured it.
type Column struct {
	// Period is one vertebra's length (body and disc) along the column,
	// in pixels of the image.
	Period float64
	// V is the vertebral unit: Period * ColumnVertebraFactor (FindColumn),
	// or * the model version's own factor (Engine.ColumnVertebraFactor,
	// the manifest's ParamColumnVertebraFactor) when the engine measures.
	V float64
	// Score is the correlation of the column's grey profile with itself
	// shifted by one period (-1..1; the larger, the plainer the repeat).
	Score float64
	// Carina is the carina's foot on the column's centre line, and Dir
	// the column's unit direction from cranial to caudal (the prior's
	// A to B), both in pixels of the image.
	Carina, Dir Point
}

// A is Vertebra A on the column: T4's cranial endplate,
// ColumnCarinaPeriods periods cranial of the carina's foot.
func (c Column) A() Point { return addScaled(c.Carina, c.Dir, -ColumnCarinaPeriods*c.Period) }

// B is Vertebra B on the column: six units v caudal of A, so that
// |A-B| / 6 is the column's v.
func (c Column) B() Point { return addScaled(c.A(), c.Dir, 6*c.V) }

// FindColumn finds the thoracic column in img dorsal to the heart of
// prior (landmarks in pixels of img: the models' ensemble mean) and
// measures its period. It samples the image once into a grid aligned
// with the prior's Vertebra A-B, one cell every v0/12, from 3.5 v0
// cranial to 7 v0 caudal of the carina's foot and from 0.75 to 4.5 v0
// dorsal of the carina. Every band of +/- 0.25 v0 across, turned by up to
// 8 degrees and offset in steps of v0/6, gives a detrended grey profile;
// its correlation with itself at lags whose period would make VHS 5.5 to
// 16 is searched for the period (fundamentalPeak). Among the bands whose
// profile varies at least colMinAmpShare as much as the most varied
// band's, the best score (less a small handicap for the band's distance
// from the prior's A-B) sets the direction, and across it the band with
// the strongest repeat among those scoring nearly as well is the column;
// its period is refined between samples by parabolas through the first
// three multiples of the peak. ok is false when the prior's heart or A-B
// is degenerate or not finite, when no band lies mostly inside the
// image, or when no band repeats at all.
func FindColumn(img image.Image, prior Landmarks) (Column, bool) {
	for _, p := range prior {
		if !isFinite(p.X) || !isFinite(p.Y) {
			return Column{}, false
		}
	}
	heart := prior[HeartTop].Dist(prior[HeartBottom]) + prior[HeartRight].Dist(prior[HeartLeft])
	ab := sub(prior[VertebraB], prior[VertebraA])
	if !(heart > 0) || !(norm(ab) > 0) {
		return Column{}, false
	}
	u := scaled(ab, 1/norm(ab))
	n := Point{-u.Y, u.X}
	carina := prior[HeartTop]
	// Dorsal is away from the apex.
	if dot(n, sub(prior[HeartBottom], carina)) > 0 {
		n = scaled(n, -1)
	}
	v0 := heart / 10
	cell := math.Max(v0/colCellsPerV, colMinCellPx)
	perV := v0 / cell
	tilt := math.Tan(colMaxTiltDeg * math.Pi / 180)
	nt := int(math.Ceil((colBeforeV + colAfterV) * perV))
	slack := (colBeforeV + colAfterV) / 2 * tilt // how far a turned band leaves its row
	sLo, sHi := colDorsalMinV-colHalfWidthV-slack, colDorsalMaxV+colHalfWidthV+slack
	ns := int(math.Ceil((sHi - sLo) * perV))
	if nt < 8 || ns < 2 || nt*ns > 1<<22 {
		return Column{}, false
	}
	origin := addScaled(addScaled(carina, u, -colBeforeV*v0), n, sLo*v0)
	g := sampleGrid(img, origin, scaled(u, cell), scaled(n, cell), nt, ns)

	// The prior's A-B line, in rows of the grid.
	abRow := (dot(n, sub(prior[VertebraA], carina)) - sLo*v0) / cell
	lagLo := int(math.Floor(heart / colMaxVHS / cell))
	lagHi := int(math.Ceil(heart / colMinVHS / cell))
	if lagLo < 2 || 3*lagHi >= nt {
		lagHi = min(lagHi, (nt-1)/3)
		if lagLo < 2 || lagHi <= lagLo {
			return Column{}, false
		}
	}
	win := max(3, int(math.Round(colTrendV*perV)))
	prof := make([]float64, nt)
	trend := make([]float64, nt)
	ac := make([]float64, 3*lagHi+3)
	// The lags a band's peak search reads: its window and the neighbours
	// of a third of it (fundamentalPeak); the chosen band's refinement
	// reads up to three periods.
	firstLag := max(0, int(math.Floor(float64(lagLo)*0.9/3))-1)
	half := colHalfWidthV * perV
	mid := float64(nt-1) / 2
	pivot := colBeforeV * perV // the carina's foot, in columns of the grid

	// Every scorable band, then the column among them.
	type band struct {
		row, slope, score, eff, amp float64
		lag                         int
	}
	var bands []band
	for deg := -colMaxTiltDeg; deg <= colMaxTiltDeg+1e-9; deg += colTiltStepDeg {
		slope := math.Tan(deg * math.Pi / 180)
		for off := colDorsalMinV; off <= colDorsalMaxV+1e-9; off += colOffsetStepV {
			row := (off - sLo) * perV // the band's centre row at the carina's foot
			if !g.bandProfile(row, slope, pivot, half, prof) {
				continue
			}
			amp := math.Sqrt(detrend(prof, win, trend) / float64(nt))
			if !(amp > periodMinProfileSD) {
				continue
			}
			correlations(prof, ac[:lagHi+2], firstLag)
			k, peak := fundamentalPeak(ac, lagLo, lagHi)
			if k < 0 {
				continue
			}
			dist := math.Abs(row+slope*(mid-pivot)-abRow) / perV // at the band's middle
			bands = append(bands, band{row: row, slope: slope, score: peak, eff: peak - colPriorWeight*dist, amp: amp, lag: k})
		}
	}
	if len(bands) == 0 {
		return Column{}, false
	}
	// A band in air or in a flat border repeats faint texture (noise,
	// compression blocks, burned-in text) that correlates as well as bone
	// does: only bands whose detrended profile varies at least
	// colMinAmpShare as much as the most varied band's may be the column.
	// Of those, the best-scoring band sets the column's direction; across
	// it, the column is where the repeat is strongest (the vertebral
	// bodies, not the rib heads or spinous processes beside them that
	// repeat with the same period but less contrast), among the bands
	// that score nearly as well.
	maxAmp := 0.0
	for _, b := range bands {
		maxAmp = math.Max(maxAmp, b.amp)
	}
	top := band{eff: math.Inf(-1)}
	for _, b := range bands {
		if b.amp >= colMinAmpShare*maxAmp && b.eff > top.eff {
			top = b
		}
	}
	pick := top
	for _, b := range bands {
		if b.amp >= colMinAmpShare*maxAmp && b.slope == top.slope && b.eff >= top.eff-colNearScore && b.amp*b.score > pick.amp*pick.score {
			pick = b
		}
	}
	if !g.bandProfile(pick.row, pick.slope, pivot, half, prof) {
		return Column{}, false
	}
	detrend(prof, win, trend)
	dir := Point{u.X + pick.slope*n.X, u.Y + pick.slope*n.Y}
	dir = scaled(dir, 1/norm(dir))
	foot := addScaled(addScaled(origin, u, colBeforeV*v0), n, pick.row*cell)
	col := Column{Score: pick.score, Carina: foot, Dir: dir, Period: math.Hypot(1, pick.slope) * cell}
	correlations(prof, ac, 0)
	col.Period *= refinePeriod(ac, pick.lag)
	col.V = col.Period * ColumnVertebraFactor
	return col, true
}

// detrend subtracts a moving average over win samples and then the mean
// from p in place (trend is scratch of the same length) and returns the
// sum of squares of what is left.
func detrend(p []float64, win int, trend []float64) (ss float64) {
	movingAverage(p, win, trend)
	var m float64
	for i := range p {
		p[i] -= trend[i]
		m += p[i]
	}
	m /= float64(len(p))
	for i := range p {
		p[i] -= m
		ss += p[i] * p[i]
	}
	return ss
}

// correlations writes into ac[k] the Pearson correlation of p[0:n-k] with
// p[k:n] for every k from first to len(ac)-1 (0 where fewer than 4 pairs
// remain), and 0 below first.
func correlations(p, ac []float64, first int) {
	n := len(p)
	for k := range first {
		ac[k] = 0
	}
	for k := first; k < len(ac); k++ {
		m := n - k
		if m < 4 {
			ac[k] = 0
			continue
		}
		var sx, sy, sxx, syy, sxy float64
		for i := range m {
			x, y := p[i], p[i+k]
			sx += x
			sy += y
			sxx += x * x
			syy += y * y
			sxy += x * y
		}
		fm := float64(m)
		cov := sxy - sx*sy/fm
		vx, vy := sxx-sx*sx/fm, syy-sy*sy/fm
		if vx <= 0 || vy <= 0 {
			ac[k] = 0
			continue
		}
		ac[k] = cov / math.Sqrt(vx*vy)
	}
}

// fundamentalPeak is the lag of the column's period in ac at lags
// lo..hi, and its correlation; -1 when ac has no positive local maximum
// there. A periodic profile correlates at every multiple of its period,
// so the highest local maximum may be the second or third: where a local
// maximum within 10 % of a half or a third of the highest one's lag
// reaches colSubharmonic of its height, the shortest such is the period.
func fundamentalPeak(ac []float64, lo, hi int) (int, float64) {
	k, best := -1, 0.0
	for i := max(lo, 1); i <= hi && i+1 < len(ac); i++ {
		if isPeak(ac, i) && ac[i] > best {
			k, best = i, ac[i]
		}
	}
	if k < 0 {
		return -1, 0
	}
	for _, m := range []float64{3, 2} {
		c := float64(k) / m
		for i := max(1, int(math.Floor(c*0.9))); float64(i) <= c*1.1 && i+1 < len(ac); i++ {
			if isPeak(ac, i) && ac[i] >= colSubharmonic*best {
				return i, ac[i]
			}
		}
	}
	return k, best
}

// isPeak reports whether ac[i] is a positive local maximum.
func isPeak(ac []float64, i int) bool { return ac[i] > 0 && ac[i] > ac[i-1] && ac[i] >= ac[i+1] }

// refinePeriod refines the period at lag k of ac between samples: a
// parabola through each multiple m*k (m = 1, 2, 3, where ac has a
// positive local maximum within a sample of it) gives its position p_m,
// and the period is the least-squares fit sum(m p_m) / sum(m^2), in
// samples.
func refinePeriod(ac []float64, k int) float64 {
	var num, den float64
	for m := 1; m <= 3; m++ {
		c := m * k
		// the local maximum nearest m*k
		j := -1
		for _, d := range []int{0, -1, 1, -2, 2} {
			i := c + d
			if i >= 1 && i+1 < len(ac) && ac[i] >= ac[i-1] && ac[i] >= ac[i+1] && ac[i] > 0 {
				j = i
				break
			}
		}
		if j < 0 {
			if m == 1 {
				return float64(k)
			}
			break
		}
		num += float64(m) * parabolaPeak(ac, j)
		den += float64(m * m)
	}
	return num / den
}

// parabolaPeak is the position, between samples, of the vertex of the
// parabola through ac[j-1], ac[j] and ac[j+1]: j itself where they do
// not bend downwards.
func parabolaPeak(ac []float64, j int) float64 {
	pos := float64(j)
	if den := ac[j-1] - 2*ac[j] + ac[j+1]; den < 0 {
		pos += 0.5 * (ac[j-1] - ac[j+1]) / den
	}
	return pos
}

func addScaled(p, d Point, f float64) Point { return Point{p.X + f*d.X, p.Y + f*d.Y} }
