package learn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The split policy (docs/learning.md "Split"): cases are grouped by
// patient hash, so one patient's cases are all on one side; groups are
// shuffled with the run's seed and held out until HoldOut of the cases
// are. Below MinCases cases, or with fewer than MinHeldOut held-out
// cases, a run refuses to start: a smaller held-out set cannot show a
// gain with the bootstrap rule, and k-fold cross-validation would need
// one full fine-tune per fold (hours on a 2-core clinic computer) while
// still not measuring the model that would be promoted.
const (
	// HoldOut is the share of the pool's cases held out for evaluation.
	HoldOut = 0.25
	// MinCases is the smallest pool a run starts on.
	MinCases = 40
	// MinHeldOut is the fewest held-out cases a run evaluates on.
	MinHeldOut = 10
)

// ErrPoolTooSmall means the pool cannot be split into enough training
// and held-out cases (the error says which minimum failed).
var ErrPoolTooSmall = errors.New("the pool is too small to learn from")

// Split divides cases into a training and a held-out set grouped by
// patient (cases without a patient hash are their own group), holding
// out about holdOut of the cases. The same cases and seed give the same
// split.
func Split(cases []Case, holdOut float64, seed uint64) (train, held []Case, err error) {
	if len(cases) < MinCases {
		return nil, nil, fmt.Errorf("%w: it has %d cases, a run needs at least %d (import more corrected cases)", ErrPoolTooSmall, len(cases), MinCases)
	}
	groups := map[string][]Case{}
	var keys []string
	for _, c := range cases {
		k := c.Patient
		if k == "" {
			k = "case:" + c.Stem
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	slices.Sort(keys)
	r := rand.New(rand.NewPCG(seed, 0x6c6561726e))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	want := int(math.Round(holdOut * float64(len(cases))))
	for _, k := range keys {
		// A patient too large to fit stays in training, so the held-out
		// share stays near holdOut.
		if len(held) < want && len(held)+len(groups[k]) <= want+want/2 {
			held = append(held, groups[k]...)
		} else {
			train = append(train, groups[k]...)
		}
	}
	if len(held) < MinHeldOut || len(held) < want/2 || len(train) == 0 {
		return nil, nil, fmt.Errorf("%w: grouped by patient, %d cases in %d patients leave %d held out and %d to train on; a run needs at least %d held out and some to train on (the pool has too few distinct patients)",
			ErrPoolTooSmall, len(cases), len(keys), len(held), len(train), MinHeldOut)
	}
	return train, held, nil
}
